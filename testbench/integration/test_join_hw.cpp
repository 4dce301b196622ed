// The join phase on the hardware (issue 6, docs/join.md "On the hardware"): the note's example
// sizes, latency and new KV growing with join tokens, reducers running side by side, reference
// counts after the join, and O of the continuation prefill against float64.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "runtime/run/driver.h"
#include "runtime/run/join_phase.h"
#include "runtime/numerics/reference.h"

using namespace ahbm;

namespace {

std::string trace(const std::string& name) { return std::string(AHBM_SOURCE_DIR) + "/traces/" + name; }

// 8 agents forked from a 2048-token prefix, head_dim 64, 4 query heads on one KV head;
// `join` is the scenario's join block with the results added.
Scenario join_scenario(const std::string& results, Json join, int continuation = 0) {
  Json agents = Json::array();
  for (int i = 0; i < 8; ++i) agents.push_back({{"name", "agent" + std::to_string(i)}, {"new_tokens", 8}});
  join["results"] = trace("join/" + results);
  const Json j = {{"name", "join_hw"},
                  {"model", {{"head_dim", 64}, {"num_q_heads", 4}, {"num_kv_heads", 1}}},
                  {"kv", {{"page_tokens", 16}}},
                  {"shared_prefix_tokens", 2048},
                  {"agents", agents},
                  {"join", join},
                  {"phases", {{{"type", "fanout"}}, {{"type", "join"}, {"tokens", continuation}}}}};
  return parse_scenario(j, "join_hw");
}

RunOutput run(const Scenario& sc, bool compare, bool keep_steps = false) {
  RunOptions opt;
  opt.vcd = false;
  opt.join_compare = compare;
  opt.keep_steps = keep_steps;
  return execute(sc, HwConfig{}, opt);
}

std::map<std::string, Json> by_strategy(const RunOutput& r) {
  std::map<std::string, Json> m;
  for (const Json& s : r.summary.join.at("strategies")) m[s.at("strategy").get<std::string>()] = s;
  return m;
}

double prefill_ns(const Json& s) { return s.at("continuation_prefill_ns").get<double>(); }

}  // namespace

TEST(JoinHw, NoteExampleReproducesOnTheShippedTrace) {
  const RunOutput r = run(load_scenario(trace("join_8x1000.json")), true, true);
  auto m = by_strategy(r);
  ASSERT_EQ(m.size(), 6u);
  EXPECT_EQ(m["full_text"]["join_input_tokens"], 8000);
  EXPECT_EQ(m["schema"]["join_input_tokens"], 400);
  EXPECT_EQ(m["full_text"]["q_rows_per_kv_head"], 8000 * 4);
  // full_text >= schema >= dedup, measured by simulation (sizes-only agents: dedup = schema).
  EXPECT_GT(prefill_ns(m["full_text"]), prefill_ns(m["schema"]));
  EXPECT_GE(prefill_ns(m["schema"]), prefill_ns(m["dedup"]));
  EXPECT_GT(m["full_text"]["new_kv_bytes"].get<int64_t>(), m["schema"]["new_kv_bytes"].get<int64_t>());
  // The scenario's strategy (schema) ran on the run's timeline: its prefill step simulated the
  // last join tokens' rows (x 4 query heads) over the prefix and all 400 join tokens.
  const StepOutput* prefill = nullptr;
  for (const StepOutput& s : r.steps)
    if (s.step.label() == "join.prefill") prefill = &s;
  ASSERT_NE(prefill, nullptr);
  const Json& cp = m["schema"]["hardware"]["continuation_prefill"];
  EXPECT_EQ(prefill->plan.jobs[0].row_count(), cp["simulated_tokens"].get<int>() * 4);
  EXPECT_LE(cp["simulated_tokens"].get<int>(), 400);
  int64_t kv_tokens = 0;
  for (const KvShard& s : prefill->plan.jobs[0].shards) kv_tokens += s.tokens;
  EXPECT_EQ(kv_tokens, 2048 + 400);
  EXPECT_EQ(r.summary.join["strategy"], "schema");
  EXPECT_NE(r.join_csv.find("full_text,8000,"), std::string::npos);
  EXPECT_NE(r.join_table.find("schema"), std::string::npos);
  // Energy (docs/energy.md): more prefilled rows, more energy; the scenario's strategy's fan-in
  // is its prefill step's energy scaled by the extrapolated / simulated time (1 when the prefill
  // was simulated whole), and its join energy adds the continuation steps'.
  EXPECT_GT(m["full_text"]["fan_in_energy_j"].get<double>(), m["schema"]["fan_in_energy_j"].get<double>());
  EXPECT_NE(r.join_table.find("fan_in_uJ"), std::string::npos);
  double prefill_j = -1, continuation_j = 0;
  for (const StepSummary& st : r.summary.steps) {
    if (st.label == "join.prefill") prefill_j = st.energy_j;
    if (st.label.rfind("join.continuation", 0) == 0) continuation_j += st.energy_j;
  }
  ASSERT_GT(prefill_j, 0.0);
  const double scale = cp["ns"].get<double>() / cp["simulated_ns"].get<double>();
  EXPECT_NEAR(m["schema"]["fan_in_energy_j"].get<double>(), prefill_j * scale, 1e-9 * prefill_j * scale);
  EXPECT_NEAR(m["schema"]["join_energy_j"].get<double>() - m["schema"]["fan_in_energy_j"].get<double>(), continuation_j,
              1e-9 * prefill_j * scale);
}

