#pragma once
// A serve workflow's lifecycle (docs/serving.md, "What a workflow does"): its parent's sequence at
// admission, a round's fan-out (each branch a fork of the parent's sequence), the branches' tool
// calls and ends, the join, the answer, the end. It acts on the workflow and its pool's pages,
// writes the request log, and tells its owner what the owner accounts for through
// LifecycleEvents (a P-B-D prompt prefilled, a workflow done).
#include "runtime/kv/page_manager.h"
#include "runtime/serve/flow.h"
#include "runtime/serve/request_log.h"

namespace ahbm::serve {

class LifecycleEvents {
 public:
  virtual ~LifecycleEvents() = default;
  // P-B-D: the prompt of `f`, in its prefill stage, is prefilled (its KV waits for a decode pool).
  virtual void prefilled(Flow& f) = 0;
  // `f` is done: its pages are back in its pool; what it held reserved there goes back too.
  virtual void done(Flow& f) = 0;
};

class Lifecycle {
 public:
  // `share_prefix`: scheduler.share_prefix (a branch forks the parent's pages, else copies them).
  Lifecycle(RequestLog& log, bool share_prefix, LifecycleEvents& events)
      : log_(log), share_prefix_(share_prefix), events_(events) {}

  // A new workflow admitted at `now`: its parent's sequence on `pages` with the cached part of
  // the prompt placed by `prefix`, its main request opened. `pipelined` (P-B-D): a prompt cached
  // whole waits for the buffer; else it goes on at once.
  void start(Flow& f, KvPageManager& pages, const PlacePage& prefix, double now, bool pipelined);
  // The parent has no work and no branch is out: the next round, the answer or the end.
  void advance(Flow& f, KvPageManager& pages, double now);
  // An agent finished its tokens at `now`: a parent goes on (P-B-D prefill: to the buffer), a
  // branch calls its tool or is done.
  void finish_agent(Flow& f, Agent& a, bool is_parent, KvPageManager& pages, double now);
  // A branch is done at `at_ns` (a tool call's end); a join it completes happens `now`.
  void branch_done(Flow& f, Agent& b, KvPageManager& pages, double at_ns, double now);

 private:
  void start_round(Flow& f, KvPageManager& pages, double now);
  void join(Flow& f, KvPageManager& pages, double now);

  RequestLog& log_;
  bool share_prefix_;
  LifecycleEvents& events_;
};

}  // namespace ahbm::serve
