// Preemption by recompute: the KV a preempted workflow drops (its parent's sequence, the running
// branches' own tokens) is added to their prefill; readmitted, its parent starts an empty
// sequence whose prefill runs in its next step, and its branches fork after it (fork_pending).
#include "runtime/serve/preemption.h"

namespace ahbm::serve {

namespace {

class RecomputePreemption final : public PreemptionRule {
 public:
  void preempt(Flow& f, const KvPageManager& pages, int parent_tokens, PreemptionSink& out,
               PreemptionEvent& e) const override {
    int64_t tokens = parent_tokens;
    f.parent.prefill_left += parent_tokens;
    if (f.in_round && !f.fork_pending)
      for (Agent& b : f.branches)
        if (b.state == AgentState::run) {
          const int own = pages.length(b.sa.seq) - parent_tokens;
          b.prefill_left += own;
          tokens += own;
        }
    f.fork_pending = f.in_round;
    f.remaining += tokens;
    out.result.recomputed_tokens += tokens;
    out.record.recomputed_tokens += tokens;
    e.tokens = tokens;
  }

  void readmit(Flow&, KvPageManager&, PreemptionSink&, PreemptionEvent&) const override {}
};

}  // namespace

PreemptionEntry recompute_preemption() {
  return {"recompute", "a preempted workflow's KV is dropped and prefilled again when it is readmitted",
          std::make_shared<RecomputePreemption>()};
}

}  // namespace ahbm::serve
