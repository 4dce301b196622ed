// Join strategies of AHBM note section 5 on the example files in traces/join/.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "runtime/join/plan.h"

using namespace ahbm;
using namespace ahbm::join;

namespace {

std::string trace(const std::string& name) { return std::string(AHBM_SOURCE_DIR) + "/traces/join/" + name; }

JoinPlan plan_of(const JoinFile& f, const std::string& strategy, const JoinOptions* opt = nullptr) {
  const auto reg = builtin_join_strategies();
  return make_join_plan(reg, strategy, f.input, opt ? *opt : f.options, f.model, f.shared_prefix_tokens);
}

JoinFile load(const std::string& name) { return load_join_file(trace(name), builtin_join_strategies()); }

// A join file from inline JSON text (for malformed and edge cases).
JoinFile parse(const std::string& text) {
  return parse_join_file(Json::parse(text), "inline.json", builtin_join_strategies());
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool contains(const std::vector<std::string>& v, const std::string& a, const std::string& b) {
  return std::any_of(v.begin(), v.end(), [&](const std::string& w) {
    return w.find(a) != std::string::npos && w.find(b) != std::string::npos;
  });
}

}  // namespace

TEST(JoinNote, FullTextIs8000AndSchemaIs400) {
  // Note 5.5/5.6: 8 sub-agents x 1000 output tokens; 50-token schema results.
  JoinFile f = load("note_8x1000_sizes.json");
  ASSERT_EQ(f.input.agents.size(), 8u);
  EXPECT_EQ(plan_of(f, "full_text").join_tokens, 8 * 1000);
  EXPECT_EQ(plan_of(f, "schema").join_tokens, 8 * 50);
  EXPECT_EQ(plan_of(f, "latent").join_tokens, 8 * 16);  // note 5.10: 16 latent tokens per branch
}

TEST(JoinNote, SchemaSerialisationIsTheNotes) {
  // Note 5.6, character for character, and counted by the documented tokenizer rule.
  const std::string want = "Finding: memory bandwidth bottleneck\nConfidence: 0.91\nEvidence: E17, E24";
  EXPECT_EQ(format_finding("Finding", "memory_bandwidth_bottleneck", 1, 0.91, {17, 24}), want);
  JoinFile f = load("schema_8_agents.json");
  JoinPlan p = plan_of(f, "schema");
  ASSERT_EQ(p.body.segments.size(), 8u);
  EXPECT_EQ(p.body.segments[0].text, want);
  EXPECT_EQ(p.body.segments[0].tokens, ceil_div(int64_t(want.size()), 4));
  int64_t sum = 0;
  for (const auto& s : p.body.segments) {
    EXPECT_EQ(s.kind, "schema");
    EXPECT_EQ(s.tokens, ceil_div(int64_t(s.text.size()), 4));
    sum += s.tokens;
  }
  EXPECT_EQ(p.join_tokens, sum);
}

TEST(JoinNote, OrderingFullTextSchemaDedupStrict) {
  JoinFile f = load("schema_8_agents.json");
  const int64_t full = plan_of(f, "full_text").join_tokens;
  const int64_t schema = plan_of(f, "schema").join_tokens;
  const int64_t dedup = plan_of(f, "dedup").join_tokens;
  EXPECT_EQ(full, 8 * 1000);  // the given text_tokens, not the excerpts' length
  EXPECT_GE(full, schema);
  EXPECT_GT(schema, dedup);   // the example has duplicate claims
}

TEST(JoinDedup, NoteExampleMergesDuplicates) {
  // Note 5.7's three results.
  JoinFile f = parse(R"({"name": "n57", "agents": [
    {"name": "a", "result": {"claim": "memory_bw", "confidence": 0.91, "evidence_ids": []}},
    {"name": "b", "result": {"claim": "memory_bw", "confidence": 0.87, "evidence_ids": []}},
    {"name": "c", "result": {"claim": "compute", "confidence": 0.42, "evidence_ids": []}}]})");
  JoinPlan p = plan_of(f, "dedup");
  ASSERT_EQ(p.body.segments.size(), 2u);
  EXPECT_EQ(p.body.segments[0].text,
            "Primary finding: memory bw\nSupported by 2 agents\nMaximum confidence: 0.91\nEvidence: none");
  EXPECT_EQ(p.body.segments[0].source, "a+b");
  EXPECT_EQ(p.body.segments[1].text, "Alternative: compute\nConfidence: 0.42\nEvidence: none");
  EXPECT_LT(p.join_tokens, plan_of(f, "schema").join_tokens);
}

