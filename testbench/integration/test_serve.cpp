// The serving engine (runtime/serve/, docs/serving.md) on small workloads: conservation of
// requests, tokens and KV pages; one workflow served = the same step times as `run`; FCFS and
// SRF orders; the step cache's times = direct simulation; seeded arrivals -> identical outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <tuple>

#include "runtime/serve/admission.h"
#include "runtime/serve/engine.h"
#include "runtime/serve/preemption.h"
#include "runtime/serve/serve_report.h"
#include "runtime/serve/workload.h"
#include "test_runtime_support.h"
#include "test_serve_workloads.h"
#include "test_support.h"
#include "test_trace_exact.h"

namespace ahbm {
namespace {

using serve::ServeResult;
using serve::Workload;

// summary.json of a serve run, as `ahbm-sim serve` writes it.
Json summary_json(const Workload& w, const HwConfig& hw, const ServeResult& r) {
  return serve::to_json(serve::serve_summary(w, hw, r));
}

// The model of the serving tests: 4 query heads over 2 KV heads, head_dim 32, 2 layers, fp16,
// 16-token pages (small steps, fast to simulate).
const char* kScenario = R"({
  "name": "serve_model", "model": {"head_dim": 32, "num_q_heads": 4, "num_kv_heads": 2, "layers": 2, "dtype": "fp16"},
  "kv": {"page_tokens": 16}, "shared_prefix_tokens": 256, "seed": 3,
  "agents": [{"name": "a0", "new_tokens": 16, "decode_tokens": 3}, {"name": "a1", "new_tokens": 16, "decode_tokens": 3},
             {"name": "a2", "new_tokens": 16, "decode_tokens": 3}, {"name": "a3", "new_tokens": 16, "decode_tokens": 3}],
  "phases": [{"type": "prefill", "tokens": 64}, {"type": "fanout"}, {"type": "decode", "steps": 3},
             {"type": "join", "tokens": 8}]
})";

std::string scenario_path() {
  static const std::string p = test::write_temp(test::temp_dir("serve-model"), "model.json", kScenario);
  return p;
}

// `body` as a workload named "w" of the scenario at `scenario` (the serving tests' model by default).
Workload workload(const std::string& body, const std::string& scenario = scenario_path()) {
  Json j = Json::parse(body);
  j["name"] = "w";
  j["scenario"] = scenario;
  return serve::parse_workload(j, "workload.json");
}

// A small chip (2 CUBEs of 4 PEs) keeps every step short.
HwConfig hw() { return test::small_hw(2, 4); }

// `body` with a scheduler.pbd block of `pbd` added.
Workload with_pbd(const char* body, const std::string& pbd) {
  Json j = Json::parse(body);
  j["scheduler"]["pbd"] = Json::parse(pbd);
  j["name"] = "w";
  j["scenario"] = scenario_path();
  return serve::parse_workload(j, "workload.json");
}

HwConfig with_groups(int groups) {
  HwConfig h = hw();
  h.groups = groups;
  return h;
}

const char* const kAgentic = test::kAgenticWorkload;

void expect_conserved(const Workload& w, const ServeResult& r) {
  const auto specs = serve::expand(w);
  ASSERT_EQ(r.workflows.size(), specs.size());
  int64_t requested = 0;
  for (const auto& s : specs) {
    requested += s.requested_tokens();
  }
  int64_t generated = 0, generated_by_workflows = 0;
  for (const serve::RequestRecord& q : r.requests) {
    EXPECT_EQ(q.finished, 1) << "workflow " << q.workflow << " round " << q.round << " branch " << q.branch;
    EXPECT_GE(q.done_ns, q.ready_ns);
    if (!q.cancelled) {
      EXPECT_EQ(q.generated_tokens, q.requested_tokens);
      if (q.generated_tokens > 0) {
        EXPECT_GE(q.first_token_ns, q.scheduled_ns);
        EXPECT_GE(q.scheduled_ns, q.ready_ns);
        EXPECT_LE(q.last_token_ns + q.tool_ns, q.done_ns + 1e-9);
      }
    }
    generated += q.generated_tokens;
  }
  for (const serve::WorkflowRecord& f : r.workflows) {
    EXPECT_GE(f.admitted_ns, f.arrival_ns);
    EXPECT_GT(f.done_ns, f.admitted_ns);
    generated_by_workflows += f.generated_tokens;
  }
  EXPECT_EQ(generated, generated_by_workflows);
  if (std::none_of(r.requests.begin(), r.requests.end(), [](const auto& q) { return q.cancelled; })) {
    EXPECT_EQ(generated, requested);
  }
  // Every page back in the free pool; the pool never overfilled.
  EXPECT_EQ(r.in_use_end, 0);
  EXPECT_EQ(r.allocations, r.frees);
  EXPECT_LE(r.peak_pages, r.pages_total);
  // Every step with workflows was simulated or reused (a step without any is swaps alone).
  EXPECT_EQ(r.steps_simulated + r.steps_reused,
            std::count_if(r.steps.begin(), r.steps.end(), [](const auto& s) { return s.workflows > 0; }));
}

// trace.json as an exact reader sees it (test_trace_exact.h): ts and dur whole ns, every track
// named, slices on a track nested or disjoint in integer ns.
void expect_exact_trace(const ServeResult& r, const std::string& what) {
  const test::TraceExactness t = test::check_trace_exactness(serve::serve_trace_json(r));
  EXPECT_GT(t.slices, 0u) << what;
  EXPECT_TRUE(t.not_whole_ns.empty()) << what << ": ts/dur not whole ns:" << test::first_few(t.not_whole_ns);
  EXPECT_TRUE(t.unnamed_tracks.empty()) << what << ": tracks without a name:" << test::first_few(t.unnamed_tracks);
  EXPECT_TRUE(t.partial_overlaps.empty()) << what << ": slices overlapping without nesting:"
                                          << test::first_few(t.partial_overlaps);
}

TEST(Serve, EveryRequestFinishesOnceTokensAndPagesConserved) {
  const Workload w = workload(kAgentic);
  const ServeResult r = serve::serve(w, hw(), {});
  expect_conserved(w, r);
  // Requests: per agentic workflow 2 rounds x 3 branches + its answer; per chat one answer.
  size_t expected = 0;
  for (const auto& s : serve::expand(w)) expected += s.rounds.size() * 3 + 1;
  EXPECT_EQ(r.requests.size(), expected);
  // Continuous batching: some step holds more than one workflow.
  EXPECT_TRUE(std::any_of(r.steps.begin(), r.steps.end(), [](const auto& s) { return s.workflows > 1; }));
  // Branches in a tool call wait at least tool_ns past their last token.
  for (const auto& q : r.requests)
    if (q.round >= 0) {
      EXPECT_DOUBLE_EQ(q.done_ns - q.last_token_ns, 3000.0);
    }
}

TEST(Serve, RequestEnergiesAddUpToTheSteps) {
  const Workload w = workload(kAgentic);
  const ServeResult r = serve::serve(w, hw(), {});
  double steps = 0, requests = 0;
  for (const auto& s : r.steps) {
    EXPECT_GT(s.energy_j, 0.0);
    steps += s.energy_j;
  }
  for (const auto& q : r.requests) {
    if (!q.cancelled) {
      EXPECT_GT(q.energy_j, 0.0);
    }
    requests += q.energy_j;
  }
  EXPECT_NEAR(requests, steps, 1e-9 * steps);
  const Json s = summary_json(w, hw(), r);
  EXPECT_NEAR(s["energy"]["requests_j"].get<double>(), steps, 1e-9 * steps);
  EXPECT_NEAR(s["energy"]["j_per_output_token"].get<double>() * s["requests"]["tokens_generated"].get<double>(), steps,
              1e-9 * steps);
  // Per workflow: each workflow's requests summed; the mean times the count is the total again.
  const Json& per_workflow = s["energy"]["per_workflow"];
  EXPECT_EQ(per_workflow["count"].get<size_t>(), r.workflows.size());
  EXPECT_NEAR(per_workflow["total_j"].get<double>(), steps, 1e-9 * steps);
  EXPECT_NEAR(s["energy"]["j_per_workflow"].get<double>() * double(r.workflows.size()), steps, 1e-9 * steps);
  EXPECT_GE(per_workflow["max_j"].get<double>(), s["energy"]["per_request"]["max_j"].get<double>());
  // The chip's static power (PEs, CUBEs; the ideal NoC has no routers) runs over the whole span:
  // what the steps' readings leave out (the tool-call gaps, time before arrivals) is idle static
  // energy, in total_j.
  const double static_w = static_power_w(hw(), 0);
  EXPECT_NEAR(r.static_w_per_group, static_w, 1e-9 * static_w);
  Json sparse = Json::parse(kAgentic);  // arrivals 100x further apart: the chip idles between them
  sparse["arrival"]["rate_per_s"] = 2e3;
  const Workload ws = workload(sparse.dump());
  const ServeResult rs = serve::serve(ws, hw(), {});
  double busy = 0, steps_s = 0;
  for (const auto& st : rs.steps) {
    busy += st.ns;
    steps_s += st.energy_j;
  }
  ASSERT_LT(busy, 0.5 * rs.end_ns);
  const double idle_j = static_w * (rs.end_ns - busy) * 1e-9;
  const Json ss = summary_json(ws, hw(), rs);
  EXPECT_NEAR(ss["energy"]["idle_static_j"].get<double>(), idle_j, 1e-9 * idle_j);
  EXPECT_NEAR(ss["energy"]["total_j"].get<double>(), steps_s + idle_j, 1e-9 * (steps_s + idle_j));
  // P-B-D on 2 groups: each pool's idle time at one group's static power.
  const std::string sparse_body = sparse.dump();
  const Workload p = with_pbd(sparse_body.c_str(), R"({"prefill_groups": 1})");
  const ServeResult rp = serve::serve(p, with_groups(2), {});
  double pool_idle_ns = 0;
  for (const double pool_busy : {rp.pbd->prefill.busy_ns, rp.pbd->decode.busy_ns}) pool_idle_ns += rp.end_ns - pool_busy;
  EXPECT_NEAR(summary_json(p, with_groups(2), rp)["energy"]["idle_static_j"].get<double>(),
              static_w * pool_idle_ns * 1e-9, 1e-9 * static_w * rp.end_ns * 1e-9);
  // serve does not apply a power cap: it refuses one rather than ignore it.
  HwConfig capped = hw();
  capped.power_cap_w = 1e3;
  EXPECT_THROW(serve::serve(w, capped, {}), InputError);
}

TEST(Serve, AdmissionHoldsTheKvPoolAndQueuesTheRest) {
  const Workload w = workload(kAgentic);
  HwConfig small = hw();
  // 8 PEs x 6 pages of 16 tokens x 32 x 2 x 2 bytes x 2 layers x 2 KV heads: one agentic workflow
  // (about 22 pages reserved) fits twice at most.
  small.pe.hbm.capacity_bytes = 6 * 16 * 32 * 2 * 2 * 2 * 2;
  const ServeResult r = serve::serve(w, small, {});
  expect_conserved(w, r);
  EXPECT_EQ(r.pages_total, 48);
  // At every step the admitted workflows' reservations fit the pool.
  for (const auto& s : r.steps) {
    int64_t reserved = 0;
    for (const auto& f : r.workflows)
      if (f.admitted_ns <= s.start_ns && f.done_ns > s.start_ns) reserved += f.reserved_pages;
    EXPECT_LE(reserved, r.pages_total) << "step at " << s.start_ns;
  }
  EXPECT_TRUE(std::any_of(r.steps.begin(), r.steps.end(), [](const auto& s) { return s.waiting > 0; }));
}

