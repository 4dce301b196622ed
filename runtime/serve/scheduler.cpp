#include "runtime/serve/scheduler.h"

namespace ahbm::serve {

SchedulerRegistry builtin_schedulers() {
  SchedulerRegistry r;
  r.add({"fcfs", "first come, first served: admission and batching in arrival order; a workflow that does not fit "
                 "the KV pool blocks the ones behind it",
         [](const WorkflowView& w) { return w.arrival_ns; }, true});
  r.add({"srf", "shortest remaining first: the workflow with the fewest tokens left to prefill and decode goes "
                "first; one that does not fit the KV pool is passed over, not waited for",
         [](const WorkflowView& w) { return double(w.remaining_tokens); }, false});
  return r;
}

}  // namespace ahbm::serve
