// Closed forms of the join plan (continuation-prefill shape, KV bytes, decode reads) and the
// join reports (JSON, table, CSV).
#include <gtest/gtest.h>

#include <sstream>

#include "runtime/join/report.h"

using namespace ahbm;
using namespace ahbm::join;

namespace {

JoinFile load(const std::string& name) {
  return load_join_file(std::string(AHBM_SOURCE_DIR) + "/traces/join/" + name, builtin_join_strategies());
}

std::vector<JoinPlan> plan_all(const JoinFile& f) {
  return plan_all_strategies(builtin_join_strategies(), f.input, f.options, f.model, f.shared_prefix_tokens);
}

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (c == sep) out.emplace_back();
    else out.back() += c;
  }
  return out;
}

}  // namespace

TEST(JoinShape, PrefillShapeMatchesABruteForceMask) {
  ModelDims m;
  m.num_q_heads = 8, m.num_kv_heads = 2, m.head_dim = 16, m.layers = 3, m.bytes_per_element = 2;
  for (int64_t P : {0, 5, 64}) {
    for (int64_t J : {1, 7, 33}) {
      // Row i of the join attends to the whole prefix and causally to join tokens 0..i.
      int64_t pairs = 0;
      for (int64_t i = 0; i < J; ++i)
        for (int64_t k = 0; k < P + J; ++k) pairs += (k < P || k - P <= i) ? 1 : 0;
      const int64_t per_token = 2 * 16 * 2 * 2 * 3;  // K and V x head_dim x bytes x kv heads x layers
      PrefillShape s = prefill_shape(m, P, J);
      EXPECT_EQ(s.visible_pairs_per_q_head, pairs);
      EXPECT_EQ(s.q_rows_per_kv_head, J * 4);
      EXPECT_EQ(s.q_rows_total, J * 8);
      EXPECT_EQ(s.attention_flops, 4 * 16 * pairs * 8 * 3);
      EXPECT_EQ(s.new_kv_bytes, J * per_token);
      EXPECT_EQ(s.context_tokens, P + J);
      EXPECT_EQ(s.kv_read_per_decode_token_bytes, (P + J) * per_token);
      EXPECT_EQ(s.kv_read_added_per_decode_token_bytes, J * per_token);
      EXPECT_DOUBLE_EQ(s.context_window_fraction, -1.0);
    }
  }
}

TEST(JoinShape, DecodeReadsSumTheGrowingContext) {
  ModelDims m;
  for (int64_t ctx : {0, 100, 8192})
    for (int64_t steps : {0, 1, 50}) {
      int64_t tokens = 0;
      for (int64_t t = 0; t < steps; ++t) tokens += ctx + t;
      EXPECT_EQ(decode_kv_read_bytes(m, ctx, steps), tokens * m.kv_bytes_per_token());
    }
}

TEST(JoinShape, NewKvBytesGrowLinearlyWithJoinTokens) {
  // LLaMA-style defaults: 2 (K,V) x 128 head_dim x 2 bytes x 8 KV heads x 32 layers per token.
  const int64_t per_token = 2 * 128 * 2 * 8 * 32;
  ModelDims m;
  EXPECT_EQ(m.kv_bytes_per_token(), per_token);
  for (int64_t j : {0, 1, 400, 8000}) EXPECT_EQ(prefill_shape(m, 8192, j).new_kv_bytes, j * per_token);
  // Across the strategies of the example the new KV is join tokens x per-token bytes, so it is
  // ordered exactly as the join tokens are.
  JoinFile f = load("schema_8_agents.json");
  auto plans = plan_all(f);
  for (const auto& a : plans) {
    EXPECT_EQ(a.main.new_kv_bytes, a.join_tokens * per_token) << a.strategy;
    for (const auto& b : plans) {
      if (a.join_tokens > b.join_tokens) {
        EXPECT_GT(a.main.new_kv_bytes, b.main.new_kv_bytes);
        EXPECT_GT(a.main.q_rows_per_kv_head, b.main.q_rows_per_kv_head);
        EXPECT_GT(a.main.attention_flops, b.main.attention_flops);
        EXPECT_GT(a.main.kv_read_per_decode_token_bytes, b.main.kv_read_per_decode_token_bytes);
      }
    }
  }
}

