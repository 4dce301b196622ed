#pragma once
// The serve engine's request log: every request's and workflow's record (engine.h RequestRecord,
// WorkflowRecord), written only through these events, so each field has one writer.
#include <vector>

#include "runtime/serve/engine.h"

namespace ahbm::serve {

class RequestLog {
 public:
  // A new request of `workflow` (round -1, branch -1: the parent's answer), ready at `ready_ns`;
  // returns its id.
  int open(int workflow, int round, int branch, int prefill_tokens, int decode_tokens, double ready_ns);
  // It ended at `at_ns` (`cancelled`: a "first" join went on without it).
  void finish(int id, double at_ns, bool cancelled = false);
  size_t finished() const { return finished_; }
  void tool_call(int id, double ns) { requests_[size_t(id)].tool_ns = ns; }
  void preempted(int id) { ++requests_[size_t(id)].preemptions; }
  // It is in a step starting at `at_ns`.
  void scheduled(int id, double at_ns);
  void add_energy(int id, double j) { requests_[size_t(id)].energy_j += j; }
  // A token of request `id` of workflow record `record` is out at `at_ns`.
  void token(int id, int record, double at_ns);
  double last_token_ns(int id) const { return requests_[size_t(id)].last_token_ns; }

  void add_workflow(WorkflowRecord r) { workflows_.push_back(std::move(r)); }
  void admitted(int record, double at_ns, int pool);
  void done(int record, double at_ns) { workflows_[size_t(record)].done_ns = at_ns; }
  void tool_wait(int record, double ns) { workflows_[size_t(record)].tool_wait_ns += ns; }
  // The record preemption rules update (preemptions, recomputed tokens, swapped bytes).
  WorkflowRecord& workflow(int record) { return workflows_[size_t(record)]; }

  // The records, moved out at the end of the run.
  void move_to(ServeResult& r);

 private:
  std::vector<RequestRecord> requests_;
  size_t finished_ = 0;  // requests finished (or cancelled): the progress line's count
  std::vector<WorkflowRecord> workflows_;
};

}  // namespace ahbm::serve