// A workflow's cached prefix goes on the PEs the prefix rule names; admission (reserve, as
// on_demand) waits until those PEs have room, rather than failing mid-run with a full PE while the
// pool's total has room. Six workflows whose 3 cached pages each go to the same PEs, on a chip of
// 3 pages a PE: they are admitted as the PEs free up, and all finish.
TEST(Serve, AdmissionWaitsForTheCachedPrefixPesToHaveRoom) {
  const std::string scenario = test::source_path("traces/serve/small_attn.json");
  const Workload w = workload(R"({"arrival": {"process": "timestamps", "times_ns": [0, 0, 0, 0, 0, 0]},
    "templates": [{"name": "chat", "prompt_tokens": 64, "cached_tokens": 48, "answer_tokens": 2}]})", scenario);
  HwConfig h;
  h.pe.hbm.capacity_bytes = 3 * kv_page_bytes(w.scenario, 1);
  const ServeResult r = serve::serve(w, h, {});
  expect_conserved(w, r);
  EXPECT_TRUE(std::any_of(r.steps.begin(), r.steps.end(), [](const auto& s) { return s.waiting > 0; }));
}

TEST(Serve, FirstJoinCancelsTheRestAndReleasesTheirPages) {
  const Workload w = workload(R"({
    "arrival": {"process": "timestamps", "times_ns": [0, 10]},
    "templates": [{"name": "agent", "prompt_tokens": 64, "rounds": 1,
                   "fanout": {"branches": 4, "new_tokens": 8, "decode_tokens": {"uniform": [1, 9]}},
                   "join": {"strategy": "first", "first": 2, "tokens": 4}, "answer_tokens": 2}]
  })");
  const ServeResult r = serve::serve(w, hw(), {});
  expect_conserved(w, r);
  int cancelled = 0;
  for (const auto& q : r.requests) cancelled += q.cancelled;
  EXPECT_EQ(cancelled, 4);  // 2 of 4 branches per workflow
}

TEST(Serve, OneWorkflowTakesTheSameStepsAsRun) {
  const HwConfig h = hw();
  const Scenario sc = test::inline_scenario(kScenario, "serve_model");
  const RunOutput run = test::timing_only_run(sc, h);
  const Workload w = workload(R"({
    "arrival": {"process": "timestamps", "times_ns": [0]},
    "templates": [{"name": "same", "prompt_tokens": 256, "cached_tokens": 192, "rounds": 1,
                   "fanout": {"branches": 4, "new_tokens": 16, "decode_tokens": 3},
                   "join": {"tokens": 8}, "answer_tokens": 0}]
  })");
  const ServeResult r = serve::serve(w, h, {});
  const std::vector<StepSummary>& steps = run.summary.steps;
  // Both: prefill, fan-out, 3 decode steps, the join's prefill; back to back on an idle chip.
  ASSERT_EQ(r.steps.size(), steps.size());
  for (size_t i = 0; i < r.steps.size(); ++i) {
    EXPECT_EQ(r.steps[i].ns, steps[i].ns) << "step " << i;
    // Start times are sums of the step times, added up in another order by the run's timeline.
    EXPECT_NEAR(r.steps[i].start_ns, steps[i].start_ns, 1e-6) << "step " << i;
  }
  EXPECT_NEAR(r.end_ns, run.summary.total_ns, 1e-6);
  EXPECT_EQ(r.peak_pages, run.summary.kv.peak_pages);
}

// A whole model (model.config): every serve step runs every layer's operators around its
// attention and the LM head, as `run` does. One workflow alone takes run's step times; a summary's
// operators and attention add up to the steps' time; the weights take KV pages; P-B-D and
// prefix_affinity are refused with a whole model.
const char* kWholeModel = R"({
  "name": "serve_whole_model",
  "model": {"hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4, "num_key_value_heads": 2,
            "num_hidden_layers": 2, "vocab_size": 1000, "rope_theta": 10000.0, "dtype": "fp16"},
  "kv": {"page_tokens": 16}, "shared_prefix_tokens": 256, "seed": 3,
  "agents": [{"name": "a0", "new_tokens": 16, "decode_tokens": 3}, {"name": "a1", "new_tokens": 16, "decode_tokens": 3}],
  "phases": [{"type": "prefill", "tokens": 64}, {"type": "fanout"}, {"type": "decode", "steps": 3},
             {"type": "join", "tokens": 8}]
})";

Workload whole_model_workload(const std::string& body) {
  static const std::string path = test::write_temp(test::temp_dir("serve-whole-model"), "model.json", kWholeModel);
  return workload(body, path);
}

TEST(ServeWholeModel, OneWorkflowTakesTheStepsOfRunAndTheOperatorsAddUp) {
  const HwConfig h = hw();
  const Scenario sc = test::inline_scenario(kWholeModel, "serve_whole_model");
  const RunOutput run = test::timing_only_run(sc, h);
  const Workload w = whole_model_workload(R"({
    "arrival": {"process": "timestamps", "times_ns": [0]},
    "templates": [{"name": "same", "prompt_tokens": 256, "cached_tokens": 192, "rounds": 1,
                   "fanout": {"branches": 2, "new_tokens": 16, "decode_tokens": 3},
                   "join": {"tokens": 8}, "answer_tokens": 0}]
  })");
  const ServeResult r = serve::serve(w, h, {});
  const std::vector<StepSummary>& steps = run.summary.steps;
  ASSERT_EQ(r.steps.size(), steps.size());
  double busy = 0;
  for (size_t i = 0; i < r.steps.size(); ++i) {
    // Each step's layers: operators and attention summed in the same order as run's.
    EXPECT_NEAR(r.steps[i].ns, steps[i].ns, 1e-9 * steps[i].ns) << "step " << i;
    busy += r.steps[i].ns;
  }
  EXPECT_NEAR(r.end_ns, run.summary.total_ns, 1e-6);
  // The operators' totals: the same as run's, and with the attention of every layer they are the steps' time.
  ASSERT_TRUE(r.operators.is_object());
  EXPECT_FALSE(r.operators.contains("by_step"));
  double ops = 0;
  for (const Json& o : r.operators["by_operator"]) ops += o["time_ns"].get<double>();
  EXPECT_NEAR(ops + r.operators["attention_ns"].get<double>(), busy, 1e-9 * busy);
  for (size_t i = 0; i < r.operators["by_operator"].size(); ++i)
    EXPECT_EQ(r.operators["by_operator"][i], run.summary.operators->totals["by_operator"][i]) << i;
  // The weights take their HBM from the KV pool, as run's memory map says.
  EXPECT_EQ(r.pages_per_pe, run.summary.memory_map["kv"]["pages_per_pe_capacity"].get<int64_t>());
  EXPECT_LT(r.pages_per_pe, int64_t(h.pe.hbm.capacity_bytes / r.memory_map["kv"]["page_slot_bytes"].get<uint64_t>()));
  EXPECT_EQ(r.memory_map["weights"], run.summary.memory_map["weights"]);
}

// One workflow of a whole model (the OneWorkflow test's), with the scheduler fields `sched`.
Workload one_whole_model_workflow(const std::string& sched, const std::string& times = "[0]") {
  return whole_model_workload(R"({"arrival": {"process": "timestamps", "times_ns": )" + times + R"(},
    "templates": [{"name": "same", "prompt_tokens": 256, "cached_tokens": 192, "rounds": 1,
                   "fanout": {"branches": 2, "new_tokens": 16, "decode_tokens": 3},
                   "join": {"tokens": 8}, "answer_tokens": 0}],
    "scheduler": {)" + sched + "}}");
}

// The operators' time and every layer's attention add up to the busy time of the steps they ran in.
void expect_operators_add_up(const Json& operators, double busy_ns) {
  ASSERT_TRUE(operators.is_object());
  EXPECT_FALSE(operators.contains("by_step"));
  double ops = 0;
  for (const Json& o : operators["by_operator"]) ops += o["time_ns"].get<double>();
  EXPECT_NEAR(ops + operators["attention_ns"].get<double>(), busy_ns, 1e-9 * busy_ns);
}

// P-B-D with a whole model: each pool holds a copy of the weights over its own groups (its KV pool
// is what they leave there) and times its steps as a chip of its groups does. One workflow on a
// 2-group chip split 1 + 1: the prefill pool's step is the prompt's step on a 1-group chip, the
// decode pool's steps are the rest of that chip's steps, and each pool's memory map is its.
TEST(ServeWholeModel, PbdPoolsEachHoldTheWeightsAndStepAsAChipOfTheirGroups) {
  const ServeResult one = serve::serve(one_whole_model_workflow(""), hw(), {});
  const Workload w = one_whole_model_workflow(R"("pbd": {"prefill_groups": 1})");
  const ServeResult r = serve::serve(w, with_groups(2), {});
  expect_conserved(w, r);
  ASSERT_TRUE(r.pbd.has_value());
  EXPECT_TRUE(r.operators.is_null());  // per pool, not the chip's
  std::vector<double> prefill, decode;
  for (const auto& s : r.steps) (s.pool == 0 ? prefill : decode).push_back(s.ns);
  ASSERT_EQ(prefill.size(), 1u);
  ASSERT_EQ(decode.size() + 1, one.steps.size());
  EXPECT_NEAR(prefill[0], one.steps[0].ns, 1e-9 * prefill[0]);
  for (size_t i = 0; i < decode.size(); ++i) EXPECT_NEAR(decode[i], one.steps[i + 1].ns, 1e-9 * decode[i]) << i;
  for (const serve::PoolStats* p : {&r.pbd->prefill, &r.pbd->decode}) {
    EXPECT_EQ(p->memory_map["weights"], one.memory_map["weights"]) << p->name;
    EXPECT_EQ(p->pages_total, one.pages_total) << p->name;
    expect_operators_add_up(p->operators, p->busy_ns);
  }
  EXPECT_LT(r.pbd->prefill.pages_total, int64_t(hw().pe.hbm.capacity_bytes / r.pbd->prefill.memory_map["kv"]["page_slot_bytes"].get<uint64_t>()) * 8);
  // The prefill pool ran the prompt's rows through every operator once; the decode pool the rest.
  const Json s = summary_json(w, with_groups(2), r);
  EXPECT_EQ(s["pbd"]["decode_pool"]["operators"], r.pbd->decode.operators);
  EXPECT_FALSE(s.contains("operators"));
}

// prefix_affinity with a whole model: every slice holds a copy of the weights over its groups; two
// workflows at once go to the two slices of a 4-group chip and each ends when it would alone on a
// chip of one slice (2 groups); the operators' totals are both slices'.
TEST(ServeWholeModel, SlicesEachHoldTheWeightsAndStepAsAChipOfASlice) {
  const ServeResult alone = serve::serve(one_whole_model_workflow(""), with_groups(2), {});
  const Workload w = one_whole_model_workflow(R"("placement": "prefix_affinity")", "[0, 0]");
  const ServeResult r = serve::serve(w, with_groups(4), {});
  expect_conserved(w, r);
  ASSERT_EQ(r.slices.size(), 2u);
  EXPECT_NE(r.workflows[0].slice, r.workflows[1].slice);
  for (const auto& f : r.workflows) EXPECT_NEAR(f.done_ns, alone.end_ns, 1e-9 * alone.end_ns);
  EXPECT_EQ(r.pages_per_pe, alone.pages_per_pe);
  EXPECT_EQ(r.memory_map["weights"], alone.memory_map["weights"]);
  double busy = 0;
  for (const auto& s : r.steps) busy += s.ns;
  expect_operators_add_up(r.operators, busy);
  ASSERT_EQ(r.operators["by_operator"].size(), alone.operators["by_operator"].size());
  for (size_t i = 0; i < r.operators["by_operator"].size(); ++i)
    EXPECT_NEAR(r.operators["by_operator"][i]["time_ns"].get<double>(),
                2 * alone.operators["by_operator"][i]["time_ns"].get<double>(),
                1e-9 * r.operators["by_operator"][i]["time_ns"].get<double>()) << i;
}

// A pool too small for its copy of the weights is refused naming the pool and the shortfall,
// where the whole chip holds them.
TEST(ServeWholeModel, APoolTooSmallForTheWeightsIsRefusedNamingIt) {
  HwConfig h = with_groups(2);
  const ServeResult chip = serve::serve(one_whole_model_workflow(""), h, {});
  // Room for the 2-group plan's weights and a few pages, not for the 1-group plan's (twice as many per PE).
  h.pe.hbm.capacity_bytes = chip.memory_map["weights"]["max_bytes_on_one_pe"].get<uint64_t>() +
                            4 * chip.memory_map["kv"]["page_slot_bytes"].get<uint64_t>();
  EXPECT_NO_THROW(serve::serve(one_whole_model_workflow(""), h, {}));
  try {
    serve::serve(one_whole_model_workflow(R"("pbd": {"prefill_groups": 1})"), h, {});
    ADD_FAILURE() << "a prefill pool without room for the weights was accepted";
  } catch (const InputError& e) {
    for (const char* n : {"scheduler.pbd", "the prefill pool (1 group)", "short by", "pe.hbm.capacity_bytes", "scheduler.pbd.prefill_groups"})
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << n << ": " << e.what();
  }
}