TEST(JoinDedup, ExampleFileSupportConfidenceAndEvidenceUnion) {
  JoinFile f = load("schema_8_agents.json");
  JoinPlan p = plan_of(f, "dedup");
  // Expected groups computed from the file's own results, independently of the strategy code.
  struct G { std::set<std::string> agents; double conf = 0; std::set<int64_t> ids; };
  std::map<std::string, G> groups;
  for (const auto& a : f.input.agents) {
    ASSERT_TRUE(a.schema) << a.name;
    G& g = groups[claim_key(a.schema->claim)];
    g.agents.insert(a.name);
    g.conf = std::max(g.conf, a.schema->confidence);
    g.ids.insert(a.schema->evidence_ids.begin(), a.schema->evidence_ids.end());
  }
  ASSERT_EQ(p.body.segments.size(), groups.size());
  EXPECT_EQ(groups.size(), 4u);  // "memory-bandwidth bottleneck" merges with "memory_bandwidth_bottleneck"
  const auto& primary = groups.at("memory bandwidth bottleneck");
  EXPECT_EQ(primary.agents.size(), 4u);
  EXPECT_EQ(p.body.segments[0].text,
            format_finding("Primary finding", "memory_bandwidth_bottleneck", 4, primary.conf,
                           std::vector<int64_t>(primary.ids.begin(), primary.ids.end())));
  EXPECT_NE(p.body.segments[0].text.find("Maximum confidence: 0.91"), std::string::npos);
  EXPECT_NE(p.body.segments[0].text.find("Evidence: E17, E24, E31, E52"), std::string::npos);
  // Every agent appears in exactly one finding.
  std::multiset<std::string> seen;
  for (const auto& s : p.body.segments) {
    size_t start = 0;
    while (start <= s.source.size()) {
      size_t end = s.source.find('+', start);
      if (end == std::string::npos) end = s.source.size();
      seen.insert(s.source.substr(start, end - start));
      start = end + 1;
    }
  }
  EXPECT_EQ(seen.size(), 8u);
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), 8u);
}

TEST(JoinMalformed, FallsBackToTextWithWarningsNamingAgentAndField) {
  JoinFile f = load("malformed_results.json");
  const auto w = f.input.warnings();
  EXPECT_TRUE(contains(w, "agent conf_out_of_range", "confidence"));
  EXPECT_TRUE(contains(w, "agent not_json", "not valid JSON"));
  EXPECT_TRUE(contains(w, "agent missing_claim", "agents[3].result.claim"));
  EXPECT_TRUE(contains(w, "agent bad_evidence", "evidence_ids[0]"));
  EXPECT_TRUE(contains(w, "agent typo_key", "confidance"));
  EXPECT_FALSE(contains(w, "agent good", ""));
  EXPECT_FALSE(contains(w, "agent json_string", ""));  // a valid result given as JSON text
  EXPECT_EQ(w.size(), 5u);

  JoinPlan p = plan_of(f, "schema");
  std::map<std::string, Segment> by;
  for (const auto& s : p.body.segments) by[s.source] = s;
  ASSERT_EQ(by.size(), 7u);
  EXPECT_EQ(by["good"].kind, "schema");
  EXPECT_EQ(by["json_string"].kind, "schema");
  EXPECT_EQ(by["conf_out_of_range"].kind, "text_fallback");
  EXPECT_EQ(by["conf_out_of_range"].tokens, 800);  // its given text_tokens
  EXPECT_EQ(by["conf_out_of_range"].text, "compute bound, confident");
  EXPECT_EQ(by["missing_claim"].tokens, 600);
  EXPECT_EQ(by["bad_evidence"].tokens, 700);
  EXPECT_EQ(by["typo_key"].tokens, 500);
  // No count given: the tokenizer counts the agent's literal output.
  const std::string raw = f.input.agents[2].text;
  EXPECT_EQ(by["not_json"].kind, "text_fallback");
  EXPECT_EQ(by["not_json"].tokens, ceil_div(int64_t(raw.size()), 4));
  // The warnings reach the plan (and so the report).
  EXPECT_EQ(p.body.warnings.size(), 5u);
  // Text fallbacks are never merged by dedup; the one valid duplicate pair is.
  JoinPlan d = plan_of(f, "dedup");
  EXPECT_EQ(d.body.segments[0].source, "good+json_string");
  EXPECT_EQ(d.body.segments.size(), 1u + 5u);
}

