#pragma once
// Serving schedulers (docs/serving.md): a policy decides in which order waiting workflows are
// admitted and admitted ones are put into the next step. Policies are registered by name in a
// SchedulerRegistry object (no global table), like the NoC models and join strategies. The
// engine (runtime/serve/engine.h) enforces the rest: admission only when the workflow's KV
// reservation fits the page pool, and at most scheduler.max_batch_tokens new tokens per step.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "runtime/serve/registry.h"

namespace ahbm::serve {

// What a policy sees of a workflow.
struct WorkflowView {
  int id = 0;
  double arrival_ns = 0;
  int64_t remaining_tokens = 0;  // tokens it still has to prefill and decode (known from the workload)
  int64_t reserved_pages = 0;    // its KV reservation (runtime/serve/engine.cpp, reservation)
};

struct SchedulerPolicy {
  std::string name, description;
  // Lower first; ties by workflow id (arrival order).
  std::function<double(const WorkflowView&)> key;
  // true: admission stops at the first waiting workflow that does not fit (strict order); false:
  // a later one that fits is admitted past it.
  bool head_of_line = true;
  static constexpr const char* kKind = "scheduler";
};

using SchedulerRegistry = Registry<SchedulerPolicy>;

// fcfs: arrival order, strict. srf: shortest remaining work (tokens) first, no head-of-line blocking.
SchedulerRegistry builtin_schedulers();

}  // namespace ahbm::serve