// The scenario's fusion choices and the GEMM mapping (ServeOptions::gemm_mapping, serve
// --gemm-mapping) time serve's steps as they time run's: one workflow with every fusion off and
// x_stationary GEMMs takes run's step times with those settings, which differ from the defaults'.
TEST(ServeWholeModel, FusionAndGemmMappingTimeStepsAsRun) {
  Json unfused = Json::parse(kWholeModel);
  unfused["model"]["fusion"] = {{"linear_rope", false}, {"norm", false}, {"attention", false}};
  const std::string path = test::write_temp(test::temp_dir("serve-unfused"), "model.json", unfused.dump());
  const Scenario sc = test::inline_scenario(unfused.dump().c_str(), "serve_unfused");
  RunOptions ro = test::in_memory_options();
  ro.values = false;
  ro.gemm_mapping = GemmMapping::x_stationary;
  const RunOutput run = execute(sc, hw(), ro);
  const Workload w = workload(R"({"arrival": {"process": "timestamps", "times_ns": [0]},
    "templates": [{"name": "same", "prompt_tokens": 256, "cached_tokens": 192, "rounds": 1,
                   "fanout": {"branches": 2, "new_tokens": 16, "decode_tokens": 3},
                   "join": {"tokens": 8}, "answer_tokens": 0}]})", path);
  serve::ServeOptions opt;
  opt.gemm_mapping = GemmMapping::x_stationary;
  const ServeResult r = serve::serve(w, hw(), opt);
  const ServeResult fused = serve::serve(one_whole_model_workflow(""), hw(), {});
  const std::vector<StepSummary>& steps = run.summary.steps;
  ASSERT_EQ(r.steps.size(), steps.size());
  for (size_t i = 0; i < r.steps.size(); ++i) {
    EXPECT_NEAR(r.steps[i].ns, steps[i].ns, 1e-9 * steps[i].ns) << "step " << i;
    EXPECT_NE(r.steps[i].ns, fused.steps[i].ns) << "step " << i;
  }
  for (size_t i = 0; i < r.operators["by_operator"].size(); ++i)
    EXPECT_EQ(r.operators["by_operator"][i], run.summary.operators->totals["by_operator"][i]) << i;
  // An attention-only workload has no weight GEMM to map.
  try {
    serve::serve(workload(kAgentic), hw(), opt);
    ADD_FAILURE() << "x_stationary accepted without a whole model";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("gemm_mapping = 'x_stationary'"), std::string::npos) << e.what();
  }
}

// The workload's attention policy and launch schedule run every step as `run --policy
// --launch` runs it: one workflow alone takes the same step times under each (B2's remote reads,
// B5's broadcast, auto's pick per step; per-head launches with a launch cost), and they differ
// from policy A's.
TEST(Serve, OneWorkflowUnderEachAttentionPolicyTakesTheStepsOfRun) {
  HwConfig h = hw();
  h.host.kernel_launch_ns = 1000;
  const Scenario sc = test::inline_scenario(kScenario, "serve_model");
  std::vector<double> a_steps;
  for (const auto& [policy, launch] : std::vector<std::pair<std::string, std::string>>{
           {"A", "unified"}, {"B2", "unified"}, {"B5", "unified"}, {"auto", "unified"}, {"A", "per-head"}}) {
    SCOPED_TRACE(policy + " " + launch);
    RunOptions opt = test::in_memory_options();
    opt.values = false;
    opt.policy = policy;
    opt.launch = launch;
    const RunOutput run = execute(sc, h, opt);
    const Workload w = workload(R"({
      "arrival": {"process": "timestamps", "times_ns": [0]},
      "templates": [{"name": "same", "prompt_tokens": 256, "cached_tokens": 192, "rounds": 1,
                     "fanout": {"branches": 4, "new_tokens": 16, "decode_tokens": 3},
                     "join": {"tokens": 8}, "answer_tokens": 0}],
      "scheduler": {"attention_policy": ")" + policy + R"(", "launch": ")" + launch + R"("}
    })");
    const ServeResult r = serve::serve(w, h, {});
    expect_conserved(w, r);
    const std::vector<StepSummary>& steps = run.summary.steps;
    ASSERT_EQ(r.steps.size(), steps.size());
    std::vector<double> ns;
    for (size_t i = 0; i < r.steps.size(); ++i) {
      EXPECT_EQ(r.steps[i].ns, steps[i].ns) << "step " << i;
      ns.push_back(r.steps[i].ns);
    }
    // Each step here is the one workflow's one part; every part ran with the named policy.
    int64_t parts = 0;
    for (const auto& [name, n] : r.parts_by_policy) {
      parts += n;
      if (policy != "auto") {
        EXPECT_EQ(name, policy);
      }
    }
    EXPECT_EQ(parts, int64_t(r.steps.size()));
    if (a_steps.empty()) {
      a_steps = ns;
    } else if (policy != "auto") {  // auto may pick A for every step
      EXPECT_NE(ns, a_steps);
    }
  }
}

TEST(Serve, FcfsAdmitsInArrivalOrderSrfShortFirst) {
  const char* body = R"({
    "arrival": {"process": "timestamps", "times_ns": [0, 1, 2, 3]},
    "templates": [{"name": "long", "weight": 1, "prompt_tokens": 64, "answer_tokens": 12},
                  {"name": "short", "weight": 1, "prompt_tokens": 16, "answer_tokens": 1}],
    "scheduler": {"max_workflows": 1}
  })";
  const Workload w = workload(body);
  const auto specs = serve::expand(w);
  const ServeResult fcfs = serve::serve(w, hw(), {});
  expect_conserved(w, fcfs);
  for (size_t i = 1; i < fcfs.workflows.size(); ++i) {
    EXPECT_GE(fcfs.workflows[i].admitted_ns, fcfs.workflows[i - 1].done_ns);  // one at a time, in order
    EXPECT_GT(fcfs.workflows[i].done_ns, fcfs.workflows[i - 1].done_ns);
  }
  serve::ServeOptions o;
  o.scheduler = "srf";
  const ServeResult srf = serve::serve(w, hw(), o);
  expect_conserved(w, srf);
  // After workflow 0 (alone when it arrives), SRF admits waiting workflows by remaining tokens.
  std::vector<int> order;
  for (const auto& f : srf.workflows) order.push_back(f.id);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return srf.workflows[size_t(a)].admitted_ns < srf.workflows[size_t(b)].admitted_ns; });
  EXPECT_EQ(order.front(), 0);
  for (size_t i = 2; i < order.size(); ++i)
    EXPECT_LE(specs[size_t(order[i - 1])].requested_tokens() + specs[size_t(order[i - 1])].prompt_tokens,
              specs[size_t(order[i])].requested_tokens() + specs[size_t(order[i])].prompt_tokens);
}

TEST(Serve, StepCacheGivesTheTimesOfDirectSimulation) {
  // Identical workflows far apart: each runs alone on the same pages, so its steps repeat.
  const char* body = R"({
    "arrival": {"process": "timestamps", "times_ns": [0, 1e9, 2e9]},
    "templates": [{"name": "agent", "prompt_tokens": 96, "rounds": 1,
                   "fanout": {"branches": 2, "new_tokens": 8, "decode_tokens": 3}, "join": {"tokens": 4},
                   "answer_tokens": 2}],
    "scheduler": {"step_cache": %s}
  })";
  char on[1024], off[1024];
  std::snprintf(on, sizeof on, body, "true");
  std::snprintf(off, sizeof off, body, "false");
  const ServeResult cached = serve::serve(workload(on), hw(), {});
  const ServeResult direct = serve::serve(workload(off), hw(), {});
  EXPECT_GT(cached.steps_reused, 0);
  EXPECT_EQ(direct.steps_reused, 0);
  EXPECT_EQ(cached.steps_simulated + cached.steps_reused, direct.steps_simulated);
  ASSERT_EQ(cached.steps.size(), direct.steps.size());
  for (size_t i = 0; i < cached.steps.size(); ++i) {
    EXPECT_EQ(cached.steps[i].ns, direct.steps[i].ns) << i;
    EXPECT_EQ(cached.steps[i].hbm_bytes, direct.steps[i].hbm_bytes) << i;
  }
  EXPECT_EQ(serve::requests_csv(cached), serve::requests_csv(direct));
}

TEST(Serve, SeededPoissonArrivalsGiveIdenticalOutputs) {
  const Workload w = workload(kAgentic);
  const ServeResult a = serve::serve(w, hw(), {}), b = serve::serve(w, hw(), {});
  EXPECT_EQ(summary_json(w, hw(), a).dump(), summary_json(w, hw(), b).dump());
  EXPECT_EQ(serve::requests_csv(a), serve::requests_csv(b));
  EXPECT_EQ(serve::serve_trace_json(a), serve::serve_trace_json(b));
  Workload other = w;
  other.seed = 12;
  EXPECT_NE(serve::requests_csv(serve::serve(other, hw(), {})), serve::requests_csv(a));
}

}  // namespace
}  // namespace ahbm

namespace ahbm {
namespace {

TEST(Serve, BaselinesCopyThePrefixAndStreamItPerBranch) {
  const char* body = R"({
    "arrival": {"process": "timestamps", "times_ns": [0]},
    "templates": [{"name": "agent", "prompt_tokens": 1024, "cached_tokens": 1024, "rounds": 1,
                   "fanout": {"branches": 4, "new_tokens": 16, "decode_tokens": 2}}],
    "scheduler": {"share_prefix": %s, "batch_branches": %s}
  })";
  const auto run = [&](const char* share, const char* batch) {
    char b[1024];
    std::snprintf(b, sizeof b, body, share, batch);
    const Workload w = workload(b);
    const ServeResult r = serve::serve(w, hw(), {});
    expect_conserved(w, r);
    return r;
  };
  const ServeResult shared = run("true", "true"), copies = run("false", "true"), apart = run("true", "false");
  // 1024 prompt tokens = 64 pages; each branch one copied-or-new page of its own tokens.
  EXPECT_EQ(shared.peak_pages, 64 + 4 * 2);
  EXPECT_EQ(copies.peak_pages, 64 + 4 * (64 + 2));
  // The same steps (fan-out, 2 decodes); apart, each branch streams the 1024-token prefix itself:
  // never faster, and slower where the KV stream bounds the step (the decodes; the fan-out's
  // 128 rows keep the GEMMs busy either way).
  ASSERT_EQ(apart.steps.size(), 3u);
  ASSERT_EQ(shared.steps.size(), 3u);
  EXPECT_GE(apart.steps[0].ns, shared.steps[0].ns);
  for (size_t i = 1; i < 3; ++i) EXPECT_GT(apart.steps[i].ns, shared.steps[i].ns) << i;
}

}  // namespace
}  // namespace ahbm