TEST(JoinMalformed, NonObjectResultsWarnInsteadOfThrowing) {
  JoinFile f = parse(R"({"name": "x", "agents": [
    {"name": "num", "result": 42},
    {"name": "arr", "result": [1, 2]},
    {"name": "str_array", "result": "[1, 2]"},
    {"name": "empty_claim", "result": {"claim": " _ ", "confidence": 0.5, "evidence_ids": []}}]})");
  const auto w = f.input.warnings();
  ASSERT_EQ(w.size(), 4u);
  EXPECT_TRUE(contains(w, "agent num", "must be a JSON object"));
  EXPECT_TRUE(contains(w, "agent arr", "must be a JSON object"));
  EXPECT_TRUE(contains(w, "agent str_array", "must be a JSON object"));
  EXPECT_TRUE(contains(w, "agent empty_claim", "claim: must not be empty"));
  JoinPlan p = plan_of(f, "schema");
  for (const auto& s : p.body.segments) EXPECT_EQ(s.kind, "text_fallback");
  EXPECT_EQ(p.body.segments[0].tokens, 1);  // "42" is 2 bytes
}

TEST(JoinMalformed, SizesOnlyWithoutSchemaTokensFallsBack) {
  JoinFile f = parse(R"({"name": "x", "agents": [
    {"name": "a", "sizes": {"text_tokens": 900}},
    {"name": "b", "sizes": {"text_tokens": 1000, "schema_tokens": 40}}]})");
  JoinPlan p = plan_of(f, "schema");
  EXPECT_EQ(p.join_tokens, 900 + 40);
  ASSERT_EQ(p.body.warnings.size(), 1u);
  EXPECT_NE(p.body.warnings[0].find("agent a: sizes.schema_tokens"), std::string::npos);
}

TEST(JoinInputErrors, ScenarioMistakesAreInputErrors) {
  auto msg = [](const std::string& text) {
    try {
      parse(text);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(msg(R"({"name": "x", "agents": [{"name": "a"}]})").find("agents[0].result: neither"), std::string::npos);
  EXPECT_NE(msg(R"({"name": "x", "agents": [{"name": "a", "result": {}, "sizes": {"text_tokens": 1}}]})")
                .find("both"),
            std::string::npos);
  EXPECT_NE(msg(R"({"name": "x", "agents": [{"name": "a", "sizes": {"text_tokens": -1}}]})")
                .find("agents[0].sizes.text_tokens"),
            std::string::npos);
  EXPECT_NE(msg(R"({"name": "x", "evidence": [{"id": 1}], "agents": [{"name": "a", "sizes": {"text_tokens": 1}}]})")
                .find("evidence[0].text"),
            std::string::npos);
  const std::string unknown =
      msg(R"({"name": "x", "agents": [{"name": "a", "sizes": {"text_tokens": 1}}], "join": {"strategy": "shema"}})");
  EXPECT_NE(unknown.find("join.strategy"), std::string::npos);
  EXPECT_NE(unknown.find("did you mean \"schema\""), std::string::npos);
  EXPECT_NE(msg(R"({"name": "x", "evidence": [{"id": 1, "tokens": 5}],
                    "agents": [{"name": "a", "sizes": {"text_tokens": 1}}],
                    "join": {"pointer": {"request": [1, 2]}}})")
                .find("join.pointer.request[1]: evidence id 2 is not in the evidence store (allowed: E1)"),
            std::string::npos);
  EXPECT_NE(msg(R"({"name": "x", "agents": [{"name": "a", "sizes": {"text_tokens": 1}}],
                    "join": {"hierarchical": {"reducers": 2, "group_size": 4}}})")
                .find("join.hierarchical.group_size"),
            std::string::npos);
  EXPECT_NE(msg(R"({"name": "x", "model": {"num_q_heads": 32, "num_kv_heads": 6},
                    "agents": [{"name": "a", "sizes": {"text_tokens": 1}}]})")
                .find("model.num_kv_heads: value 6 does not divide"),
            std::string::npos);
}

