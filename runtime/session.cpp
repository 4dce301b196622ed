#include "runtime/session.h"

#include "hw/common/timing.h"
#include "runtime/kv/placement.h"

namespace ahbm {

std::string Step::label() const {
  return phase == PhaseType::decode ? std::string("decode[") + std::to_string(index) + "]" : phase_name(phase);
}

uint64_t kv_page_bytes(const Scenario& sc, int groups) {
  const uint64_t heads_per_group = ceil_div(uint64_t(sc.model.num_kv_heads), uint64_t(groups));
  return uint64_t(sc.kv.page_tokens) * uint64_t(sc.model.head_dim) * 2 * dtype_bytes(sc.model.dtype) *
         uint64_t(sc.model.layers) * heads_per_group;
}

AgentSession::AgentSession(const Scenario& sc, KvPageManager& kv, bool share) : sc_(sc), kv_(kv), share_(share) {}

void AgentSession::run(const std::function<void(const Step&)>& on_step) {
  const int prefix_pages = int(ceil_div(uint64_t(sc_.shared_prefix_tokens), uint64_t(sc_.kv.page_tokens)));
  const PlacePage prefix = prefix_placer(sc_.kv.prefix_placement, prefix_pages);
  BalancedPlacer balanced;
  const PlacePage after_fork = [&balanced](const KvPageManager& kv, SeqId s) { return balanced(kv, s); };

  StepAgent main;
  main.name = kMainAgentName;
  main.seq = kv_.create();
  const PhaseSpec* prefill = sc_.phase(PhaseType::prefill);
  const int computed = prefill ? prefill->tokens : 0;
  kv_.append(main.seq, tensor_origin_prefix(), sc_.shared_prefix_tokens - computed, prefix);
  if (prefill) {
    kv_.append(main.seq, tensor_origin_prefix(), computed, prefix);
    main.origin = tensor_origin_prefix();
    main.length = kv_.length(main.seq);
    main.new_tokens = computed;
    on_step(Step{PhaseType::prefill, 0, {main}});
  }

  std::vector<StepAgent> branches;
  for (size_t a = 0; a < sc_.agents.size(); ++a) {
    StepAgent b;
    b.name = sc_.agents[a].name;
    b.agent = int(a);
    b.origin = int(a);
    b.seq = share_ ? kv_.fork(main.seq) : kv_.fork_copy(main.seq, after_fork);
    kv_.append(b.seq, b.origin, sc_.agents[a].new_tokens, after_fork);
    b.length = kv_.length(b.seq);
    b.new_tokens = sc_.agents[a].new_tokens;
    branches.push_back(b);
  }
  on_step(Step{PhaseType::fanout, 0, branches});

  if (const PhaseSpec* decode = sc_.phase(PhaseType::decode)) {
    for (int s = 0; s < decode->steps; ++s) {
      Step step{PhaseType::decode, s, {}};
      for (StepAgent& b : branches) {
        const int budget = sc_.agents[size_t(b.agent)].decode_tokens;
        if (budget >= 0 && s >= budget) continue;  // finished
        kv_.append(b.seq, b.origin, 1, after_fork);
        b.length = kv_.length(b.seq);
        b.new_tokens = 1;
        step.agents.push_back(b);
      }
      if (step.agents.empty()) break;  // every branch has finished
      on_step(step);
    }
  }

  if (const PhaseSpec* join = sc_.phase(PhaseType::join)) {
    for (const StepAgent& b : branches) kv_.release(b.seq);
    main.origin = tensor_origin_main(sc_);
    kv_.append(main.seq, main.origin, join->tokens, after_fork);
    main.length = kv_.length(main.seq);
    main.new_tokens = join->tokens;
    on_step(Step{PhaseType::join, 0, {main}});
  }
}

}  // namespace ahbm