// P-B-D mode (docs/serving.md, "P-B-D"): a 2-group chip split into a prefill and a decode pool.
namespace ahbm {
namespace {

HwConfig two_groups() { return with_groups(2); }

// Some step of pool `p` overlaps some step of pool `q` in time (the pools step at once).
bool pools_overlap(const ServeResult& r, int p, int q) {
  for (const auto& a : r.steps)
    for (const auto& b : r.steps)
      if (a.pool == p && b.pool == q && a.start_ns < b.start_ns + b.ns && b.start_ns < a.start_ns + a.ns) return true;
  return false;
}


TEST(ServePbd, EveryRequestFinishesOncePagesReturnBufferStaysBounded) {
  const Workload w = with_pbd(kAgentic, R"({"prefill_groups": 1, "buffer_max": 2, "micro_batch": 2})");
  const HwConfig h = two_groups();
  const ServeResult r = serve::serve(w, h, {});
  expect_conserved(w, r);
  ASSERT_TRUE(r.pbd.has_value());
  const serve::PbdResult& p = *r.pbd;
  EXPECT_EQ(p.prefill.groups, 1);
  EXPECT_EQ(p.decode.groups, 1);
  EXPECT_EQ(p.sequences, int64_t(r.workflows.size()));  // every workflow's prompt went through the buffer
  for (const auto& [at, n] : p.buffer) {
    EXPECT_GE(n, 0);
    EXPECT_LE(n, 2) << "at " << at;
  }
  EXPECT_EQ(p.buffer.back().second, 0);
  // The prefill pool runs prompts only, at most micro_batch a step; the decode pool everything else.
  int prefill_steps = 0, decode_steps = 0;
  for (const auto& s : r.steps) {
    if (s.pool == 0) {
      ++prefill_steps;
      EXPECT_LE(s.workflows, 2);
      EXPECT_EQ(s.agents, s.workflows);
    } else {
      ++decode_steps;
    }
  }
  EXPECT_EQ(prefill_steps, p.prefill.steps);
  EXPECT_EQ(decode_steps, p.decode.steps);
  // The two pools run at once: some prefill step overlaps some decode step in time.
  EXPECT_TRUE(pools_overlap(r, 0, 1));
  // Each pool's steps follow one another.
  double end[2] = {0, 0};
  for (const auto& s : r.steps) {
    EXPECT_GE(s.start_ns, end[s.pool] - 1e-9);
    end[s.pool] = s.start_ns + s.ns;
  }
  // Every prompt's KV was moved once: K and V of 2 KV heads x 2 layers x 32 dims x 2 bytes a token,
  // each transfer latency + bytes / bandwidth (ideal NoC: the HBM slices of one group's 8 PEs).
  uint64_t bytes = 0;
  int sequences = 0;
  for (const auto& t : p.transfers) {
    bytes += t.bytes;
    sequences += t.sequences;
    EXPECT_LE(t.sequences, 2);
    EXPECT_DOUBLE_EQ(t.ns, 10.0 + double(t.bytes) / (h.pe.hbm.bandwidth_gbps * 8));
  }
  uint64_t prompt_tokens = 0;
  for (const auto& s : serve::expand(w)) prompt_tokens += uint64_t(s.prompt_tokens);
  EXPECT_EQ(bytes, prompt_tokens * 2 * 2 * 2 * 32 * 2);
  EXPECT_EQ(sequences, int(r.workflows.size()));
  EXPECT_EQ(p.path_gbps, h.pe.hbm.bandwidth_gbps * 8);
  // A workflow's first token comes after its prompt's transfer.
  const Json s = summary_json(w, h, r);
  EXPECT_EQ(s["pbd"]["transfer"]["bytes"].get<uint64_t>(), bytes);
  EXPECT_LE(s["pbd"]["buffer"]["max"].get<double>(), 2.0);
  EXPECT_LE(s["steps"]["chip_busy_fraction"].get<double>(), 1.0);
  // THInfer's model: the slowest stage's busy time bounds the run, so the simulated throughput
  // is at most the model's.
  EXPECT_LE(s["pbd"]["thinfer"]["simulated_over_model"].get<double>(), 1.0 + 1e-12);
  EXPECT_GT(s["pbd"]["thinfer"]["simulated_over_model"].get<double>(), 0.0);
}

TEST(ServePbd, HostPathTimesTransfersOverTheHostLink) {
  const Workload w = with_pbd(kAgentic, R"({"prefill_groups": 1, "kv_path": "host"})");
  const HwConfig h = two_groups();
  const ServeResult r = serve::serve(w, h, {});
  expect_conserved(w, r);
  ASSERT_FALSE(r.pbd->transfers.empty());
  for (const auto& t : r.pbd->transfers)
    EXPECT_DOUBLE_EQ(t.ns, 2 * h.host.latency_ns + double(t.bytes) / h.host.bandwidth_gbps);
}

TEST(ServePbd, SmallerBufferRaisesBackPressureTime) {
  // A burst of requests with long cached contexts and short prefills: a decode step streams
  // every active request's context, a prefill step one's, so the decode pool pulls slower than
  // the prefill pool fills the buffer, and the buffer's bound stops the prefill pool.
  const char* burst = R"({
    "arrival": {"process": "timestamps", "times_ns": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]},
    "templates": [{"name": "chat", "prompt_tokens": 1024, "cached_tokens": 1008, "answer_tokens": 24}],
    "scheduler": {"max_batch_tokens": 4096}
  })";
  const auto run = [&](int buffer_max) {
    const Workload w = with_pbd(burst, R"({"prefill_groups": 1, "micro_batch": 1, "buffer_max": )" +
                                           std::to_string(buffer_max) + "}");
    const ServeResult r = serve::serve(w, two_groups(), {});
    expect_conserved(w, r);
    for (const auto& [at, n] : r.pbd->buffer) EXPECT_LE(n, buffer_max);
    return r;
  };
  const ServeResult tight = run(1), roomy = run(2), unbounded = run(12);
  EXPECT_GT(tight.pbd->backpressure_ns, roomy.pbd->backpressure_ns) << roomy.pbd->backpressure_ns;
  EXPECT_GT(roomy.pbd->backpressure_ns, 0.0);
  EXPECT_EQ(unbounded.pbd->backpressure_ns, 0.0);  // room for every request: never stopped
}

// THInfer's DP_P: prefill_pools prefill pools of prefill_groups groups each, sharing the buffer
// and the decode pool. A prefill-bound burst (long uncached prompts, short answers) on a 3-group
// chip: with two prefill pools of one group the prompts are prefilled two at a time, in steps
// that overlap, the buffer bound holds over both pools' prompts in flight, and the burst ends
// sooner than with one prefill pool; the summary has each pool and THInfer's model divides T_p by
// DP_P.
TEST(ServePbd, SeveralPrefillPoolsShareTheBufferAndTheDecodePool) {
  const char* burst = R"({
    "arrival": {"process": "timestamps", "times_ns": [0, 0, 0, 0, 0, 0, 0, 0]},
    "templates": [{"name": "chat", "prompt_tokens": 512, "answer_tokens": 2}]
  })";
  const std::string pools = R"({"prefill_groups": 1, "decode_groups": 1, "micro_batch": 1, "buffer_max": 3)";
  const Workload one = with_pbd(burst, pools + "}"), two = with_pbd(burst, pools + R"(, "prefill_pools": 2})");
  const HwConfig h = with_groups(3);
  const ServeResult a = serve::serve(one, h, {}), b = serve::serve(two, h, {});
  expect_conserved(one, a);
  expect_conserved(two, b);
  EXPECT_EQ(a.pbd->prefill_pools.size(), 0u);
  ASSERT_EQ(b.pbd->prefill_pools.size(), 2u);
  // Steps by pool: prefill pools 0 and 1, the decode pool 2; both prefill pools prefilled prompts.
  int steps[3] = {0, 0, 0};
  for (const auto& st : b.steps) {
    ASSERT_LT(st.pool, 3);
    ++steps[st.pool];
  }
  EXPECT_GT(steps[0], 0);
  EXPECT_GT(steps[1], 0);
  EXPECT_EQ(steps[0] + steps[1], 8);  // one prompt a step (micro_batch 1)
  EXPECT_EQ(b.pbd->prefill.steps, 8);
  EXPECT_EQ(b.pbd->prefill_pools[0].steps + b.pbd->prefill_pools[1].steps, 8);
  EXPECT_DOUBLE_EQ(b.pbd->prefill.busy_ns, b.pbd->prefill_pools[0].busy_ns + b.pbd->prefill_pools[1].busy_ns);
  EXPECT_EQ(b.pbd->prefill.groups, 2);
  EXPECT_TRUE(pools_overlap(b, 0, 1));
  for (const auto& [at, n] : b.pbd->buffer) EXPECT_LE(n, 3) << "at " << at;
  EXPECT_LT(b.end_ns, a.end_ns);
  // The summary: the stage's totals, each pool, DP_P in THInfer's model; the one-pool summary has neither.
  const Json sa = summary_json(one, h, a), sb = summary_json(two, h, b);
  EXPECT_FALSE(sa["pbd"]["prefill_pool"].contains("by_pool"));
  EXPECT_FALSE(sa["pbd"]["thinfer"].contains("dp_p"));
  EXPECT_EQ(sb["pbd"]["prefill_pool"]["pools"], 2);
  ASSERT_EQ(sb["pbd"]["prefill_pool"]["by_pool"].size(), 2u);
  EXPECT_EQ(sb["pbd"]["prefill_pool"]["by_pool"][1]["name"], "prefill1");
  EXPECT_EQ(sb["pbd"]["thinfer"]["dp_p"], 2);
  EXPECT_EQ(sb["pbd"]["thinfer"]["bottleneck"], "prefill");
  EXPECT_EQ(sb["workload"]["scheduler"]["pbd"]["prefill_pools"], 2);
  EXPECT_DOUBLE_EQ(sb["pbd"]["prefill_pool"]["busy_fraction"].get<double>(), b.pbd->prefill.busy_ns / (2 * b.end_ns));
  // T_p is one pool's time per micro-batch; the stage runs DP_P of them at once.
  const double t_p = sb["pbd"]["thinfer"]["t_p_ns"].get<double>(), t_d = sb["pbd"]["thinfer"]["t_d_ns"].get<double>();
  EXPECT_DOUBLE_EQ(t_p, b.pbd->prefill.busy_ns * 1 / 8);
  EXPECT_GT(t_p / 2, t_d);
  EXPECT_NE(serve::serve_vcd(b).find(" prefill1_busy "), std::string::npos);  // scope pbd
  // Pools that do not fit the chip are refused naming prefill_pools.
  try {
    serve::serve(with_pbd(burst, pools + R"(, "prefill_pools": 3})"), h, {});
    ADD_FAILURE() << "3 x 1 + 1 groups of a 3-group chip were accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("scheduler.pbd.prefill_pools = 3"), std::string::npos) << e.what();
  }
}

// DP_D: decode_pools decode pools of decode_groups groups each. A decode-bound burst (short
// prompts, long answers) on a 3-group chip: with two decode pools of one group, the idle one
// pulls the next prefilled prompts, each workflow decodes on the pool that pulled it, both pools'
// steps overlap, and the burst ends sooner than with one decode pool of one group.
TEST(ServePbd, SeveralDecodePoolsPullFromTheOneBuffer) {
  const char* burst = R"({
    "arrival": {"process": "timestamps", "times_ns": [0, 0, 0, 0, 0, 0, 0, 0]},
    "templates": [{"name": "chat", "prompt_tokens": 96, "cached_tokens": 64, "answer_tokens": 24}],
    "scheduler": {"max_batch_tokens": 2}
  })";
  const std::string pools = R"({"prefill_groups": 1, "decode_groups": 1, "micro_batch": 1, "buffer_max": 4)";
  const Workload one = with_pbd(burst, pools + "}"), two = with_pbd(burst, pools + R"(, "decode_pools": 2})");
  const HwConfig h = with_groups(3);
  const ServeResult a = serve::serve(one, h, {}), b = serve::serve(two, h, {});
  expect_conserved(one, a);
  expect_conserved(two, b);
  ASSERT_EQ(b.pbd->decode_pools.size(), 2u);
  EXPECT_GT(b.pbd->decode_pools[0].steps, 0);
  EXPECT_GT(b.pbd->decode_pools[1].steps, 0);
  EXPECT_EQ(b.pbd->decode.steps, b.pbd->decode_pools[0].steps + b.pbd->decode_pools[1].steps);
  EXPECT_EQ(b.pbd->decode.groups, 2);
  EXPECT_TRUE(pools_overlap(b, 1, 2));
  EXPECT_LT(b.end_ns, a.end_ns);
  const Json sb = summary_json(two, h, b);
  EXPECT_EQ(sb["pbd"]["decode_pool"]["pools"], 2);
  EXPECT_EQ(sb["pbd"]["decode_pool"]["by_pool"][0]["name"], "decode0");
  EXPECT_EQ(sb["pbd"]["thinfer"]["dp_d"], 2);
  EXPECT_FALSE(sb["pbd"]["thinfer"].contains("dp_p"));
  EXPECT_EQ(sb["workload"]["scheduler"]["pbd"]["decode_pools"], 2);
  EXPECT_DOUBLE_EQ(sb["steps"]["chip_busy_fraction"].get<double>(),
                   (b.pbd->prefill.busy_ns + b.pbd->decode.busy_ns) / (3 * b.end_ns));
  // Pools that do not fit the chip are refused naming decode_pools.
  try {
    serve::serve(with_pbd(burst, pools + R"(, "decode_pools": 3})"), h, {});
    ADD_FAILURE() << "1 + 3 x 1 groups of a 3-group chip were accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("decode_pools = 3"), std::string::npos) << e.what();
  }
}