TEST(JoinShape, ReducerTasksCarryTheirClosedForms) {
  JoinFile f = load("wide_16_agents.json");
  JoinPlan p = make_join_plan(builtin_join_strategies(), "hierarchical", f.input, f.options, f.model,
                              f.shared_prefix_tokens);
  int64_t kv = 0, flops = 0;
  for (const auto& r : p.body.reducers) {
    const PrefillShape s = prefill_shape(f.model, f.shared_prefix_tokens, r.input_tokens);
    EXPECT_EQ(r.prefill.attention_flops, s.attention_flops);
    EXPECT_EQ(r.decode_kv_read_bytes,
              decode_kv_read_bytes(f.model, f.shared_prefix_tokens + r.input_tokens, r.output_tokens));
    EXPECT_EQ(r.kv_bytes, (r.input_tokens + r.output_tokens) * f.model.kv_bytes_per_token());
    kv += r.kv_bytes;
    flops += r.prefill.attention_flops;
  }
  EXPECT_EQ(p.reducer_kv_bytes, kv);
  EXPECT_EQ(p.reducer_attention_flops, flops);
}

TEST(JoinShape, ContextWindowUseAndOverflowWarning) {
  JoinFile f = load("note_8x1000_sizes.json");
  ASSERT_EQ(f.model.context_window, 32768);
  f.model.context_window = 10000;
  auto reg = builtin_join_strategies();
  JoinPlan full = make_join_plan(reg, "full_text", f.input, f.options, f.model, f.shared_prefix_tokens);
  JoinPlan schema = make_join_plan(reg, "schema", f.input, f.options, f.model, f.shared_prefix_tokens);
  EXPECT_DOUBLE_EQ(full.main.context_window_fraction, (8192.0 + 8000.0) / 10000.0);
  EXPECT_DOUBLE_EQ(schema.main.context_window_fraction, (8192.0 + 400.0) / 10000.0);
  ASSERT_EQ(full.body.warnings.size(), 1u);
  EXPECT_NE(full.body.warnings[0].find("exceeds the context window"), std::string::npos);
  EXPECT_TRUE(schema.body.warnings.empty());
}

TEST(JoinReport, CsvTableAndJsonAgree) {
  JoinFile f = load("schema_8_agents.json");
  auto plans = plan_all(f);
  plans[1].continuation_prefill_ns = 1234.5;  // as the runtime would after simulating
  plans[1].fan_in_ns = 2000.0;
  plans[1].fan_in_energy_j = 5.4321e-3;  // J; the table prints µJ
  plans[1].join_energy_j = 6e-3;
  const auto csv = lines(comparison_csv(plans));
  ASSERT_EQ(csv.size(), 1 + plans.size());
  const auto header = split(csv[0], ',');
  EXPECT_EQ(header.front(), "strategy");
  EXPECT_EQ(header.back(), "join_energy_j");
  const Json j = comparison_json(plans);
  ASSERT_EQ(j["strategies"].size(), plans.size());
  for (size_t i = 0; i < plans.size(); ++i) {
    const auto row = split(csv[i + 1], ',');
    ASSERT_EQ(row.size(), header.size());
    const Json& s = j["strategies"][i];
    for (size_t c = 0; c < header.size(); ++c) {
      const Json& v = s.at(header[c]);
      EXPECT_EQ(row[c], v.is_null() ? "" : v.is_string() ? v.get<std::string>() : v.dump()) << header[c];
    }
    EXPECT_EQ(s["join_input_tokens"].get<int64_t>(), plans[i].join_tokens);
    EXPECT_EQ(s["segment_list"].size(), plans[i].body.segments.size());
  }
  EXPECT_TRUE(j["strategies"][0]["continuation_prefill_ns"].is_null());
  EXPECT_DOUBLE_EQ(j["strategies"][1]["continuation_prefill_ns"].get<double>(), 1234.5);
  const std::string table = comparison_table(plans);
  for (const auto& p : plans) EXPECT_NE(table.find(p.strategy), std::string::npos);
  EXPECT_NE(table.find("1234.5"), std::string::npos);
  EXPECT_NE(table.find("5432.1"), std::string::npos);
  EXPECT_NE(table.find("(sim)"), std::string::npos);
  EXPECT_NE(table.find("warning [latent]"), std::string::npos);
}

TEST(JoinReport, SameInputsGiveByteIdenticalReports) {
  for (const char* name : {"schema_8_agents.json", "wide_16_agents.json", "malformed_results.json"}) {
    const auto a = plan_all(load(name)), b = plan_all(load(name));
    EXPECT_EQ(comparison_json(a).dump(), comparison_json(b).dump()) << name;
    EXPECT_EQ(comparison_csv(a), comparison_csv(b)) << name;
    EXPECT_EQ(comparison_table(a), comparison_table(b)) << name;
  }
}
