#include "runtime/serve/scheduler.h"

#include <stdexcept>

#include "hw/common/error.h"
#include "hw/common/json_reader.h"

namespace ahbm::serve {

void SchedulerRegistry::add(SchedulerPolicy p) {
  for (const SchedulerPolicy& q : list_)
    if (q.name == p.name) throw std::logic_error("scheduler \"" + p.name + "\" registered twice");
  list_.push_back(std::move(p));
}

const SchedulerPolicy& SchedulerRegistry::get(const std::string& name, const std::string& where) const {
  for (const SchedulerPolicy& p : list_)
    if (p.name == name) return p;
  std::string known;
  for (const std::string& n : names()) known += (known.empty() ? "" : ", ") + n;
  const std::string near = closest_name(name, names());
  throw InputError(where + ": unknown scheduler \"" + name + "\" (allowed: " + known + ")" +
                   (near.empty() ? "" : "; did you mean \"" + near + "\"?"));
}

std::vector<std::string> SchedulerRegistry::names() const {
  std::vector<std::string> out;
  for (const SchedulerPolicy& p : list_) out.push_back(p.name);
  return out;
}

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