TEST(JoinPointer, MaterialisesExactlyTheRequestedEvidence) {
  JoinFile f = load("schema_8_agents.json");
  ASSERT_EQ(f.options.pointer.request, (std::vector<int64_t>{17, 40}));
  JoinPlan p = plan_of(f, "pointer");
  const JoinPlan summaries = plan_of(f, "dedup");
  ASSERT_EQ(p.body.fetches.size(), 2u);
  EXPECT_EQ(p.body.fetches[0].id, 17);
  EXPECT_EQ(p.body.fetches[1].id, 40);
  EXPECT_EQ(p.body.fetches[0].cited_by, (std::vector<std::string>{"agent0", "agent1"}));
  std::vector<std::string> ev;
  for (const auto& s : p.body.segments)
    if (s.kind == "evidence") ev.push_back(s.source);
  EXPECT_EQ(ev, (std::vector<std::string>{"E17", "E40"}));
  // Effective input = summary tokens + tokens of the evidence actually used (note 5.8).
  const int64_t used = f.input.evidence.at(17).tokens.value() + f.input.evidence.at(40).tokens.value();
  EXPECT_EQ(p.evidence_tokens, used);
  EXPECT_EQ(p.join_tokens, summaries.join_tokens + used);
  // Without requests: summaries only.
  JoinOptions none = f.options;
  none.pointer.request.clear();
  EXPECT_EQ(plan_of(f, "pointer", &none).join_tokens, summaries.join_tokens);
}

TEST(JoinPointer, RequestProbabilityIsSeededAndBounded) {
  JoinFile f = load("wide_16_agents.json");
  JoinOptions o = f.options;
  const int64_t base = plan_of(f, o.pointer.summaries).join_tokens;
  o.pointer.request_probability = 0.0;
  EXPECT_TRUE(plan_of(f, "pointer", &o).body.fetches.empty());
  o.pointer.request_probability = 1.0;
  JoinPlan all = plan_of(f, "pointer", &o);
  EXPECT_EQ(all.body.fetches.size(), 16u);  // every cited handle in the store
  EXPECT_EQ(all.join_tokens, base + 16 * 100);
  o.pointer.request_probability = 0.5;
  std::set<std::vector<int64_t>> distinct;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    o.pointer.seed = seed;
    JoinPlan a = plan_of(f, "pointer", &o), b = plan_of(f, "pointer", &o);
    std::vector<int64_t> ia, ib;
    for (const auto& x : a.body.fetches) ia.push_back(x.id);
    for (const auto& x : b.body.fetches) ib.push_back(x.id);
    EXPECT_EQ(ia, ib);  // same seed, same requests
    EXPECT_EQ(a.join_tokens, base + 100 * int64_t(ia.size()));
    distinct.insert(ia);
  }
  EXPECT_GT(distinct.size(), 1u);  // the seed matters
}

TEST(JoinPointer, MissingEvidenceCitedByAnAgentIsAWarning) {
  JoinFile f = parse(R"({"name": "x", "evidence": [{"id": 1, "tokens": 10}], "agents": [
    {"name": "a", "result": {"claim": "c", "confidence": 0.5, "evidence_ids": [1, 99]}}],
    "join": {"pointer": {"request_probability": 1.0}}})");
  JoinPlan p = plan_of(f, "pointer");
  ASSERT_EQ(p.body.fetches.size(), 1u);
  EXPECT_TRUE(contains(p.body.warnings, "agent a", "E99"));
}

TEST(JoinHierarchical, SixteenBranchesFourReducersAddUp) {
  JoinFile f = load("wide_16_agents.json");
  JoinPlan p = plan_of(f, "hierarchical");
  const int64_t full = plan_of(f, "full_text").join_tokens;
  ASSERT_EQ(p.body.reducers.size(), 4u);  // note 5.9: 16 sub-agents -> 4 local reducers
  std::multiset<std::string> branches;
  int64_t in = 0, out = 0;
  for (const auto& r : p.body.reducers) {
    EXPECT_EQ(r.branches.size(), 4u);
    branches.insert(r.branches.begin(), r.branches.end());
    int64_t seg_sum = 0;
    for (const auto& s : r.input) seg_sum += s.tokens;
    EXPECT_EQ(r.input_tokens, seg_sum);
    EXPECT_EQ(r.input_tokens, 4 * 1000);
    EXPECT_EQ(r.output_tokens, 100);
    // Each reducer forks from the shared prefix and prefills its input over it.
    EXPECT_EQ(r.prefill.prefix_tokens, f.shared_prefix_tokens);
    EXPECT_EQ(r.prefill.q_rows_per_kv_head, r.input_tokens * 4);
    in += r.input_tokens;
    out += r.output_tokens;
  }
  EXPECT_EQ(branches.size(), 16u);
  EXPECT_EQ(std::set<std::string>(branches.begin(), branches.end()).size(), 16u);  // each branch once
  EXPECT_EQ(in, full);                 // reducers read everything once
  EXPECT_EQ(p.reducer_input_tokens, in);
  EXPECT_EQ(p.reducer_output_tokens, out);
  EXPECT_EQ(p.join_tokens, out);       // the main agent reads only the summaries
  EXPECT_EQ(p.reducer_max_input_tokens, 4000);
  EXPECT_LT(p.join_tokens, full);
}