// A prompt cached whole has nothing to prefill: it enters the buffer without a prefill step and
// an idle decode pool pulls it at once (no step's end would wake it: this was a stall).
TEST(ServePbd, APromptCachedWholeGoesThroughTheBufferWithoutAStep) {
  for (const char* admission : {"", R"(, "admission": "on_demand", "preemption": "swap")"}) {
    SCOPED_TRACE(admission);
    const std::string body = std::string(R"({"arrival": {"process": "timestamps", "times_ns": [0, 0]},
      "templates": [{"name": "chat", "prompt_tokens": 64, "cached_tokens": 64, "answer_tokens": 3}],
      "scheduler": {"policy": "fcfs")") + admission + "}}";
    const Workload w = with_pbd(body.c_str(), R"({"prefill_groups": 1})");
    const ServeResult r = serve::serve(w, two_groups(), {});
    expect_conserved(w, r);
    EXPECT_EQ(r.pbd->prefill.steps, 0);
    EXPECT_EQ(r.pbd->sequences, 2);
    ASSERT_FALSE(r.pbd->transfers.empty());
    EXPECT_EQ(r.pbd->transfers.front().start_ns, 0.0);
  }
}

TEST(ServePbd, PoolsMustFitTheChipAndTheBlockIsChecked) {
  const Workload w = with_pbd(kAgentic, R"({"prefill_groups": 1})");
  try {
    serve::serve(w, hw(), {});
    ADD_FAILURE() << "a 1-group chip was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("groups = 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[2, 1024]"), std::string::npos) << e.what();
  }
  const Workload too_many = with_pbd(kAgentic, R"({"prefill_groups": 2})");
  try {
    serve::serve(too_many, two_groups(), {});
    ADD_FAILURE() << "2 + 0 groups of a 2-group chip were accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("scheduler.pbd.prefill_groups = 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(with_pbd(kAgentic, R"({"buffer_max": 2, "micro_batch": 3})"), InputError);
  EXPECT_THROW(with_pbd(kAgentic, R"({"kv_path": "wire"})"), InputError);
  EXPECT_THROW(with_pbd(kAgentic, R"({"buffer_size": 2})"), InputError);
  // Without the block the 2-group chip serves co-located: no P-B-D result.
  EXPECT_FALSE(serve::serve(workload(kAgentic), two_groups(), {}).pbd.has_value());
}

}  // namespace
}  // namespace ahbm

// serve's waves.vcd (ahbm-sim serve --vcd): the counter tracks as VCD signals.
namespace ahbm {
namespace {

// name -> [(t_ns, value)] of a VCD of wire signals (the serve writer's).
std::map<std::string, std::vector<std::pair<uint64_t, uint64_t>>> read_vcd(const std::string& vcd) {
  std::map<std::string, std::string> name_of;
  std::map<std::string, std::vector<std::pair<uint64_t, uint64_t>>> out;
  std::istringstream in(vcd);
  std::string line, scope;
  uint64_t t = 0;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string w;
    ls >> w;
    if (w == "$scope") {
      std::string kind, name;
      ls >> kind >> name;
      scope += name + ".";
    } else if (w == "$upscope") {
      scope.erase(scope.rfind('.', scope.size() - 2) + 1);
    } else if (w == "$var") {
      std::string kind, width, id, name;
      ls >> kind >> width >> id >> name;
      name_of[id] = scope + name;
    } else if (!w.empty() && w[0] == '#') {
      t = std::stoull(w.substr(1));
    } else if (!w.empty() && w[0] == 'b') {
      std::string id;
      ls >> id;
      out[name_of.at(id)].emplace_back(t, std::stoull(w.substr(1), nullptr, 2));
    } else if (!w.empty() && (w[0] == '0' || w[0] == '1') && w.size() > 1) {
      out[name_of.at(w.substr(1))].emplace_back(t, uint64_t(w[0] - '0'));
    }
  }
  return out;
}

// The value in effect at `t` (after every change at t).
uint64_t at(const std::vector<std::pair<uint64_t, uint64_t>>& v, uint64_t t) {
  uint64_t x = 0;
  for (const auto& [when, value] : v)
    if (when <= t) x = value;
  return x;
}

TEST(ServeVcd, SignalsFollowTheSteps) {
  const Workload w = workload(kAgentic);
  const ServeResult r = serve::serve(w, hw(), {});
  const auto s = read_vcd(serve::serve_vcd(r));
  for (const char* n : {"ahbm.serve.kv_pages", "ahbm.serve.queue.waiting", "ahbm.serve.queue.active",
                        "ahbm.serve.batch.tokens", "ahbm.serve.batch.workflows", "ahbm.serve.busy"})
    ASSERT_TRUE(s.count(n)) << n;
  for (const auto& st : r.steps) {
    const uint64_t t = uint64_t(std::llround(st.start_ns));
    EXPECT_EQ(at(s.at("ahbm.serve.kv_pages"), t), uint64_t(st.kv_pages)) << t;
    EXPECT_EQ(at(s.at("ahbm.serve.batch.tokens"), t), uint64_t(st.tokens)) << t;
    EXPECT_EQ(at(s.at("ahbm.serve.queue.waiting"), t), uint64_t(st.waiting)) << t;
    EXPECT_EQ(at(s.at("ahbm.serve.busy"), t), 1u) << t;
  }
  EXPECT_EQ(s.at("ahbm.serve.busy").back().second, 0u);
  // Between steps the chip idles (tool calls, arrivals): busy falls to 0 there.
  EXPECT_GT(std::count_if(s.at("ahbm.serve.busy").begin(), s.at("ahbm.serve.busy").end(),
                          [](const auto& c) { return c.second == 0; }), 1);
}

TEST(ServeVcd, PbdAddsTheBufferPoolsAndTransfers) {
  const Workload w = with_pbd(kAgentic, R"({"prefill_groups": 1, "buffer_max": 2, "micro_batch": 2})");
  const ServeResult r = serve::serve(w, two_groups(), {});
  const auto s = read_vcd(serve::serve_vcd(r));
  for (const char* n : {"ahbm.serve.pbd.buffer", "ahbm.serve.pbd.prefill_busy", "ahbm.serve.pbd.decode_busy",
                        "ahbm.serve.pbd.transfer"})
    ASSERT_TRUE(s.count(n)) << n;
  EXPECT_FALSE(s.count("ahbm.serve.busy"));
  uint64_t most = 0;
  for (const auto& c : s.at("ahbm.serve.pbd.buffer")) most = std::max(most, c.second);
  EXPECT_GE(most, 1u);
  EXPECT_LE(most, 2u);
  EXPECT_EQ(s.at("ahbm.serve.pbd.buffer").back().second, 0u);
  for (const auto& st : r.steps)
    EXPECT_EQ(at(s.at(st.pool == 0 ? "ahbm.serve.pbd.prefill_busy" : "ahbm.serve.pbd.decode_busy"),
                 uint64_t(std::llround(st.start_ns))), 1u);
  const auto& x = s.at("ahbm.serve.pbd.transfer");
  const auto rises = std::count_if(x.begin(), x.end(), [](const auto& c) { return c.second == 1; });
  EXPECT_GE(rises, 1);
  EXPECT_LE(size_t(rises), r.pbd->transfers.size());
  EXPECT_EQ(x.back().second, 0u);
}

}  // namespace
}  // namespace ahbm

