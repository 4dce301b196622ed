#pragma once
// The scenario's "join" block (docs/scenarios.md, "Join phase with a strategy"): which strategy
// the runtime's join phase runs on the hardware, the sub-agents' results (inline or from a join
// input file such as traces/join/*.json), and the knobs of the hardware run: whether to run
// every strategy side by side, the host-side latency of one evidence fetch, and how many join
// tokens' query rows are simulated per prefill (the rest is extrapolated, docs/join.md).
#include <string>
#include <vector>

#include "runtime/join/plan.h"

namespace ahbm::join {

struct JoinSpec {
  JoinInput input;        // one result per scenario agent, in scenario agent order
  JoinOptions options;    // strategy, tokenizer, pointer, hierarchical, latent
  std::string results_file;  // "" when the results are inline
  bool compare = false;   // run every registered strategy side by side
  // Host-side latency of one evidence fetch (a retrieval or tool call outside the
  // accelerator, note 5.8); fetches are resolved one after another before the prefill.
  double evidence_fetch_ns = 50000.0;
  // Query rows of at most this many tokens per agent are simulated in one prefill; 0 = all.
  int max_simulated_tokens = 0;
  int64_t context_window = 0;  // tokens of the main model's window (reports); 0 = not given
};

// Reads `key` ("join") of the scenario object `r`. `agents` are the scenario's sub-agent names:
// every one needs exactly one result, matched by name. A relative results path is taken from
// the scenario file's directory.
JoinSpec read_join_spec(JsonReader& r, const std::string& key, const std::vector<std::string>& agents,
                        const JoinStrategyRegistry& reg);

// The block as resolved (summary config): strategy, where the results came from, the knobs.
Json to_json(const JoinSpec& spec);

}  // namespace ahbm::join
