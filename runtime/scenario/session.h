#pragma once
// Drives a scenario's phases over the paged KV cache (note §3.1, §3.6, §5.4) and hands out one
// step at a time, after that step's KV updates:
//   prefill  the parent ("main") computes the last `tokens` of the shared prefix (earlier ones
//            are already cached); without a prefill phase the whole prefix is cached.
//   fanout   every sub-agent forks the parent's page table and appends its private
//            instruction tokens; one step batches all of them.
//   decode   `steps` steps; each appends one token per live branch (a branch is live until it
//            has decoded its decode_tokens) and attends with exactly those tokens.
//   join     the branches finish (their pages are released); the parent continues on the
//            shared prefix with `tokens` new tokens of its own. With a "join" block the phase
//            runs the join strategy instead (runtime/run/join_phase.h) through the building blocks
//            below: reducers forked from the prefix, the join-input prefill, the continuation.
// Pages written before the fork follow the prefix placement, pages after it the balanced rule.
#include <functional>
#include <string>
#include <vector>

#include "runtime/kv/page_manager.h"
#include "runtime/kv/placement.h"
#include "runtime/scenario/scenario.h"

namespace ahbm {

// One agent's part in a step: its query rows sit at positions [length - new_tokens, length).
struct StepAgent {
  std::string name;
  int agent = -1;      // index into Scenario::agents; -1 for the parent
  int origin = 0;      // tensor owner id of its new tokens (see tensor_origin_*)
  SeqId seq = 0;
  int32_t length = 0;  // its sequence length after the step's appends
  int new_tokens = 0;
};

// Step::kv_since when the step writes no KV (probes, tools that plan a step on its own).
constexpr uint64_t kNoKvWrites = ~uint64_t(0);

struct Step {
  PhaseType phase = PhaseType::fanout;
  int index = 0;  // within the phase (decode: the step number)
  std::vector<StepAgent> agents;
  std::string part;  // a join strategy's sub-step ("reduce_prefill", "reduce_decode[3]", ...)
  // KvPageManager::writes() before the step's KV updates (forks, appends, copies): the KV
  // tokens its jobs' PEs write into their HBM slices are those written after it.
  uint64_t kv_since = kNoKvWrites;
  std::string label() const;  // "fanout", "decode[3]", "join.reduce_prefill"
};

// Tensor owners: the shared prefix (kSharedOwner = -1 in hw/common/contract/job.h), sub-agent i = i, the
// parent after the fork = number of sub-agents.
inline int tensor_origin_prefix() { return -1; }
inline int tensor_origin_main(const Scenario& sc) { return int(sc.agents.size()); }

using OnStep = std::function<void(const Step&)>;

class AgentSession {
 public:
  // share = false: the no-sharing baseline (each fork copies the parent's pages).
  AgentSession(const Scenario& sc, KvPageManager& kv, bool share = true);
  // `from`'s state (parent, branches, placement cursor) on `kv`, a copy of `from`'s page
  // manager: runs the same join again on its own copy (strategies side by side).
  AgentSession(const AgentSession& from, KvPageManager& kv);
  // Every phase; with a join block it stops before the join phase (the strategy's join is
  // run by runtime/run/join_phase.h with the building blocks below).
  void run(const OnStep& on_step);
  void run_until_join(const OnStep& on_step);  // prefill, fanout, decode

  // Building blocks of the join phase. Pages written now follow the balanced rule.
  const Scenario& scenario() const { return sc_; }
  KvPageManager& kv() { return kv_; }
  StepAgent& parent() { return main_; }
  const std::vector<StepAgent>& branches() const { return branches_; }
  void release_branches();                                  // the branches' tables
  StepAgent fork_parent(const std::string& name, int origin);  // a new branch, no tokens yet
  void append(StepAgent& a, int tokens);                    // sets length and new_tokens
  void release(const StepAgent& a);

 private:
  const Scenario& sc_;
  KvPageManager& kv_;
  bool share_;
  BalancedPlacer balanced_;
  StepAgent main_;
  std::vector<StepAgent> branches_;
};

// KV pages of one page slot: page_tokens x head_dim x (K, V) x storage bytes x layers x KV
// heads per group (the heads a group serves in turn all keep their KV on its PEs).
uint64_t kv_page_bytes(const Scenario& sc, int groups);
// The layer factor of kv_page_bytes as capacity messages name it: "model.layers", or for a
// pipelined model "N layers (the largest pipeline stage's)".
std::string kv_page_layers_text(const Scenario& sc);

}  // namespace ahbm