// Admission on demand and preemption (docs/serving.md, "Admission on demand and preemption").
namespace ahbm {
namespace {

// kAgentic with the scheduler fields `sched` (a JSON object's members).
Workload agentic_with(const std::string& sched) {
  Json j = Json::parse(kAgentic);
  j["scheduler"] = Json::parse("{" + sched + "}");
  j["name"] = "w";
  j["scenario"] = scenario_path();
  return serve::parse_workload(j, "workload.json");
}

// The test model's page: 16 tokens x head_dim 32 x 2 (K, V) x 2 bytes x 2 layers x 2 KV heads.
constexpr uint64_t kPageBytes = 16 * 32 * 2 * 2 * 2 * 2;

// 8 PEs x `pages` pages a PE.
HwConfig pool_of(int pages) {
  HwConfig h = hw();
  h.pe.hbm.capacity_bytes = uint64_t(pages) * kPageBytes;
  return h;
}

// The largest sum, at a step's start, of the reservations of the workflows admitted and not done.
int64_t max_reserved_under_way(const ServeResult& r) {
  int64_t most = 0;
  for (const auto& s : r.steps) {
    int64_t reserved = 0;
    for (const auto& f : r.workflows)
      if (f.admitted_ns <= s.start_ns && f.done_ns > s.start_ns) reserved += f.reserved_pages;
    most = std::max(most, reserved);
  }
  return most;
}

// Policy B3 reads copies of the peer CUBEs' shards placed when the KV was written: with B3 among a
// step's policies (B3, or auto, which may pick it) every KV page is held on each CUBE of its group,
// so a PE holds half as many pages of its own on the 2-CUBE test chip, admission holds that
// smaller pool, and the summary says how many copies a page has.
TEST(Serve, B3AndAutoHoldEveryKvPageOncePerCube) {
  const HwConfig small = pool_of(12);
  for (const std::string policy : {"A", "B2", "B3", "auto"}) {
    SCOPED_TRACE(policy);
    Json j = Json::parse(kAgentic);
    j["scheduler"]["attention_policy"] = policy;
    const Workload w = workload(j.dump());
    const ServeResult r = serve::serve(w, small, {});
    expect_conserved(w, r);
    const int copies = policy == "B3" || policy == "auto" ? small.group.cubes : 1;
    EXPECT_EQ(r.kv_copies, copies);
    EXPECT_EQ(r.pages_per_pe, 12 / copies);
    EXPECT_LE(max_reserved_under_way(r), r.pages_total);
    EXPECT_EQ(summary_json(w, small, r)["kv"]["copies_per_page"], copies);
  }
}

// scheduler.objective: auto's per-part choice minimises the estimate's energy instead of its time
// (runtime/plan/choose.h). On the shipped agentic_mix the energy run spends fewer joules per
// output token and takes longer (docs/policies.md, "Objectives"); both conserve every request;
// the summary echoes the field. (Each part is chosen alone, not the step jointly: on other
// workloads the gain can vanish, docs/policies.md.)
TEST(Serve, TheEnergyObjectiveSpendsLessEnergyPerTokenForMoreTime) {
  const HwConfig chip;
  Json by_time, by_energy;
  for (const char* objective : {"time", "energy"}) {
    Workload w = serve::load_workload(test::source_path("traces/serve/agentic_mix.json"));
    w.scheduler.attention_policy = "auto";
    w.scheduler.objective = objective;
    const ServeResult r = serve::serve(w, chip, {});
    expect_conserved(w, r);
    (std::string(objective) == "time" ? by_time : by_energy) = summary_json(w, chip, r);
  }
  EXPECT_FALSE(by_time["workload"]["scheduler"].contains("objective"));  // the default is not echoed
  EXPECT_EQ(by_energy["workload"]["scheduler"]["objective"], "energy");
  const double j_time = by_time["energy"]["j_per_output_token"].get<double>();
  const double j_energy = by_energy["energy"]["j_per_output_token"].get<double>();
  EXPECT_LT(j_energy, 0.99 * j_time);
  EXPECT_GT(by_energy["end_ns"].get<double>(), by_time["end_ns"].get<double>());
}

TEST(ServePreemption, ReserveIsTheDefaultAndChangesNothing) {
  const Workload plain = workload(kAgentic), reserve = agentic_with(R"("admission": "reserve")");
  const HwConfig h = pool_of(6);
  const ServeResult a = serve::serve(plain, h, {}), b = serve::serve(reserve, h, {});
  EXPECT_FALSE(a.preemption.has_value());
  EXPECT_FALSE(b.preemption.has_value());
  EXPECT_EQ(summary_json(plain, h, a).dump(), summary_json(reserve, h, b).dump());
  EXPECT_EQ(serve::requests_csv(a), serve::requests_csv(b));
  EXPECT_EQ(serve::serve_trace_json(a), serve::serve_trace_json(b));
  EXPECT_FALSE(summary_json(plain, h, a).contains("preemption"));
}

TEST(ServePreemption, OnDemandAdmitsMorePreemptsAndConservesEverything) {
  // 48 pages: an agentic workflow reserves about 22, so reserve admits 2 at once; its prompt
  // takes 13, so on demand admits 3 and runs out as their rounds grow.
  const HwConfig h = pool_of(6);
  const Workload reserve = workload(kAgentic);
  const ServeResult base = serve::serve(reserve, h, {});
  for (const char* mode : {"recompute", "swap"}) {
    SCOPED_TRACE(mode);
    const Workload w = agentic_with(std::string(R"("admission": "on_demand", "preemption": ")") + mode + "\"");
    const ServeResult r = serve::serve(w, h, {});
    expect_conserved(w, r);  // each request finishes once, tokens as requested, every page freed
    ASSERT_TRUE(r.preemption.has_value());
    const auto& p = *r.preemption;
    // More workflows under way at once than their reservations allow (reserve never does that:
    // Serve.AdmissionHoldsTheKvPoolAndQueuesTheRest).
    EXPECT_GT(max_reserved_under_way(r), r.pages_total);
    EXPECT_LE(max_reserved_under_way(base), base.pages_total);
    EXPECT_GT(p.preemptions, 0);
    int64_t by_workflows = 0, main_preemptions = 0;
    for (const auto& f : r.workflows) by_workflows += f.preemptions;
    for (const auto& q : r.requests)
      if (q.round < 0) main_preemptions += q.preemptions;
    EXPECT_EQ(by_workflows, p.preemptions);
    EXPECT_EQ(main_preemptions, p.preemptions);  // the main request is live through its workflow
    // Every preempted workflow came back: one restore per preemption.
    int64_t out = 0, back = 0;
    for (const auto& e : p.events) (e.restore ? back : out) += 1;
    EXPECT_EQ(out, p.preemptions);
    EXPECT_EQ(back, p.preemptions);
    // New tokens over every step: the workload's prefills and decodes, plus what recompute
    // prefilled again.
    int64_t work = 0, stepped = 0;
    for (const auto& s : serve::expand(w)) {
      work += s.prompt_tokens - s.cached_tokens + int64_t(s.rounds.size()) * s.join_tokens + s.answer_tokens;
      for (const auto& round : s.rounds)
        for (const auto& b : round) work += b.new_tokens + b.decode_tokens;
    }
    for (const auto& s : r.steps) stepped += s.tokens;
    EXPECT_EQ(stepped, work + p.recomputed_tokens);
    if (std::string(mode) == "recompute") {
      EXPECT_GT(p.recomputed_tokens, 0);
      EXPECT_EQ(p.swap_out_bytes, 0u);
    } else {
      EXPECT_EQ(p.recomputed_tokens, 0);
      EXPECT_GT(p.swap_out_bytes, 0u);
      EXPECT_EQ(p.swap_in_bytes, p.swap_out_bytes);
    }
    const Json s = summary_json(w, h, r);
    EXPECT_EQ(s["preemption"]["count"].get<int64_t>(), p.preemptions);
    EXPECT_EQ(s["preemption"]["mode"].get<std::string>(), mode);
    EXPECT_NE(serve::requests_csv(r).find(",preemptions\n"), std::string::npos);
  }
}

// Two plain requests at 0 on a pool of 8 pages: A (64-token prompt, 4 pages, 16 tokens) and B
// (40 tokens, 3 pages, 30 tokens) both fit. A's first decode takes the 8th page (its 5th, which
// holds all 16 of its tokens); B decodes 8 tokens into the room of its last page, then needs a
// page with none free and nobody after it in FCFS order: B is preempted holding 40 + 8 tokens
// (3 pages) and comes back when A is done (its 3 pages and next token need 4).
Workload two_requests(const std::string& mode) {
  const std::string csv = test::write_temp(test::temp_dir("serve-preempt"), "two.csv",
                                           "TIMESTAMP,ContextTokens,GeneratedTokens\n0,64,16\n0,40,30\n");
  Json j = Json::parse(R"({"arrival": {"process": "azure_csv"}})");
  j["arrival"]["file"] = csv;
  j["name"] = "w";
  j["scenario"] = scenario_path();
  j["scheduler"] = {{"admission", "on_demand"}};
  if (!mode.empty()) j["scheduler"]["preemption"] = mode;
  return serve::parse_workload(j, "workload.json");
}

double busy(const ServeResult& r) {
  double ns = 0;
  for (const auto& s : r.steps) ns += s.ns;
  return ns;
}

TEST(ServePreemption, RecomputePrefillsThePreemptedSequenceAgain) {
  const Workload w = two_requests("recompute");
  const ServeResult r = serve::serve(w, pool_of(1), {});
  expect_conserved(w, r);
  ASSERT_EQ(r.preemption->preemptions, 1);
  const auto& out = r.preemption->events.at(0);
  EXPECT_FALSE(out.restore);
  EXPECT_EQ(out.workflow, 1);
  EXPECT_EQ(out.pages, 3);
  // Its whole sequence: the prompt and the 8 tokens it had decoded, prefilled again.
  EXPECT_EQ(out.tokens, 40 + 8);
  EXPECT_EQ(r.preemption->recomputed_tokens, 48);
  EXPECT_EQ(r.requests[1].preemptions, 1);
  EXPECT_EQ(r.requests[0].preemptions, 0);
  EXPECT_EQ(r.workflows[1].recomputed_tokens, 48);
  // On demand both are admitted at 0; by reservation (A 5 pages, B 5 of the 8) B waits for A's end.
  EXPECT_EQ(r.workflows[1].admitted_ns, 0.0);
  Workload reserve = w;
  reserve.scheduler.admission = "reserve";
  const ServeResult by_reservation = serve::serve(reserve, pool_of(1), {});
  EXPECT_GE(by_reservation.workflows[1].admitted_ns, by_reservation.workflows[0].done_ns);
  // After its restore, B's next step prefills those 48 tokens (a timed step of the chip).
  const auto& back = r.preemption->events.at(1);
  EXPECT_TRUE(back.restore);
  EXPECT_GE(back.at_ns, r.workflows[0].done_ns);
  const auto step = std::find_if(r.steps.begin(), r.steps.end(), [&](const auto& s) { return s.start_ns >= back.at_ns; });
  ASSERT_NE(step, r.steps.end());
  EXPECT_EQ(step->tokens, 48);
  EXPECT_EQ(step->workflows, 1);
  EXPECT_GT(step->ns, 0.0);
  // Not being preempted (a pool that holds both): no recompute, less chip time, B done earlier.
  const ServeResult roomy = serve::serve(w, pool_of(4), {});
  EXPECT_EQ(roomy.preemption->preemptions, 0);
  EXPECT_GT(busy(r), busy(roomy));
  EXPECT_GT(r.workflows[1].done_ns, roomy.workflows[1].done_ns);
}

TEST(ServePreemption, SwapTimesEachDirectionOverTheHostLink) {
  const Workload w = two_requests("swap");
  HwConfig h = pool_of(1);
  h.host.latency_ns = 700;  // a slow link: the swaps show in the timeline
  h.host.bandwidth_gbps = 2;
  const ServeResult r = serve::serve(w, h, {});
  expect_conserved(w, r);
  const auto& p = *r.preemption;
  ASSERT_EQ(p.preemptions, 1);
  ASSERT_EQ(p.events.size(), 2u);
  EXPECT_EQ(p.page_bytes, kPageBytes);
  for (const auto& e : p.events) {
    SCOPED_TRACE(e.restore ? "in" : "out");
    EXPECT_EQ(e.workflow, 1);
    EXPECT_EQ(e.pages, 3);  // B's 48 tokens
    EXPECT_EQ(e.bytes, 3 * kPageBytes);
    EXPECT_NEAR(e.ns, 700 + double(3 * kPageBytes) / 2, 1e-3);  // latency + bytes / bandwidth
    EXPECT_EQ(e.tokens, 0);
    // On the step timeline: the next step at that boundary runs the swap before its jobs.
    const auto step = std::find_if(r.steps.begin(), r.steps.end(), [&](const auto& s) { return s.start_ns >= e.at_ns; });
    ASSERT_NE(step, r.steps.end());
    EXPECT_EQ(step->start_ns, e.at_ns);
    EXPECT_DOUBLE_EQ(step->swap_ns, e.ns);
    EXPECT_EQ(step->swap_bytes, e.bytes);
    EXPECT_GT(step->ns, step->swap_ns);
  }
  EXPECT_EQ(p.swap_out_bytes, 3 * kPageBytes);
  EXPECT_EQ(p.swap_in_bytes, 3 * kPageBytes);
  EXPECT_EQ(p.recomputed_tokens, 0);
  // Steps never overlap: the clock advanced by every swap.
  for (size_t i = 1; i < r.steps.size(); ++i) EXPECT_GE(r.steps[i].start_ns, r.steps[i - 1].start_ns + r.steps[i - 1].ns);
  const Json s = summary_json(w, h, r);
  EXPECT_NEAR(s["preemption"]["swap"]["ns"].get<double>(), 2 * (700 + double(3 * kPageBytes) / 2), 1e-3);
  // The same run on a faster link: the swaps cost less, nothing else changes in the tokens.
  HwConfig fast = h;
  fast.host.bandwidth_gbps = 64;
  const ServeResult f = serve::serve(w, fast, {});
  EXPECT_LT(f.end_ns, r.end_ns);
  EXPECT_EQ(f.preemption->swap_out_bytes, p.swap_out_bytes);
}

// P-B-D under on_demand: the decode pool pulls a prompt when its pages fit now (not its whole
// reservation), so it takes more workflows at once than under reserve, and when their answers
// outgrow the pool it preempts among its own workflows, which come back to it (swap: over the
// host link; recompute: prefilled again there). Everything still finishes once and every pool's
// pages go back.
TEST(ServePreemption, PbdOnDemandPullsByPagesNowAndPreemptsInTheDecodePool) {
  const char* burst = R"({
    "arrival": {"process": "timestamps", "times_ns": [0, 0, 0, 0, 0, 0]},
    "templates": [{"name": "chat", "prompt_tokens": 64, "answer_tokens": 120}]
  })";
  HwConfig h = pool_of(4);  // 4 pages a PE: 32 pages a pool of one group; a workflow reserves 12
  h.groups = 2;
  const auto run = [&](const std::string& admission) {
    Json j = Json::parse(burst);
    if (!admission.empty()) j["scheduler"] = Json::parse(admission);
    const std::string body = j.dump();
    const Workload w = with_pbd(body.c_str(), R"({"prefill_groups": 1, "micro_batch": 2, "buffer_max": 6})");
    const ServeResult r = serve::serve(w, h, {});
    expect_conserved(w, r);
    return r;
  };
  const ServeResult reserve = run(""), swap = run(R"({"admission": "on_demand", "preemption": "swap"})"),
                    recompute = run(R"({"admission": "on_demand", "preemption": "recompute"})");
  EXPECT_FALSE(reserve.preemption.has_value());
  // Workflows decoding in the decode pool at once: at most 2 under reserve (2 x 12 of 32 pages).
  const auto most_at_once = [](const ServeResult& r) {
    int most = 0;
    for (const auto& s : r.steps)
      if (s.pool == 1) most = std::max(most, s.workflows);
    return most;
  };
  EXPECT_LE(most_at_once(reserve), 2);
  for (const ServeResult* r : {&swap, &recompute}) {
    ASSERT_TRUE(r->preemption.has_value());
    EXPECT_GT(most_at_once(*r), 2);
    EXPECT_GT(r->preemption->preemptions, 0);
    EXPECT_LE(r->pbd->decode.peak_pages, r->pbd->decode.pages_total);
  }
  // The swaps run at the decode pool's step boundaries: its workflows are the ones that grow.
  int swap_steps = 0;
  for (const auto& s : swap.steps)
    if (s.swap_ns > 0) {
      ++swap_steps;
      EXPECT_EQ(s.pool, 1);
    }
  EXPECT_GT(swap_steps, 0);
  EXPECT_GT(swap.preemption->swap_out_bytes, 0u);
  EXPECT_EQ(swap.preemption->swap_in_bytes, swap.preemption->swap_out_bytes);
  EXPECT_GT(recompute.preemption->recomputed_tokens, 0);
}