TEST(JoinHw, PrefillLatencyAndNewKvGrowWithJoinTokens) {
  // Real results: full_text 8000, schema 129, dedup 85 join tokens (traces/join/schema_8_agents.json).
  const RunOutput r = run(join_scenario("schema_8_agents.json", {{"strategy", "dedup"}, {"max_simulated_tokens", 128},
                                                            {"pointer", {{"request", {17, 40}}}}}),
                        true);
  auto m = by_strategy(r);
  EXPECT_GT(m["full_text"]["join_input_tokens"].get<int64_t>(), m["schema"]["join_input_tokens"].get<int64_t>());
  EXPECT_GT(m["schema"]["join_input_tokens"].get<int64_t>(), m["dedup"]["join_input_tokens"].get<int64_t>());
  EXPECT_GT(prefill_ns(m["full_text"]), prefill_ns(m["schema"]));
  EXPECT_GT(prefill_ns(m["schema"]), prefill_ns(m["dedup"]));
  // Over every strategy: more join tokens -> no less prefill time and strictly more new KV.
  std::vector<Json> all;
  for (auto& [k, v] : m) all.push_back(v);
  std::sort(all.begin(), all.end(), [](const Json& a, const Json& b) {
    return a["join_input_tokens"].get<int64_t>() < b["join_input_tokens"].get<int64_t>();
  });
  for (size_t i = 1; i < all.size(); ++i) {
    if (all[i]["join_input_tokens"] == all[i - 1]["join_input_tokens"]) continue;
    EXPECT_GE(prefill_ns(all[i]), prefill_ns(all[i - 1])) << all[i]["strategy"] << " vs " << all[i - 1]["strategy"];
    EXPECT_GT(all[i]["new_kv_bytes"].get<int64_t>(), all[i - 1]["new_kv_bytes"].get<int64_t>());
  }
  // New KV = join tokens x K,V x head_dim x fp32 bytes (one KV head, one layer).
  for (const Json& s : all)
    EXPECT_EQ(s["new_kv_bytes"].get<int64_t>(), s["join_input_tokens"].get<int64_t>() * 2 * 64 * 4);
  // Pointer: two requested handles fetched on the host at the default 50 us each, before the prefill.
  const Json& hw = m["pointer"]["hardware"];
  EXPECT_EQ(hw["evidence_fetches"], 2);
  EXPECT_DOUBLE_EQ(hw["evidence_ns"].get<double>(), 2 * 50000.0);
  EXPECT_DOUBLE_EQ(m["pointer"]["fan_in_ns"].get<double>(),
                   hw["evidence_ns"].get<double>() + hw["continuation_prefill"]["ns"].get<double>());
}

