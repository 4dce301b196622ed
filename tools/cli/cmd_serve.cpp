#include <cmath>
#include <iostream>

#include "hw/common/base/error.h"
#include "hw/common/config/hw_config_override.h"
#include "runtime/io/output_dir.h"
#include "runtime/serve/engine.h"
#include "runtime/serve/scheduler.h"
#include "runtime/serve/serve_report.h"
#include "runtime/serve/workload.h"
#include "tools/cli/commands.h"
#include "tools/cli/interrupt.h"
#include "tools/cli/options.h"

namespace po = boost::program_options;

namespace ahbm::cli {

int cmd_serve(int argc, char** argv, SimulatorPool* sims) {
  po::options_description desc(
      "usage: ahbm-sim serve WORKLOAD.json --out DIR [--hw HW.json] [--set KEY=VALUE ...] [options]\n\n"
      "Serves many workflows (agentic fan-out/join rounds and plain requests) arriving over time on one\n"
      "chip, timing only, and writes into DIR (docs/serving.md):\n"
      "  summary.json  TTFT, TPOT, end-to-end, queueing and tool time (p50/p90/p99) per request and per\n"
      "                workflow, throughput, SLO attainment, KV occupancy, batch sizes, steps simulated\n"
      "                and reused\n"
      "  requests.csv  one row per request with its timestamps\n"
      "  trace.json    steps and workflows as slices; KV pages, queue length and batch size as counter\n"
      "                tracks (ui.perfetto.dev)\n"
      "A workload's scheduler.pbd block splits the chip's KV-head groups into a prefill pool and a decode\n"
      "pool with a bounded buffer between them (P-B-D; summary.json \"pbd\").\n"
      "DIR is written all or nothing. On a terminal, stderr shows the workflows finished so far, the\n"
      "simulated time and an ETA (not with -q; -v: a line per tenth of the workflows, terminal or not).\n\noptions");
  std::string workload, out, hw, noc, scheduler, seed, rate, gemm_mapping, stop_at;
  std::vector<std::string> overrides;
  desc.add_options()
      ("help,h", "show this help")
      ("workload", po::value<std::string>(&workload), "workload JSON (positional; docs/serving.md)")
      ("out,o", po::value<std::string>(&out), "output directory (required)")
      ("hw", po::value<std::string>(&hw), "hardware config JSON (default: built-in defaults = hw/configs/default.json)")
      ("noc", po::value<std::string>(&noc), "NoC model (overrides the hw config's noc.model)")
      ("scheduler", po::value<std::string>(&scheduler),
       "scheduler policy (overrides the workload's scheduler.policy): fcfs or srf")
      ("seed", po::value<std::string>(&seed), "workload seed (overrides its \"seed\"), 0 to 2^63-1")
      ("rate-per-s", po::value<std::string>(&rate),
       "Poisson arrival rate (overrides arrival.rate_per_s; a rate sweep), in [1e-6, 1e12]")
      ("gemm-mapping", po::value<std::string>(&gemm_mapping),
       "whole model: the weight GEMMs' dataflow, w_stationary (default) or x_stationary (as ahbm-sim run's; "
       "docs/models.md)")
      ("sampling", "sampled serving: the workload's \"sampling\" block, or its defaults when it has none; steps "
                   "simulated in detail or predicted, headline metrics with 95% intervals (docs/serving.md, "
                   "\"Sampled serving\")")
      ("stop-at-s", po::value<std::string>(&stop_at),
       "stop at the first step boundary at or after this simulated time, in seconds (a window of a long trace; "
       "sampled serving's replays stop there too); summary.json says \"partial\", exit 0. In [1e-9, 1e9]")
      ("vcd", "also write waves.vcd: trace.json's counter tracks (KV pages, queue, batch, busy; P-B-D: buffer, "
              "pools, transfers) as VCD signals");
  add_set_option(desc, overrides);
  const std::optional<po::variables_map> parsed = parse_command_line(argc, argv, desc, "workload");
  if (!parsed) return 0;
  const po::variables_map& vm = *parsed;
  if (workload.empty()) throw UsageError("missing WORKLOAD.json");
  if (out.empty()) throw UsageError("missing --out DIR");
  if (vm.count("noc")) NocRegistry::with_builtin_models().get(noc, "command line", "--noc");
  if (vm.count("scheduler")) serve::builtin_schedulers().get(scheduler, "--scheduler");
  const GemmMapping mapping =
      vm.count("gemm-mapping") ? gemm_mapping_from_name(gemm_mapping, "--gemm-mapping") : GemmMapping::w_stationary;
  OutputTarget target(out, OutputKind::directory);  // every --out problem fails here, before simulating
  serve::Workload w = serve::load_workload(workload);
  serve::WorkloadOverrides changes;
  if (vm.count("seed")) changes.seed = parse_uint_option("seed", seed, 0, uint64_t(INT64_MAX));
  if (vm.count("rate-per-s")) changes.rate_per_s = parse_double_option("rate-per-s", rate, 1e-6, 1e12);
  changes.scheduler = scheduler;
  changes.sampling = vm.count("sampling") > 0;
  serve::apply_overrides(w, changes, "command line");
  HwConfig cfg = load_hw_config(hw, overrides);
  serve::ServeOptions opt;
  if (!hw.empty()) opt.hw_file = hw;
  if (!noc.empty()) cfg.noc.model = noc;
  opt.scheduler = scheduler;
  opt.sims = sims;
  opt.gemm_mapping = mapping;
  if (vm.count("stop-at-s")) opt.stop_at_ns = parse_double_option("stop-at-s", stop_at, 1e-9, 1e9) * 1e9;
  report::ProgressLine progress = stderr_progress(verbosity_of(*parsed));
  int replay_shown = 0;
  if (progress.active())
    opt.progress = [&progress, &replay_shown](const serve::ServeProgress& p) {
      if (p.replay != replay_shown) {  // sampled serving: a line as each replay starts
        replay_shown = p.replay;
        progress.note("serve: replay " + std::to_string(p.replay) + "/" + std::to_string(p.replays) +
                      " (the 95% intervals of sampled serving)");
      }
      if (!progress.due(double(p.workflows_done), double(p.workflows))) return;
      progress.update(double(p.workflows_done), double(p.workflows),
                      "serve: " + std::to_string(p.workflows_done) + "/" + std::to_string(p.workflows) +
                          " workflows | " + std::to_string(p.requests_done) + " requests done | " +
                          std::to_string(p.steps) + " steps | " + report::time_text(p.now_ns) + " simulated");
    };
  // Ctrl-C stops the run at the next step boundary; what was simulated is written, marked partial.
  const InterruptScope interrupt;
  opt.stop_requested = [&interrupt] { return interrupt.requested(); };
  const serve::ServeResult r = serve::serve(w, cfg, opt);
  progress.clear();
  const serve::ServeSummary summary = serve::serve_summary(w, cfg, r);
  serve::write_serve_files(target, summary, r, vm.count("vcd") > 0);
  const report::Distribution& ttft = summary.requests.ttft;
  std::cout << "workload " << w.name << ": " << r.workflows.size() << " workflows, " << r.requests.size()
            << " requests, scheduler " << r.scheduler << "; " << r.steps.size() << " steps (" << r.steps_simulated
            << " simulated, " << r.steps_reused << " reused); served in " << report::time_text(r.end_ns) << "\n";
  if (ttft.count > 0)
    std::cout << "TTFT p50/p99 " << report::time_text(ttft.p50) << " / " << report::time_text(ttft.p99) << "; throughput "
              << summary.throughput.tokens_per_s << " tokens/s\n";
  if (summary.sampling) {
    const serve::SamplingSummary& sm = *summary.sampling;
    std::cout << "sampled: " << sm.detailed << " of " << sm.steps << " steps simulated in detail ("
              << std::lround(1000.0 * sm.detailed_fraction) / 10.0 << "%)";
    if (sm.replays > 0 && ttft.count > 0)
      for (const serve::MetricInterval& m : sm.metrics)
        if (m.name == "requests.ttft_p50_ns")
          std::cout << "; TTFT p50 95% interval " << report::time_text(m.low) << " .. " << report::time_text(m.high)
                    << " (" << sm.replays << " replays)";
    std::cout << "\n";
  }
  if (r.partial)
    std::cout << (r.interrupted ? "interrupted: " : "stopped at --stop-at-s: ") << summary.partial->workflows_finished
              << " of " << summary.partial->workflows << " workflows finished; summary.json says \"partial\"\n";
  std::cout << "outputs in " << out << "\n";
  check_stdout();
  target.commit();
  return r.interrupted ? 130 : 0;  // 128 + SIGINT, as a shell reports a run stopped by Ctrl-C
}

}  // namespace ahbm::cli