TEST(JoinHierarchical, UnevenGroupsAndSchemaInput) {
  std::string agents;
  for (int i = 0; i < 10; ++i)
    agents += std::string(i ? "," : "") + R"({"name": "a)" + std::to_string(i) +
              R"(", "sizes": {"text_tokens": 1000, "schema_tokens": 30}})";
  JoinFile f = parse(R"({"name": "x", "agents": [)" + agents +
                     R"(], "join": {"hierarchical": {"group_size": 4, "reducer_input": "schema"}}})");
  JoinPlan p = plan_of(f, "hierarchical");
  ASSERT_EQ(p.body.reducers.size(), 3u);  // ceil(10 / 4)
  EXPECT_EQ(p.body.reducers[0].branches.size(), 4u);
  EXPECT_EQ(p.body.reducers[1].branches.size(), 3u);
  EXPECT_EQ(p.body.reducers[2].branches.size(), 3u);
  EXPECT_EQ(p.reducer_input_tokens, 10 * 30);
  EXPECT_EQ(p.join_tokens, 3 * 50);  // default reducer_output_tokens
  // More reducers than agents: one per agent, with a warning.
  JoinOptions o = f.options;
  o.hierarchical.reducers = 20;
  JoinPlan q = plan_of(f, "hierarchical", &o);
  EXPECT_EQ(q.body.reducers.size(), 10u);
  EXPECT_EQ(q.body.warnings.size(), 1u);
}

TEST(JoinLatent, MarkedAsNeedingATrainedModel) {
  JoinFile f = load("schema_8_agents.json");
  JoinPlan p = plan_of(f, "latent");
  EXPECT_TRUE(p.body.requires_trained_model);
  EXPECT_TRUE(contains(p.body.warnings, "latent", "trained"));
  EXPECT_EQ(p.join_tokens, 8 * f.options.latent.tokens_per_branch);
  for (const auto& s : p.body.segments) EXPECT_TRUE(s.text.empty());
}

TEST(JoinRegistry, IsAnObjectWithNamedStrategies) {
  auto reg = builtin_join_strategies();
  EXPECT_EQ(reg.names(), (std::vector<std::string>{"full_text", "schema", "dedup", "pointer", "hierarchical", "latent"}));
  EXPECT_THROW(reg.get("nope"), InputError);
  EXPECT_THROW(reg.add("schema", "again", reg.get("schema")), std::logic_error);
  // A separate registry with a custom strategy does not affect the built-in one.
  JoinStrategyRegistry mine;
  mine.add("first_only", "first agent's text", [](const JoinInput& in, const JoinOptions& o) {
    JoinBody b;
    b.segments.push_back(Segment{in.agents[0].name, "full_text", "", in.agents[0].full_text_tokens(o.tokenizer)});
    return b;
  });
  JoinFile f = load("note_8x1000_sizes.json");
  EXPECT_EQ(make_join_plan(mine, "first_only", f.input, f.options, f.model, 0).join_tokens, 1000);
  EXPECT_THROW(make_join_plan(builtin_join_strategies(), "first_only", f.input, f.options, f.model, 0), InputError);
}

TEST(JoinTraces, EveryExampleFileLoadsAndPlansEveryStrategy) {
  for (const char* name : {"note_8x1000_sizes.json", "schema_8_agents.json", "wide_16_agents.json",
                           "malformed_results.json"}) {
    JoinFile f = load(name);
    auto plans = plan_all_strategies(builtin_join_strategies(), f.input, f.options, f.model, f.shared_prefix_tokens);
    ASSERT_EQ(plans.size(), 6u) << name;
    // full_text is the upper bound of the strategies that carry every agent's result as text.
    for (const auto& p : plans) {
      if (p.strategy == "schema" || p.strategy == "dedup") {
        EXPECT_LE(p.join_tokens, plans[0].join_tokens) << name << " " << p.strategy;
      }
    }
  }
}
