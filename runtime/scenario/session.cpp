#include "runtime/scenario/session.h"

#include "hw/common/base/timing.h"
#include "runtime/kv/placement.h"

namespace ahbm {

std::string Step::label() const {
  if (!part.empty()) return std::string(phase_name(phase)) + "." + part;
  return phase == PhaseType::decode ? std::string("decode[") + std::to_string(index) + "]" : phase_name(phase);
}

uint64_t kv_page_bytes(const Scenario& sc, int groups) {
  const uint64_t heads_per_group = ceil_div(uint64_t(sc.model.num_kv_heads), uint64_t(groups));
  return uint64_t(sc.kv.page_tokens) * uint64_t(sc.model.head_dim) * 2 * dtype_bytes(sc.model.dtype) *
         uint64_t(sc.model.layers_per_chip()) * heads_per_group;
}

std::string kv_page_layers_text(const Scenario& sc) {
  if (sc.model.parallel.pp == 1) return "model.layers";
  return std::to_string(sc.model.layers_per_chip()) + " layers (the largest pipeline stage's)";
}

AgentSession::AgentSession(const Scenario& sc, KvPageManager& kv, bool share) : sc_(sc), kv_(kv), share_(share) {}

AgentSession::AgentSession(const AgentSession& from, KvPageManager& kv)
    : sc_(from.sc_), kv_(kv), share_(from.share_), balanced_(from.balanced_), main_(from.main_),
      branches_(from.branches_) {}

void AgentSession::append(StepAgent& a, int tokens) {
  kv_.append(a.seq, a.origin, tokens, [this](const KvPageManager& kv, SeqId s) { return balanced_(kv, s); });
  a.length = kv_.length(a.seq);
  a.new_tokens = tokens;
}

StepAgent AgentSession::fork_parent(const std::string& name, int origin) {
  StepAgent b;
  b.name = name;
  b.origin = origin;
  b.seq = share_ ? kv_.fork(main_.seq)
                 : kv_.fork_copy(main_.seq, [this](const KvPageManager& kv, SeqId s) { return balanced_(kv, s); });
  b.length = kv_.length(b.seq);
  return b;
}

void AgentSession::release(const StepAgent& a) { kv_.release(a.seq); }

void AgentSession::release_branches() {
  for (const StepAgent& b : branches_) kv_.release(b.seq);
  branches_.clear();
}

void AgentSession::run(const OnStep& on_step) {
  run_until_join(on_step);
  const PhaseSpec* join = sc_.phase(PhaseType::join);
  if (!join || sc_.join) return;  // a strategy's join phase: runtime/run/join_phase.h
  Step step{PhaseType::join, 0, {}, ""};
  step.kv_since = kv_.writes();
  release_branches();
  main_.origin = tensor_origin_main(sc_);
  append(main_, join->tokens);
  step.agents = {main_};
  on_step(step);
}

void AgentSession::run_until_join(const OnStep& on_step) {
  const int prefix_pages = int(ceil_div(uint64_t(sc_.shared_prefix_tokens), uint64_t(sc_.kv.page_tokens)));
  const PlacePage prefix = prefix_placer(sc_.kv.prefix_placement, prefix_pages);

  main_ = StepAgent{};
  main_.name = kMainAgentName;
  main_.seq = kv_.create();
  const PhaseSpec* prefill = sc_.phase(PhaseType::prefill);
  const int computed = prefill ? prefill->tokens : 0;
  kv_.append(main_.seq, tensor_origin_prefix(), sc_.shared_prefix_tokens - computed, prefix, /*cached=*/true);
  if (prefill) {
    Step step{PhaseType::prefill, 0, {}, ""};
    step.kv_since = kv_.writes();
    kv_.append(main_.seq, tensor_origin_prefix(), computed, prefix);
    main_.origin = tensor_origin_prefix();
    main_.length = kv_.length(main_.seq);
    main_.new_tokens = computed;
    step.agents = {main_};
    on_step(step);
  }

  Step fanout{PhaseType::fanout, 0, {}, ""};
  fanout.kv_since = kv_.writes();
  branches_.clear();
  for (size_t a = 0; a < sc_.agents.size(); ++a) {
    StepAgent b = fork_parent(sc_.agents[a].name, int(a));
    b.agent = int(a);
    append(b, sc_.agents[a].new_tokens);
    branches_.push_back(b);
  }
  fanout.agents = branches_;
  on_step(fanout);

  if (const PhaseSpec* decode = sc_.phase(PhaseType::decode)) {
    for (int s = 0; s < decode->steps; ++s) {
      Step step{PhaseType::decode, s, {}, ""};
      step.kv_since = kv_.writes();
      for (StepAgent& b : branches_) {
        const int budget = sc_.agents[size_t(b.agent)].decode_tokens;
        if (budget >= 0 && s >= budget) continue;  // finished
        append(b, 1);
        step.agents.push_back(b);
      }
      if (step.agents.empty()) break;  // every branch has finished
      on_step(step);
    }
  }
}

}  // namespace ahbm
