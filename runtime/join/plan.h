#pragma once
// The join plan: what a strategy turns the sub-agents' results into, with the closed-form
// cost of the main agent's continuation prefill and of the reducers, as data the runtime's
// join phase hands to the hardware (docs/join.md, "Hardware integration").
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/join/strategy.h"

namespace ahbm::join {

struct JoinPlan {
  std::string strategy;
  JoinBody body;             // segments, reducer tasks, evidence fetches, warnings
  int64_t join_tokens = 0;   // join-input tokens: sum of the segments' tokens
  // The main agent's continuation prefill: join_tokens on top of the shared prefix (its page
  // table becomes shared prefix pages + join-input pages + continuation pages, note 5.4).
  PrefillShape main;
  // Reducer work (hierarchical only; zero otherwise). Reducers run in parallel, so the
  // longest one (max input) is on the critical path of the fan-in.
  int64_t reducer_input_tokens = 0;
  int64_t reducer_output_tokens = 0;
  int64_t reducer_max_input_tokens = 0;
  int64_t reducer_kv_bytes = 0;         // private KV of all reducers, released after the join
  int64_t reducer_attention_flops = 0;  // prefill of all reducers
  int64_t evidence_tokens = 0;          // tokens of evidence materialised (pointer only)
  // Filled by the runtime from simulation; absent (null in JSON, empty in CSV) until then:
  // latency of the main agent's continuation prefill, and the whole fan-in (reducers and
  // evidence retrieval, then the continuation prefill).
  std::optional<double> continuation_prefill_ns;
  std::optional<double> fan_in_ns;
  std::optional<double> fan_in_energy_j, join_energy_j;  // on the hardware: fan-in; fan-in + continuation
};

// Runs `strategy` and completes the plan with the closed forms of shape.h. `prefix_tokens`
// is the main agent's context before the join (the shared prefix); reducers fork from it too.
JoinPlan make_join_plan(const JoinStrategyRegistry& reg, const std::string& strategy, const JoinInput& in,
                        const JoinOptions& opt, const ModelDims& model, int64_t prefix_tokens);
// Every registered strategy on the same input, in registration order (side by side).
std::vector<JoinPlan> plan_all_strategies(const JoinStrategyRegistry& reg, const JoinInput& in,
                                          const JoinOptions& opt, const ModelDims& model,
                                          int64_t prefix_tokens);

// A stand-alone join input file (format in docs/join.md): model dims and shared prefix
// length as the runtime scenario gives them, the evidence store, the agents' results and
// the "join" options block.
struct JoinFile {
  std::string name;
  std::string description;
  ModelDims model;
  int64_t shared_prefix_tokens = 0;
  JoinInput input;
  JoinOptions options;
};

// `rec` (optional) records every field the parser reads (hw/common/base/json_reader.h SchemaRecorder).
JoinFile parse_join_file(const Json& j, const std::string& file, const JoinStrategyRegistry& reg,
                         SchemaRecorder* rec = nullptr);
JoinFile load_join_file(const std::string& path, const JoinStrategyRegistry& reg);
// The join input file's JSON Schema, generated from parse_join_file's reads over `probes`.
Json join_input_schema(const std::vector<std::string>& probes);

}  // namespace ahbm::join