TEST(JoinHw, ExtrapolatedPrefillTimeIsCloseToTheFullSimulation) {
  // 1200 join tokens (8 x 150 latent tokens, counted like any tokens) simulated in full vs a
  // bounded simulation (at least three Q tiles, plus a probe one tile shorter), extrapolated.
  const Json join = {{"strategy", "latent"}, {"latent", {{"tokens_per_branch", 150}}}};
  const RunOutput exact = run(join_scenario("note_8x1000_sizes.json", join), false);
  Json bounded = join;
  bounded["max_simulated_tokens"] = 64;
  const RunOutput est = run(join_scenario("note_8x1000_sizes.json", bounded), false);
  const Json& e = exact.summary.join["strategies"][0]["hardware"]["continuation_prefill"];
  const Json& b = est.summary.join["strategies"][0]["hardware"]["continuation_prefill"];
  EXPECT_FALSE(e["extrapolated"].get<bool>());
  EXPECT_EQ(e["simulated_tokens"], 1200);
  ASSERT_TRUE(b["extrapolated"].get<bool>());
  EXPECT_LT(b["simulated_tokens"].get<int>(), 1200);
  EXPECT_LT(b["probe_ns"].get<double>(), b["simulated_ns"].get<double>());
  EXPECT_LT(b["simulated_ns"].get<double>(), e["ns"].get<double>());
  EXPECT_NEAR(b["ns"].get<double>(), e["ns"].get<double>(), 0.05 * e["ns"].get<double>());
}

TEST(JoinHw, HierarchicalReducersRunInParallelBeforeTheMainPrefill) {
  const RunOutput r = run(join_scenario("schema_8_agents.json",
                                        {{"strategy", "hierarchical"}, {"max_simulated_tokens", 64},
                                         {"hierarchical", {{"reducers", 2}, {"reducer_output_tokens", 6}}}}),
                          false);
  const SpanRecorder& spans = *r.sim.spans;
  struct Extent { double start = 1e300, end = -1; };
  std::map<std::string, Extent> prefill;  // first span per agent in the reducer prefill
  double main_start = 1e300;
  for (const Span& s : spans.spans()) {
    const std::string comp = spans.name(s.component);
    const double a = to_ns(s.start), b = to_ns(s.end);
    if (comp == "agent.reducer0" || comp == "agent.reducer1") {
      Extent& e = prefill[comp];
      if (e.end < 0) e = {a, b};
    }
    if (comp == "agent.main" && spans.name(s.phase) == "join") main_start = std::min(main_start, a);
  }
  ASSERT_EQ(prefill.size(), 2u);
  const Extent& x = prefill["agent.reducer0"];
  const Extent& y = prefill["agent.reducer1"];
  EXPECT_LT(x.start, y.end);  // the spans overlap: both reducers' rows are in flight together
  EXPECT_LT(y.start, x.end);
  EXPECT_GT(x.end, x.start);
  EXPECT_GT(y.end, y.start);
  EXPECT_GE(main_start, std::max(x.end, y.end));
  const Json& hw = r.summary.join["strategies"][0]["hardware"];
  EXPECT_EQ(hw["reducers"], 2);
  EXPECT_EQ(hw["reduce_decode_steps"], 6);
  EXPECT_DOUBLE_EQ(hw["fan_in_ns"].get<double>(), hw["reduce_prefill"]["ns"].get<double>() +
                                                      hw["reduce_decode_ns"].get<double>() +
                                                      hw["continuation_prefill"]["ns"].get<double>());
  EXPECT_GT(hw["fan_in_ns"].get<double>(), hw["continuation_prefill"]["ns"].get<double>());
}

TEST(JoinHw, ReferenceCountsAfterTheJoin) {
  // Page-table operations only: every strategy, checked against the page manager itself.
  for (const std::string strategy : {"full_text", "schema", "dedup", "pointer", "hierarchical", "latent"}) {
    const Scenario sc = join_scenario("schema_8_agents.json", {{"strategy", strategy}}, 3);
    KvPageManager kv(HwConfig{}.pes_per_group(), -1, sc.kv.page_tokens);
    AgentSession s(sc, kv);
    s.run([](const Step&) {});
    const std::vector<PageId> prefix = kv.table(s.parent().seq);
    const auto reg = join::builtin_join_strategies();
    const join::JoinPlan plan = join::make_join_plan(reg, strategy, sc.join->input, sc.join->options,
                                                     join::model_dims(sc, *sc.join), 2048);
    const join::JoinRun jr = join::run_join(s, plan, *sc.join, join::no_hardware());
    EXPECT_EQ(jr.kv.live_sequences, 1) << strategy;
    EXPECT_GT(jr.kv.private_pages, 0) << strategy;
    EXPECT_EQ(jr.kv.private_pages_live, 0) << strategy;
    EXPECT_EQ(jr.kv.prefix_pages, 128) << strategy;
    EXPECT_EQ(jr.kv.prefix_pages_referenced_once, 128) << strategy;
    for (PageId p : prefix) EXPECT_EQ(kv.page(p).refs, 1) << strategy;
    // The parent's table: prefix pages, then join-input pages, then continuation pages.
    const std::vector<PageId>& table = kv.table(s.parent().seq);
    EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), table.begin())) << strategy;
    EXPECT_EQ(int64_t(table.size()), int64_t((2048 + plan.join_tokens + 3 + 15) / 16)) << strategy;
    EXPECT_EQ(kv.in_use(), int64_t(table.size())) << strategy;
    EXPECT_EQ(kv.length(s.parent().seq), 2048 + plan.join_tokens + 3) << strategy;
    kv.check_invariants();
  }
}