// The chip has one host link: the swaps of every pool and P-B-D's KV transfers over the host take
// it one after another. Two decode pools preempting by swap, prompts pulled over the host: no two
// uses of the link overlap in time, and a step's wait for it is part of its time.
TEST(ServePreemption, SwapsAndHostTransfersShareTheOneHostLink) {
  const char* burst = R"({
    "arrival": {"process": "timestamps", "times_ns": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]},
    "templates": [{"name": "chat", "prompt_tokens": 64, "answer_tokens": 120}],
    "scheduler": {"admission": "on_demand", "preemption": "swap"}
  })";
  HwConfig h = pool_of(4);
  h.groups = 3;
  const Workload w = with_pbd(burst, R"({"prefill_groups": 1, "decode_groups": 1, "decode_pools": 2,
                                         "micro_batch": 2, "buffer_max": 6, "kv_path": "host"})");
  const ServeResult r = serve::serve(w, h, {});
  expect_conserved(w, r);
  std::vector<std::pair<double, double>> uses;  // [start, end) of each use of the host link
  double waited = 0;
  for (const auto& s : r.steps)
    if (s.swap_ns > 0) {
      uses.emplace_back(s.start_ns + s.host_wait_ns, s.start_ns + s.host_wait_ns + s.swap_ns);
      waited += s.host_wait_ns;
    }
  for (const auto& t : r.pbd->transfers) {
    uses.emplace_back(t.start_ns, t.start_ns + t.ns);
    waited += t.wait_ns;
  }
  ASSERT_GT(uses.size(), 2u);
  std::sort(uses.begin(), uses.end());
  for (size_t i = 1; i < uses.size(); ++i)
    EXPECT_LE(uses[i - 1].second, uses[i].first + 1e-6) << "uses " << i - 1 << " and " << i << " overlap";
  EXPECT_GT(waited, 0.0);
  const Json s = summary_json(w, h, r);
  double step_waits = 0;
  for (const auto& st : r.steps) step_waits += st.host_wait_ns;
  EXPECT_DOUBLE_EQ(s["preemption"]["swap"]["host_link_wait_ns"].get<double>(), step_waits);
}

TEST(ServePreemption, SameInputsGiveIdenticalOutputs) {
  const HwConfig h = pool_of(6);
  for (const char* mode : {"recompute", "swap"}) {
    SCOPED_TRACE(mode);
    const Workload w = agentic_with(std::string(R"("admission": "on_demand", "preemption": ")") + mode + "\"");
    const ServeResult a = serve::serve(w, h, {}), b = serve::serve(w, h, {});
    ASSERT_GT(a.preemption->preemptions, 0);
    EXPECT_EQ(summary_json(w, h, a).dump(), summary_json(w, h, b).dump());
    EXPECT_EQ(serve::requests_csv(a), serve::requests_csv(b));
    EXPECT_EQ(serve::serve_trace_json(a), serve::serve_trace_json(b));
    EXPECT_EQ(serve::serve_vcd(a), serve::serve_vcd(b));
  }
}

}  // namespace
}  // namespace ahbm

