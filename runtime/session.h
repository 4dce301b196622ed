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
//            shared prefix with `tokens` new tokens of its own (strategies: runtime/join/).
// Pages written before the fork follow the prefix placement, pages after it the balanced rule.
#include <functional>
#include <string>
#include <vector>

#include "runtime/kv/page_manager.h"
#include "runtime/scenario.h"

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

struct Step {
  PhaseType phase = PhaseType::fanout;
  int index = 0;  // within the phase (decode: the step number)
  std::vector<StepAgent> agents;
  std::string label() const;  // "fanout", "decode[3]"
};

// Tensor owners: the shared prefix (kSharedOwner = -1 in hw/chip/job.h), sub-agent i = i, the
// parent after the fork = number of sub-agents.
inline int tensor_origin_prefix() { return -1; }
inline int tensor_origin_main(const Scenario& sc) { return int(sc.agents.size()); }

class AgentSession {
 public:
  // share = false: the no-sharing baseline (each fork copies the parent's pages).
  AgentSession(const Scenario& sc, KvPageManager& kv, bool share = true);
  void run(const std::function<void(const Step&)>& on_step);

 private:
  const Scenario& sc_;
  KvPageManager& kv_;
  bool share_;
};

// KV pages of one page slot: page_tokens x head_dim x (K, V) x storage bytes x layers x KV
// heads per group (the heads a group serves in turn all keep their KV on its PEs).
uint64_t kv_page_bytes(const Scenario& sc, int groups);

}  // namespace ahbm