TEST(JoinHw, ContinuationPrefillMatchesFloat64) {
  const Scenario sc = join_scenario("schema_8_agents.json", {{"strategy", "full_text"}, {"max_simulated_tokens", 96}});
  const RunOutput r = run(sc, false, true);
  const StepOutput* prefill = nullptr;
  for (const StepOutput& s : r.steps)
    if (s.step.label() == "join.prefill") prefill = &s;
  ASSERT_NE(prefill, nullptr);
  const AttentionJob& job = prefill->plan.jobs.at(0);
  const int64_t J = r.summary.join["strategies"][0]["join_input_tokens"].get<int64_t>();  // 8000
  const int P = 2048;
  const int S = r.summary.join["strategies"][0]["hardware"]["continuation_prefill"]["simulated_tokens"].get<int>();
  EXPECT_LT(S, J);
  ASSERT_EQ(job.row_count(), S * 4);  // Q rows = simulated join tokens x q heads per KV head
  const FlatKv kv = flatten_kv(job);
  ASSERT_EQ(int64_t(kv.info.size()), P + J);
  const std::vector<uint8_t> mask = visibility_mask(job.rows, kv.info);
  for (int r0 = 0; r0 < job.row_count(); ++r0) {
    const int32_t pos = job.rows[size_t(r0)].pos;
    ASSERT_GE(pos, P + J - S);
    int64_t seen = 0, prefix_seen = 0;
    for (size_t k = 0; k < kv.info.size(); ++k) {
      const bool v = mask[size_t(r0) * kv.info.size() + k];
      seen += v;
      if (kv.info[k].pos < P) prefix_seen += v;
    }
    EXPECT_EQ(prefix_seen, P);  // full over the shared prefix
    EXPECT_EQ(seen, pos + 1);   // and causal over the join pages
  }
  const Eigen::MatrixXd ref = reference_attention(job.q, job.rows, kv.k, kv.v, kv.info, 64, 1.0 / 8.0);
  const NumericCheck c = compare_to_reference(prefill->outputs.at(0), ref);
  EXPECT_LE(c.max_abs_err, 1e-4);
  EXPECT_GT(c.ref_max_abs, 0.01);
  EXPECT_LE(r.summary.join["strategies"][0]["hardware"]["continuation_prefill"]["max_abs_err"].get<double>(), 1e-4);
}

TEST(JoinHw, BadJoinBlocksAreInputErrors) {
  auto fails = [](const Json& join, const std::string& what) {
    try {
      join_scenario("schema_8_agents.json", join);
      ADD_FAILURE() << "no error for " << join.dump();
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  fails({{"strategy", "schemaa"}}, "join.strategy");
  fails({{"strategy", "schema"}, {"max_simulated_tokens", 1}}, "join.max_simulated_tokens");
  fails({{"strategy", "schema"}, {"evidence_fetch_ns", -1}}, "join.evidence_fetch_ns");
  try {
    const Json j = {{"name", "x"}, {"model", {{"head_dim", 8}}}, {"shared_prefix_tokens", 16},
                    {"agents", {{{"name", "agent0"}, {"new_tokens", 1}}, {{"name", "zzz"}, {"new_tokens", 1}}}},
                    {"join", {{"results", trace("join/schema_8_agents.json")}}},
                    {"phases", {{{"type", "fanout"}}, {{"type", "join"}}}}};
    parse_scenario(j, "s.json");
    ADD_FAILURE() << "no error for an agent without a result";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no result for agent \"zzz\""), std::string::npos) << e.what();
  }
}
