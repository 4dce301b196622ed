#pragma once
// Serve preemption rules (docs/serving.md, "Admission on demand and preemption"): what happens to
// a preempted workflow's KV and how it comes back when readmitted. The engine does what every
// rule shares (counting, releasing the sequences, the event's pages); a rule does the rest, on
// the workflow and its pool's pages only. One small class per rule, each in its own file
// (preemption_<name>.cpp), registered by one line in builtin_preemption_rules().
#include <cstdint>
#include <memory>
#include <string>

#include "hw/common/config/hw_config.h"
#include "runtime/kv/page_manager.h"
#include "runtime/serve/engine.h"
#include "runtime/serve/flow.h"
#include "runtime/serve/registry.h"

namespace ahbm::serve {

// What a rule may change besides the workflow: the run's preemption totals, the workflow's
// record, the swaps queued at its pool's step boundary.
struct PreemptionSink {
  PreemptionResult& result;
  WorkflowRecord& record;
  double& swap_pending_ns;
  uint64_t& swap_pending_bytes;
  const HostConfig& host;
};

class PreemptionRule {
 public:
  static constexpr const char* kKind = "preemption rule";
  virtual ~PreemptionRule() = default;
  // `f` is preempted; its sequences on `pages` are still live (the engine releases them after).
  // `parent_tokens`: its parent's sequence length. Fills `e` (tokens, bytes, ns).
  virtual void preempt(Flow& f, const KvPageManager& pages, int parent_tokens, PreemptionSink& out,
                       PreemptionEvent& e) const = 0;
  // `f` is admitted again, its parent's new sequence created on `pages` and empty: it restores
  // what preempt() kept; `e` is the restore event (at_ns, workflow, restore set).
  virtual void readmit(Flow& f, KvPageManager& pages, PreemptionSink& out, PreemptionEvent& e) const = 0;
};

using PreemptionEntry = PolicyEntry<PreemptionRule>;
using PreemptionRegistry = Registry<PreemptionEntry>;

// recompute: the dropped KV is prefilled again; swap: it goes to host memory and back.
PreemptionRegistry builtin_preemption_rules();

}  // namespace ahbm::serve
