// ahbm::serve::serve: exact mode (one engine run, every step simulated) or, for a workload with a
// "sampling" block, sampled serving (sampling.h; docs/serving.md, "Sampled serving"): one run
// whose steps are simulated in detail or predicted, then the replays behind the confidence
// intervals (replay 0 the unperturbed reference, 1..K perturbed), each reduced to its headline
// metrics at once (a replay's records are not kept).
#include "runtime/serve/engine.h"
#include "runtime/serve/pools.h"
#include "runtime/serve/serve_summary.h"

namespace ahbm::serve {

ServeResult serve(const Workload& w, const HwConfig& hw, const ServeOptions& opt) {
  if (!w.sampling) return run_engine(w, hw, opt, nullptr);
  StepSampler sampler(*w.sampling);
  ModelPlans plans;  // the replays reuse the sampled run's plans and its operators' runs
  ServeResult r = run_engine(w, hw, opt, &sampler, &plans);
  // Interrupted: no replays. Stopped at a simulated time: each replay stops there too.
  if (w.sampling->replays == 0 || r.interrupted) return r;
  ServeOptions replay_opt = opt;
  for (int k = 0; k <= w.sampling->replays; ++k) {
    if (opt.progress)  // the replays' own line: "replay 3/9"
      replay_opt.progress = [&opt, k, n = w.sampling->replays + 1](const ServeProgress& p) {
        ServeProgress q = p;
        q.replay = k + 1;
        q.replays = n;
        opt.progress(q);
      };
    StepSampler replay = sampler.replay(k);
    const ServeResult again = run_engine(w, hw, replay_opt, &replay, &plans);
    r.sampling->replays.push_back(headline_metrics(serve_summary(w, hw, again)));
  }
  return r;
}

}  // namespace ahbm::serve
