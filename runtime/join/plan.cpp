#include "runtime/join/plan.h"

#include <algorithm>
#include <set>

#include "hw/common/checked_math.h"

namespace ahbm::join {

JoinPlan make_join_plan(const JoinStrategyRegistry& reg, const std::string& strategy, const JoinInput& in,
                        const JoinOptions& opt, const ModelDims& model, int64_t prefix_tokens) {
  JoinPlan p;
  p.strategy = strategy;
  p.body = reg.get(strategy)(in, opt);
  for (const auto& s : p.body.segments) p.join_tokens = checked_add(p.join_tokens, s.tokens, "tokens of the join");
  p.main = prefill_shape(model, prefix_tokens, p.join_tokens);
  for (auto& r : p.body.reducers) {
    r.prefill = prefill_shape(model, prefix_tokens, r.input_tokens);
    r.decode_kv_read_bytes = decode_kv_read_bytes(model, r.prefill.context_tokens, r.output_tokens);
    r.kv_bytes = checked_mul(checked_add(r.input_tokens, r.output_tokens, "tokens of a branch"), model.kv_bytes_per_token(),
                             "KV bytes of a branch");
    p.reducer_input_tokens = checked_add(p.reducer_input_tokens, r.input_tokens, "reducer input tokens");
    p.reducer_output_tokens = checked_add(p.reducer_output_tokens, r.output_tokens, "reducer output tokens");
    p.reducer_max_input_tokens = std::max(p.reducer_max_input_tokens, r.input_tokens);
    p.reducer_kv_bytes = checked_add(p.reducer_kv_bytes, r.kv_bytes, "KV bytes of the reducers");
    p.reducer_attention_flops = checked_add(p.reducer_attention_flops, r.prefill.attention_flops, "attention FLOPs of the reducers");
  }
  for (const auto& f : p.body.fetches) p.evidence_tokens = checked_add(p.evidence_tokens, f.tokens, "evidence tokens");
  if (model.context_window > 0 && p.main.context_tokens > model.context_window)
    p.body.warnings.push_back(strategy + ": context after the join (" + std::to_string(p.main.context_tokens) +
                              " tokens) exceeds the context window (" + std::to_string(model.context_window) + ")");
  return p;
}

std::vector<JoinPlan> plan_all_strategies(const JoinStrategyRegistry& reg, const JoinInput& in,
                                          const JoinOptions& opt, const ModelDims& model,
                                          int64_t prefix_tokens) {
  std::vector<JoinPlan> out;
  for (const auto& name : reg.names()) out.push_back(make_join_plan(reg, name, in, opt, model, prefix_tokens));
  return out;
}

JoinFile parse_join_file(const Json& j, const std::string& file, const JoinStrategyRegistry& reg, SchemaRecorder* rec) {
  JoinFile f;
  JsonReader r(j, file);
  r.record_into(rec);
  f.name = r.string("name");
  if (f.name.empty()) r.fail("name", "must not be empty");
  f.description = r.string("description", "");
  if (r.has("model")) f.model = read_model_dims(r.object("model"));
  f.shared_prefix_tokens = r.integer("shared_prefix_tokens", 0, 0, kMaxTokens);
  f.input.evidence = read_evidence(r);
  std::set<std::string> names;
  for (JsonReader a : r.array_of_objects("agents", 1, 4096)) {
    const std::string name = a.string("name");
    if (name.empty() || !names.insert(name).second)
      a.fail("name", "\"" + name + "\" must be non-empty and unique among agents");
    f.input.agents.push_back(read_agent_result(a, name));
    a.finish();
  }
  if (r.has("join")) f.options = read_join_options(r.object("join"), reg);
  r.finish();
  validate_join(f.input, f.options, file);
  return f;
}

JoinFile load_join_file(const std::string& path, const JoinStrategyRegistry& reg) {
  return parse_join_file(load_json_file(path), path, reg);
}

Json join_input_schema(const std::vector<std::string>& probes) {
  if (probes.empty()) throw InputError("join-input schema: no probe files given");
  SchemaRecorder rec;
  for (const auto& p : probes) parse_join_file(load_json_file(p), p, builtin_join_strategies(), &rec);
  return rec.schema("ahbm-sim join input",
                    "A standalone join input: sub-agents' results, evidence and join options (docs/join.md). Generated "
                    "by `ahbm-sim schema join-input` from runtime/join/plan.cpp's reads.");
}

}  // namespace ahbm::join
