#include "runtime/serve/request_log.h"

namespace ahbm::serve {

int RequestLog::open(int workflow, int round, int branch, int prefill_tokens, int decode_tokens, double ready_ns) {
  RequestRecord r;
  r.workflow = workflow;
  r.round = round;
  r.branch = branch;
  r.prefill_tokens = prefill_tokens;
  r.requested_tokens = decode_tokens;
  r.ready_ns = ready_ns;
  requests_.push_back(r);
  return int(requests_.size()) - 1;
}

void RequestLog::finish(int id, double at_ns, bool cancelled) {
  RequestRecord& r = requests_[size_t(id)];
  if (cancelled) r.cancelled = true;
  r.done_ns = at_ns;
  if (r.finished++ == 0) ++finished_;
}

void RequestLog::scheduled(int id, double at_ns) {
  RequestRecord& r = requests_[size_t(id)];
  if (r.scheduled_ns < 0) r.scheduled_ns = at_ns;
}

void RequestLog::token(int id, int record, double at_ns) {
  RequestRecord& r = requests_[size_t(id)];
  ++r.generated_tokens;
  if (r.first_token_ns < 0) r.first_token_ns = at_ns;
  r.last_token_ns = at_ns;
  WorkflowRecord& wr = workflows_[size_t(record)];
  ++wr.generated_tokens;
  if (wr.first_token_ns < 0) wr.first_token_ns = at_ns;
}

void RequestLog::admitted(int record, double at_ns, int pool) {
  workflows_[size_t(record)].admitted_ns = at_ns;
  workflows_[size_t(record)].slice = pool;
}

void RequestLog::move_to(ServeResult& r) {
  r.requests = std::move(requests_);
  r.workflows = std::move(workflows_);
}

}  // namespace ahbm::serve
