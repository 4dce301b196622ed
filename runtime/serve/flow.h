#pragma once
// The serve engine's state of a workflow (runtime/serve/engine.cpp): its parent and branches
// (agents) with the work each has left, where it is (pool, P-B-D stage) and its pages. Owned by
// the engine; the policies (admission, preemption, topology) and the workflow lifecycle act on it.
#include <cstdint>
#include <vector>

#include "runtime/kv/page_manager.h"
#include "runtime/kv/placement.h"
#include "runtime/serve/workload.h"
#include "runtime/scenario/session.h"

namespace ahbm::serve {

enum class AgentState { run, tool, done };

// A parent or a branch of a workflow, with the work it has left.
struct Agent {
  StepAgent sa;
  int request = -1;     // index into ServeResult::requests
  int prefill_left = 0;  // tokens to prefill in its next step
  int decode_left = 0;
  AgentState state = AgentState::run;
  double tool_until = 0;
  int swapped_tokens = 0;  // preempted by swap: its own tokens' KV, in host memory until readmission
  bool has_work() const { return state == AgentState::run && (prefill_left > 0 || decode_left > 0); }
};

// Where a workflow is. Co-located, every admitted workflow is `decode` (its pool does all its
// steps). P-B-D: `prefill` on the prefill pool (its prompt), `buffered` (prefilled, its KV still
// on the prefill pool), `transfer` (pulled, its KV on its way), `decode` on the decode pool.
enum class Stage { prefill, buffered, transfer, decode };

struct Flow {
  const WorkflowSpec* spec = nullptr;
  int record = 0;
  bool arrived = false, admitted = false, done = false;
  Agent parent;
  std::vector<Agent> branches;
  int round = 0;  // next round to fan out
  bool in_round = false, answering = false;
  int branches_done = 0;
  int64_t reserved = 0;  // its reservation where it decodes (reservation())
  int64_t held = 0;      // pages it holds reserved in its current pool
  int64_t remaining = 0;  // tokens left to prefill and decode
  int pool = 0;           // the pool holding its KV and running its steps
  Stage stage = Stage::decode;
  SeqId prefill_seq = -1;  // P-B-D, in transfer: its prompt's pages on the prefill pool
  // P-B-D: its prompt's prefill step, from the end of the boundary's swaps (its compute time
  // only), and when it entered the buffer: the per-layer migration's times.
  double prefill_start_ns = 0, prefill_ns = 0, buffered_at_ns = -1;
  // Pages after the prompt: the least-loaded PE, ties broken by the workflow's own cursor (as a
  // run's session): a workflow alone on the chip places its pages the same wherever it runs.
  BalancedPlacer placer;
  // KvPageManager::writes() after the last step it took part in: its next step is charged the
  // KV written since (its appends, copy-on-write copies, a no-sharing round's fork copies).
  uint64_t kv_since = 0;
  // on_demand admission, preempted by recompute in a round: its branches fork the parent again
  // once the parent's sequence is prefilled again (until then the parent alone has work).
  bool fork_pending = false;
  bool started = false;  // admitted once (a later admission restores a preempted workflow)
};

// Distinct pages the workflow's sequences hold on `pages` (its pool's); `running_only`: its
// parent's and those of the branches still on the chip (a branch in a tool call or done never
// reads its KV again).
int64_t pages_held(const Flow& f, const KvPageManager& pages, bool running_only);

}  // namespace ahbm::serve