// Placement of workflows onto groups (docs/serving.md, "Placement"): spread (every workflow on
// every group) or prefix_affinity (slices of num_kv_heads groups, a workflow pinned to one).
namespace ahbm {
namespace {

HwConfig groups_of(int groups, int pages = 0) {
  HwConfig h = pages > 0 ? pool_of(pages) : hw();
  h.groups = groups;
  return h;
}

// `body` with scheduler.placement = `placement` (and the scheduler fields `sched`).
Workload placed(const char* body, const std::string& placement, const std::string& sched = "") {
  Json j = Json::parse(body);
  j["scheduler"] = Json::parse("{" + sched + "}");
  j["scheduler"]["placement"] = placement;
  j["name"] = "w";
  j["scenario"] = scenario_path();
  return serve::parse_workload(j, "workload.json");
}

// Two plain requests at 0 of different lengths: A (64-token prompt, 16 tokens), B (40, 30).
Workload two_plain(const std::string& placement, const std::string& rows = "0,64,16\n0,40,30\n") {
  const std::string csv = test::write_temp(test::temp_dir("serve-place"), "two.csv",
                                           "TIMESTAMP,ContextTokens,GeneratedTokens\n" + rows);
  Json j = Json::parse(R"({"arrival": {"process": "azure_csv"}})");
  j["arrival"]["file"] = csv;
  j["name"] = "w";
  j["scenario"] = scenario_path();
  j["scheduler"] = {{"placement", placement}};
  return serve::parse_workload(j, "workload.json");
}

double busy_of(const ServeResult& r, int pool) {
  double ns = 0;
  for (const auto& s : r.steps) ns += s.pool == pool ? s.ns : 0.0;
  return ns;
}

TEST(ServePlacement, SpreadIsTheDefaultAndChangesNothing) {
  const HwConfig h = groups_of(4);
  const Workload plain = workload(kAgentic), spread = placed(kAgentic, "spread");
  const ServeResult a = serve::serve(plain, h, {}), b = serve::serve(spread, h, {});
  EXPECT_EQ(plain.scheduler.placement, "spread");
  EXPECT_TRUE(a.slices.empty());
  EXPECT_EQ(summary_json(plain, h, a).dump(), summary_json(spread, h, b).dump());
  EXPECT_EQ(serve::requests_csv(a), serve::requests_csv(b));
  EXPECT_EQ(serve::serve_vcd(a), serve::serve_vcd(b));
  EXPECT_FALSE(summary_json(plain, h, a).contains("placement"));
  EXPECT_FALSE(summary_json(plain, h, a)["workload"]["scheduler"].contains("placement"));
}

// 4 groups = 2 slices of the model's 2 KV heads: A and B go to different slices, which step at
// once. Each runs as it would alone on a chip of one slice (2 groups), and the chip's time is the
// longer slice's busy time, not the sum; spread batches both on groups 0-1 and ends later.
TEST(ServePlacement, TwoWorkflowsOnDisjointSlicesRunInParallel) {
  const ServeResult r = serve::serve(two_plain("prefix_affinity"), groups_of(4), {});
  expect_conserved(two_plain("prefix_affinity"), r);
  ASSERT_EQ(r.slices.size(), 2u);
  EXPECT_EQ(r.slices[0].groups, 2);
  EXPECT_NE(r.workflows[0].slice, r.workflows[1].slice);
  EXPECT_EQ(r.slices[0].workflows, 1);
  EXPECT_EQ(r.slices[1].workflows, 1);
  const ServeResult a = serve::serve(two_plain("spread", "0,64,16\n"), groups_of(2), {});
  const ServeResult b = serve::serve(two_plain("spread", "0,40,30\n"), groups_of(2), {});
  EXPECT_DOUBLE_EQ(r.workflows[0].done_ns, a.end_ns);
  EXPECT_DOUBLE_EQ(r.workflows[1].done_ns, b.end_ns);
  const double s0 = busy_of(r, r.workflows[0].slice), s1 = busy_of(r, r.workflows[1].slice);
  EXPECT_DOUBLE_EQ(s0, a.end_ns);  // both start at 0 and step back to back
  EXPECT_DOUBLE_EQ(s1, b.end_ns);
  EXPECT_DOUBLE_EQ(r.end_ns, std::max(s0, s1));
  EXPECT_LT(r.end_ns, s0 + s1);
  const ServeResult spread = serve::serve(two_plain("spread"), groups_of(4), {});
  EXPECT_GT(spread.end_ns, r.end_ns);
  // The slices in the outputs: a busy signal each (both high from 0: they step at once) and a
  // summary entry each.
  const auto vcd = read_vcd(serve::serve_vcd(r));
  for (const char* n : {"ahbm.serve.slice0.busy", "ahbm.serve.slice1.busy"}) {
    ASSERT_TRUE(vcd.count(n)) << n;
    EXPECT_EQ(at(vcd.at(n), 0), 1u) << n;
  }
  const Json s = summary_json(two_plain("prefix_affinity"), groups_of(4), r);
  EXPECT_EQ(s["placement"]["rule"], "prefix_affinity");
  ASSERT_EQ(s["placement"]["slices"].size(), 2u);
  EXPECT_DOUBLE_EQ(s["placement"]["slices"][0]["busy_ns"].get<double>(), busy_of(r, 0));
  EXPECT_DOUBLE_EQ(s["steps"]["chip_busy_fraction"].get<double>(), (s0 + s1) / (2 * r.end_ns));
}

// Each slice has its own KV pages: admission (reserve) and preemption (on_demand) per slice,
// every request finishes once and every slice's pages go back.
TEST(ServePlacement, SlicesAdmitByTheirOwnPagesAndGiveThemBack) {
  const HwConfig h = groups_of(4, 6);  // 48 pages a slice: 2 agentic reservations (about 22 each)
  const Workload w = placed(kAgentic, "prefix_affinity");
  const ServeResult r = serve::serve(w, h, {});
  expect_conserved(w, r);
  ASSERT_EQ(r.slices.size(), 2u);
  EXPECT_EQ(r.pages_total, r.slices[0].pages_total + r.slices[1].pages_total);
  EXPECT_EQ(r.slices[0].workflows + r.slices[1].workflows, int(r.workflows.size()));
  int64_t most_on_chip = 0;
  for (const auto& st : r.steps) {
    int64_t on[2] = {0, 0};
    for (const auto& f : r.workflows)
      if (f.admitted_ns <= st.start_ns && f.done_ns > st.start_ns) on[f.slice] += f.reserved_pages;
    for (int i = 0; i < 2; ++i) EXPECT_LE(on[i], r.slices[size_t(i)].pages_total);
    most_on_chip = std::max(most_on_chip, on[0] + on[1]);
  }
  EXPECT_GT(most_on_chip, r.slices[0].pages_total);  // more under way than one slice holds
  for (const auto& p : r.slices) EXPECT_LE(p.peak_pages, p.pages_total);
  // On demand: a slice short of pages preempts its own workflows only.
  const Workload d = placed(kAgentic, "prefix_affinity", R"("admission": "on_demand", "preemption": "swap")");
  const ServeResult q = serve::serve(d, groups_of(4, 3), {});
  expect_conserved(d, q);
  EXPECT_GT(q.preemption->preemptions, 0);
}

// With groups = num_kv_heads there is one slice, the whole chip: the placements agree.
TEST(ServePlacement, OneSliceIsSpread) {
  const HwConfig h = groups_of(2, 6);
  for (const char* sched : {"", R"("admission": "on_demand")"}) {
    SCOPED_TRACE(sched);
    const Workload s = placed(kAgentic, "spread", sched), p = placed(kAgentic, "prefix_affinity", sched);
    const ServeResult a = serve::serve(s, h, {}), b = serve::serve(p, h, {});
    ASSERT_EQ(b.slices.size(), 1u);
    EXPECT_EQ(b.slices[0].groups, 2);
    EXPECT_EQ(serve::requests_csv(a), serve::requests_csv(b));
    EXPECT_EQ(serve::serve_trace_json(a), serve::serve_trace_json(b));
    EXPECT_EQ(serve::serve_vcd(a), serve::serve_vcd(b));
    Json sa = summary_json(s, h, a), sb = summary_json(p, h, b);
    sb.erase("placement");
    sb["workload"]["scheduler"].erase("placement");
    EXPECT_EQ(sa.dump(), sb.dump());
  }
}

// Seeded random serving configurations on the small chip: P-B-D with pools per stage (DP_P,
// DP_D), placement, reserve or on_demand admission with swap or recompute, attention policies,
// cached prefixes (whole ones too), fan-out rounds with tool calls and both joins, KV pools of a
// few pages a PE. Every configuration is valid by construction (the largest reservation fits the
// smallest pool), so each must finish with every request once, its tokens and every page back:
// no stall, no failure mid-run (the fuzzing that found a stall and a full-PE failure, both
// mended, ran 450 of these through the CLI).
TEST(ServeRandom, SeededConfigurationsFinishAndConserve) {
  std::mt19937_64 rng(20261203);
  const auto pick = [&](std::vector<int> v) { return v[size_t(rng() % v.size())]; };
  for (int i = 0; i < 24; ++i) {
    SCOPED_TRACE("configuration " + std::to_string(i));
    const int groups = pick({1, 2, 3, 4});
    Json sched = {{"policy", pick({0, 1}) ? "fcfs" : "srf"}, {"max_batch_tokens", pick({32, 256, 4096})}};
    if (groups >= 2 && pick({0, 1, 1})) {
      int pp = 1, pg = 1, dp = 1;
      do {
        pp = pick({1, 1, 2, 3});
        pg = pick({1, 1, 2});
        dp = pick({1, 1, 2, 3});
      } while (pp * pg + dp > groups);
      const int buffer = pick({1, 2, 4});
      sched["pbd"] = {{"prefill_groups", pg}, {"prefill_pools", pp}, {"decode_groups", 1}, {"decode_pools", dp},
                      {"buffer_max", buffer}, {"micro_batch", 1 + int(rng() % uint64_t(buffer))},
                      {"kv_path", pick({0, 1}) ? "noc" : "host"}};
    } else if (pick({0, 1})) {
      sched["placement"] = "prefix_affinity";
    }
    if (pick({0, 1})) {
      sched["admission"] = "on_demand";
      sched["preemption"] = pick({0, 1}) ? "swap" : "recompute";
    }
    sched["attention_policy"] = std::vector<std::string>{"A", "B2", "B3", "auto"}[rng() % 4];
    const int prompt = pick({16, 48, 96, 160});
    Json t = {{"name", "t"}, {"prompt_tokens", prompt}, {"cached_tokens", pick({0, 1, 2}) * prompt / 2},
              {"answer_tokens", pick({1, 4, 8})}};
    if (pick({0, 1, 1})) {
      t["rounds"] = pick({1, 2});
      t["fanout"] = {{"branches", pick({1, 2, 3})}, {"new_tokens", pick({1, 8, 16})},
                     {"decode_tokens", pick({1, 4, 8})}, {"tool_ns", pick({0, 2000})}};
      t["join"] = pick({0, 1}) ? Json{{"strategy", "all"}, {"tokens", pick({0, 16})}}
                               : Json{{"strategy", "first"}, {"first", 1}, {"tokens", pick({0, 16})}};
    }
    Json j = {{"seed", pick({1, 2, 3})},
              {"arrival", {{"process", "poisson"}, {"rate_per_s", pick({10000, 1000000})}, {"count", pick({1, 4, 9})}}},
              {"templates", Json::array({t})},
              {"scheduler", sched}};
    const Workload w = workload(j.dump());
    HwConfig h = pool_of(pick({4, 6, 16}));
    h.groups = groups;
    try {
      const ServeResult r = serve::serve(w, h, {});
      expect_conserved(w, r);
      expect_exact_trace(r, "workload " + j.dump());
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what() << "\nworkload " << j.dump() << " groups " << groups << " capacity "
                    << h.pe.hbm.capacity_bytes;
    }
  }
}

// A caller's own admission rule, injected through ServeOptions::admissions: one workflow per pool
// at a time (its whole reservation, and only into an empty pool).
class OneAtATime final : public serve::AdmissionRule {
 public:
  int64_t need(const serve::AdmissionCandidate& c) const override { return c.reservation; }
  bool fits(int64_t, const serve::PoolRoom& room) const override { return room.reserved == 0; }
  int64_t load(const serve::PoolRoom& room) const override { return room.reserved; }
  int64_t held(int64_t reservation) const override { return reservation; }
  int64_t pull_need(const serve::AdmissionCandidate& c) const override { return c.reservation; }
  bool grows_on_demand() const override { return false; }
};

serve::AdmissionRegistry with_one_at_a_time() {
  serve::AdmissionRegistry r = serve::builtin_admission_rules();
  r.add({"one_at_a_time", "one workflow per pool", std::make_shared<OneAtATime>()});
  return r;
}

TEST(ServeAdmission, ACustomRuleInjectedThroughTheOptionsDecidesAdmission) {
  // Both plain requests fit a pool of 16 pages per PE by reservation (5 + 5 pages): reserve
  // admits both at 0.
  Workload w = two_requests("");
  w.scheduler.admission = "reserve";
  const ServeResult reserve = serve::serve(w, pool_of(16), {});
  expect_conserved(w, reserve);
  EXPECT_EQ(reserve.workflows[0].admitted_ns, 0.0);
  EXPECT_EQ(reserve.workflows[1].admitted_ns, 0.0);
  // A's 64 + 16 tokens take 5 pages, B's 40 + 30 take 5 pages: at once, more than either alone.
  EXPECT_GT(reserve.peak_pages, 5);
  // The injected rule admits B only once A is done, so only one workflow's pages are ever in use.
  const serve::AdmissionRegistry rules = with_one_at_a_time();
  serve::ServeOptions opt;
  opt.admissions = &rules;
  w.scheduler.admission = "one_at_a_time";
  const ServeResult one = serve::serve(w, pool_of(16), opt);
  expect_conserved(w, one);
  EXPECT_EQ(one.workflows[0].admitted_ns, 0.0);
  EXPECT_GE(one.workflows[1].admitted_ns, one.workflows[0].done_ns);
  EXPECT_GT(one.workflows[0].done_ns, 0.0);
  EXPECT_EQ(one.peak_pages, 5);                      // one workflow's pages at a time
  EXPECT_FALSE(one.preemption);                      // it does not grow on demand: nothing to preempt
  // Without the registry the name is unknown.
  EXPECT_THROW(serve::serve(w, pool_of(16), {}), InputError);
}

TEST(ServeAdmission, AnUnknownRuleNamesTheFieldTheValueAndTheAllowedNames) {
  const auto error_of = [](const Workload& w, const serve::ServeOptions& opt) {
    try {
      serve::serve(w, pool_of(16), opt);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  Workload w = two_requests("");
  w.scheduler.admission = "lazy";
  std::string e = error_of(w, {});
  for (const char* part : {"workload.json: scheduler.admission", "\"lazy\"", "allowed: reserve, on_demand"})
    EXPECT_NE(e.find(part), std::string::npos) << e;
  // A caller's registry: its names are the allowed ones.
  const serve::AdmissionRegistry rules = with_one_at_a_time();
  serve::ServeOptions opt;
  opt.admissions = &rules;
  e = error_of(w, opt);
  EXPECT_NE(e.find("allowed: reserve, on_demand, one_at_a_time"), std::string::npos) << e;
  // Likewise the preemption rule of on_demand admission.
  w.scheduler.admission = "on_demand";
  w.scheduler.preemption = "drop";
  e = error_of(w, {});
  for (const char* part : {"workload.json: scheduler.preemption", "\"drop\"", "allowed: recompute, swap"})
    EXPECT_NE(e.find(part), std::string::npos) << e;
}

// serve's trace.json for Perfetto and exact readers (issue 44 item 5): every track named (the
// workflows' tracks, the step track of one pool, P-B-D's pools, prefix_affinity's slices), times
// in whole ns, no partial overlap under exact arithmetic.
TEST(ServeTrace, NamedTracksWholeNsTimesAndNoPartialOverlap) {
  expect_exact_trace(serve::serve(workload(kAgentic), hw(), {}), "spread");
  const Workload pbd = with_pbd(kAgentic, R"({"prefill_groups": 1, "buffer_max": 2, "micro_batch": 2})");
  expect_exact_trace(serve::serve(pbd, with_groups(2), {}), "P-B-D");
  Json affinity = Json::parse(kAgentic);
  affinity["scheduler"]["placement"] = "prefix_affinity";
  const ServeResult r = serve::serve(workload(affinity.dump()), with_groups(4), {});  // 2 slices of 2 groups
  ASSERT_GT(r.slices.size(), 1u);
  expect_exact_trace(r, "prefix_affinity");
  // The names themselves: a workflow's track, the slices'.
  const test::TraceEventsText ev = test::read_trace_events(serve::serve_trace_json(r));
  EXPECT_TRUE(ev.thread_names.count({1, r.workflows.back().id}));
  const std::string text = serve::serve_trace_json(r);
  EXPECT_NE(text.find("\"name\":\"workflow " + std::to_string(r.workflows.back().id) + "\""), std::string::npos);
  EXPECT_NE(text.find("\"name\":\"" + r.slices[1].name + "\""), std::string::npos);
}

// Issue 44 item 3 (a): a request trace served: one workflow per plain row or session, each row
// one request with the row's tokens, a session's rounds one after another in file order.
TEST(Serve, RequestCsvRowsAreServedAsTheirWorkflowsAndRequests) {
  const std::string dir = test::temp_dir("serve-request-csv");
  const std::string csv = test::write_temp(dir, "t.csv",
                                           "request_id,arrived_at,num_prefill_tokens,num_decode_tokens,session_id,agent_id\n"
                                           "0,0.000000,64,3,,\n"
                                           "1,0.000010,96,2,s,\n"
                                           "2,0.000020,16,4,s,a\n"
                                           "3,0.000020,24,2,s,b\n"
                                           "4,0.000030,48,5,,\n"
                                           "5,0.000040,8,3,s,a\n"
                                           "6,0.000040,12,1,s,b\n");
  const Workload w = workload(R"({"arrival": {"process": "request_csv", "file": ")" + csv + R"("}})");
  const ServeResult r = serve::serve(w, hw(), {});
  expect_conserved(w, r);
  ASSERT_EQ(r.workflows.size(), 3u);
  EXPECT_EQ(r.workflows[0].tmpl, "request_csv");
  EXPECT_EQ(r.workflows[1].tmpl, "request_csv_session");
  EXPECT_EQ(r.workflows[2].tmpl, "request_csv");
  EXPECT_DOUBLE_EQ(r.workflows[1].arrival_ns, 10000.0);
  EXPECT_DOUBLE_EQ(r.workflows[2].arrival_ns, 30000.0);
  EXPECT_EQ(r.workflows[1].requested_tokens, 2 + 4 + 2 + 3 + 1);
  // Every row one request: (workflow, round, branch) -> (prefill tokens, decode tokens).
  std::map<std::tuple<int, int, int>, std::pair<int, int>> want = {
      {{0, -1, -1}, {64, 3}}, {{1, -1, -1}, {96, 2}}, {{1, 0, 0}, {16, 4}}, {{1, 0, 1}, {24, 2}},
      {{2, -1, -1}, {48, 5}}, {{1, 1, 0}, {8, 3}},    {{1, 1, 1}, {12, 1}}};
  ASSERT_EQ(r.requests.size(), want.size());
  double round0_done = 0, round1_ready = 1e300;
  for (const serve::RequestRecord& q : r.requests) {
    const auto it = want.find({q.workflow, q.round, q.branch});
    ASSERT_NE(it, want.end()) << q.workflow << " " << q.round << " " << q.branch;
    EXPECT_EQ(q.prefill_tokens, it->second.first) << q.workflow << " " << q.round << " " << q.branch;
    EXPECT_EQ(q.requested_tokens, it->second.second);
    EXPECT_EQ(q.generated_tokens, it->second.second);
    if (q.workflow == 1 && q.round == 0) round0_done = std::max(round0_done, q.done_ns);
    if (q.workflow == 1 && q.round == 1) round1_ready = std::min(round1_ready, q.ready_ns);
    want.erase(it);
  }
  // The second round starts when the first has joined (both branches done).
  EXPECT_GE(round1_ready, round0_done);
}

}  // namespace
}  // namespace ahbm
