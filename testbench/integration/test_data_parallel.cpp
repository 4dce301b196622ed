// Data parallelism over a system of chips (issue 39; runtime/model/parallel.h, runtime/serve/engine.cpp,
// docs/system.md "Data parallelism"): model.parallel.dp replicas of the split, each on chips of its own,
// serve admitting every workflow to the least-loaded replica it fits.
#include <gtest/gtest.h>

#include <string>

#include "hw/common/base/error.h"
#include "runtime/model/parallel.h"
#include "runtime/run/driver.h"
#include "runtime/scenario/scenario.h"
#include "runtime/serve/engine.h"
#include "runtime/serve/serve_report.h"
#include "runtime/serve/serve_summary.h"
#include "runtime/serve/workload.h"
#include "test_runtime_support.h"
#include "test_serve_workloads.h"
#include "test_support.h"
#include "test_trace_exact.h"

namespace ahbm {
namespace {

using serve::ServeResult;
using serve::Workload;

// The serving tests' attention-only model (test_serve.cpp), with `parallel` when not null.
std::string scenario_file(const std::string& name, const Json& parallel) {
  Json s = Json::parse(R"({
    "model": {"head_dim": 32, "num_q_heads": 4, "num_kv_heads": 2, "layers": 2, "dtype": "fp16"},
    "kv": {"page_tokens": 16}, "shared_prefix_tokens": 256, "seed": 3,
    "agents": [{"name": "a0", "new_tokens": 16, "decode_tokens": 3}, {"name": "a1", "new_tokens": 16, "decode_tokens": 3}],
    "phases": [{"type": "prefill", "tokens": 64}, {"type": "fanout"}, {"type": "decode", "steps": 3}]
  })");
  s["name"] = name;
  if (!parallel.is_null()) s["model"]["parallel"] = parallel;
  return test::write_temp(test::temp_dir("dp-" + name), name + ".json", s.dump());
}

// The small whole model of test_pipeline_parallel.cpp (hidden 256, 4 heads of 64, 2 KV heads, 2 layers).
std::string whole_model_file(const std::string& name, const Json& parallel) {
  Json s = {{"name", name},
            {"model", {{"hidden_size", 256}, {"intermediate_size", 512}, {"num_attention_heads", 4},
                       {"num_key_value_heads", 2}, {"num_hidden_layers", 2}, {"vocab_size", 1000}, {"head_dim", 64},
                       {"dtype", "fp16"}, {"parallel", parallel}}},
            {"kv", {{"page_tokens", 16}}},
            {"shared_prefix_tokens", 64},
            {"seed", 3},
            {"agents", {{{"name", "a0"}, {"new_tokens", 4}}}},
            {"phases", {{{"type", "prefill"}, {"tokens", 32}}, {{"type", "fanout"}}, {{"type", "decode"}, {"steps", 2}}}}};
  return test::write_temp(test::temp_dir("dp-" + name), name + ".json", s.dump());
}

// `workflows` chats of 100 prompt tokens and 3 answer tokens, all arriving at t = 0.
Workload chats(const std::string& scenario, int workflows, const Json& scheduler = nullptr) {
  Json j = {{"name", "w"},
            {"scenario", scenario},
            {"seed", 5},
            {"arrival", {{"process", "timestamps"}, {"times_ns", std::vector<double>(size_t(workflows), 0.0)}}},
            {"templates", {{{"name", "chat"}, {"prompt_tokens", 100}, {"answer_tokens", 3}}}}};
  if (!scheduler.is_null()) j["scheduler"] = scheduler;
  return serve::parse_workload(j, "workload.json");
}

Workload agentic(const std::string& scenario, const Json& scheduler = nullptr) {
  Json j = Json::parse(test::kAgenticWorkload);  // test_serve.cpp's stream of agents and chats
  j["name"] = "w";
  j["scenario"] = scenario;
  if (!scheduler.is_null()) j["scheduler"] = scheduler;
  return serve::parse_workload(j, "workload.json");
}

HwConfig system_of(int chips, int groups = 1) {
  HwConfig hw = test::small_hw(2, 4);  // 2 CUBEs of 4 PEs: short steps
  hw.groups = groups;
  hw.system.chips = chips;
  hw.system.network.model = "switch";
  return hw;
}

Json summary_of(const Workload& w, const HwConfig& hw, const ServeResult& r) {
  return serve::to_json(serve::serve_summary(w, hw, r));
}

TEST(DataParallel, SplitNamesAndChipCounts) {
  Parallelism p;
  EXPECT_EQ(p.name(), "model.parallel.tp = 1");
  p.tp = 4;
  EXPECT_EQ(p.name(), "model.parallel.tp = 4");
  p.pp = 2;
  EXPECT_EQ(p.name(), "model.parallel.tp = 4 x pp = 2");
  p.dp = 3;
  EXPECT_EQ(p.name(), "model.parallel.dp = 3 x tp = 4 x pp = 2");
  EXPECT_EQ(p.chips(), 8);  // one replica's
  EXPECT_EQ(p.system_chips(), 24);
  p.tp = 1, p.pp = 1;
  EXPECT_EQ(p.name(), "model.parallel.dp = 3");
  EXPECT_TRUE(p.none());  // the model is not split: each replica is one chip
  const std::string e = test::input_error_of([&] { check_split_fits_system(p, 2, "hw.json", "s.json"); });
  EXPECT_NE(e.find("model.parallel.dp = 3 needs 3 chips"), std::string::npos) << e;
  EXPECT_NE(e.find("system.chips = 2 (allowed: dp x tp x pp up to system.chips"), std::string::npos) << e;
}

// Two replicas, two workflows at once: each replica serves one, alone, so every request's times
// are those of one workflow served on one chip (identical step times, to the ns), and the whole
// run ends when that one does; one chip serving both batches them and ends later.
TEST(DataParallel, TwoReplicasServeTwoWorkflowsEachAsOneChipServesOne) {
  const std::string dp2 = scenario_file("dp2", {{"dp", 2}}), dp1 = scenario_file("dp1", nullptr);
  const Workload both = chats(dp2, 2), one = chats(dp1, 1), shared = chats(dp1, 2);
  const ServeResult r2 = serve::serve(both, system_of(2), {});
  const ServeResult r1 = serve::serve(one, system_of(1), {});
  const ServeResult rs = serve::serve(shared, system_of(1), {});
  ASSERT_EQ(r2.workflows.size(), 2u);
  for (const serve::WorkflowRecord& f : r2.workflows) {
    EXPECT_EQ(f.admitted_ns, 0.0);
    EXPECT_EQ(f.done_ns, r1.workflows[0].done_ns) << "workflow " << f.id;
    EXPECT_EQ(f.generated_tokens, r1.workflows[0].generated_tokens);
  }
  EXPECT_EQ(r2.end_ns, r1.end_ns);
  EXPECT_GT(rs.end_ns, r1.end_ns);  // batched on one chip: longer steps
  // Each replica took one; each ran the single run's steps.
  ASSERT_EQ(r2.replicas.size(), 2u);
  for (const serve::PoolStats& p : r2.replicas) {
    EXPECT_EQ(p.workflows, 1) << p.name;
    EXPECT_EQ(p.steps, int(r1.steps.size())) << p.name;
  }
  // The second replica's steps are the first's, reused from the step cache, not simulated again.
  EXPECT_EQ(r2.steps_simulated, r1.steps_simulated);
  const Json s = summary_of(both, system_of(2), r2);
  EXPECT_EQ(s["data_parallel"]["replicas"], 2);
  EXPECT_EQ(s["data_parallel"]["chips_per_replica"], 1);
  EXPECT_EQ(s["data_parallel"]["by_replica"][1]["name"], "replica1");
  EXPECT_EQ(s["workload"]["scenario"], dp2);
  // Both replicas busy over the same span as the one chip: the system's busy fraction is the chip's.
  const Json s1 = summary_of(one, system_of(1), r1);
  EXPECT_DOUBLE_EQ(s["steps"]["chip_busy_fraction"].get<double>(), s1["steps"]["chip_busy_fraction"].get<double>());
  EXPECT_DOUBLE_EQ(s["steps"]["hbm_peak_gbps"].get<double>(), 2 * s1["steps"]["hbm_peak_gbps"].get<double>());
  EXPECT_FALSE(summary_of(one, system_of(1), r1).contains("data_parallel"));
}

// A stream of agentic workflows: every request finishes once, the replicas share the work, and
// two replicas finish the stream sooner than one chip does.
TEST(DataParallel, ReplicasShareAStreamAndFinishItSooner) {
  const Workload w2 = agentic(scenario_file("dp2s", {{"dp", 2}})), w1 = agentic(scenario_file("dp1s", nullptr));
  const ServeResult r2 = serve::serve(w2, system_of(2), {}), r1 = serve::serve(w1, system_of(1), {});
  ASSERT_EQ(r2.workflows.size(), 10u);
  int workflows = 0;
  for (const serve::PoolStats& p : r2.replicas) {
    EXPECT_GT(p.workflows, 0) << p.name;
    workflows += p.workflows;
  }
  EXPECT_EQ(workflows, 10);
  int64_t tokens2 = 0, tokens1 = 0;
  for (const serve::RequestRecord& q : r2.requests) tokens2 += q.generated_tokens;
  for (const serve::RequestRecord& q : r1.requests) tokens1 += q.generated_tokens;
  EXPECT_EQ(tokens2, tokens1);
  EXPECT_EQ(r2.in_use_end, 0);
  EXPECT_EQ(r2.allocations, r2.frees);
  EXPECT_LT(r2.end_ns, r1.end_ns);
  // trace.json: each replica's steps on a track of its own, named after it, nested or disjoint.
  const test::TraceExactness t = test::check_trace_exactness(serve::serve_trace_json(r2));
  EXPECT_TRUE(t.unnamed_tracks.empty()) << test::first_few(t.unnamed_tracks);
  EXPECT_TRUE(t.partial_overlaps.empty()) << test::first_few(t.partial_overlaps);
  const test::TraceEventsText ev = test::read_trace_events(serve::serve_trace_json(r2));
  EXPECT_TRUE(ev.thread_names.count({0, 1}));
  EXPECT_NE(serve::serve_trace_json(r2).find("\"name\":\"replica1\""), std::string::npos);
  const double busy = summary_of(w2, system_of(2), r2)["steps"]["chip_busy_fraction"].get<double>();
  EXPECT_GT(busy, 0.0);
  EXPECT_LE(busy, 1.0);
}

// prefix_affinity in every replica: slices named by replica, workflows over all of them.
TEST(DataParallel, SlicesOfEveryReplicaAreNamedByIt) {
  const Workload w = agentic(scenario_file("dp2a", {{"dp", 2}}), {{"placement", "prefix_affinity"}});
  const ServeResult r = serve::serve(w, system_of(2, 4), {});
  ASSERT_EQ(r.slices.size(), 4u);  // 4 groups / 2 KV heads = 2 slices per replica
  EXPECT_EQ(r.slices[0].name, "replica0.slice0");
  EXPECT_EQ(r.slices[3].name, "replica1.slice1");
  ASSERT_EQ(r.replicas.size(), 2u);
  EXPECT_EQ(r.replicas[0].groups, 4);
  EXPECT_EQ(r.replicas[0].workflows + r.replicas[1].workflows, 10);
  EXPECT_NE(serve::serve_vcd(r).find("replica1"), std::string::npos);
}

// Whole model, tp 2 in each of 2 replicas (4 chips): each replica's workflow as one tp 2 split serves it.
TEST(DataParallel, TensorParallelReplicasServeAsOneSplitDoes) {
  const Workload both = chats(whole_model_file("tp2dp2", {{"tp", 2}, {"dp", 2}}), 2);
  const Workload one = chats(whole_model_file("tp2", {{"tp", 2}}), 1);
  const ServeResult r2 = serve::serve(both, system_of(4), {}), r1 = serve::serve(one, system_of(2), {});
  EXPECT_EQ(r2.end_ns, r1.end_ns);
  const Json s = summary_of(both, system_of(4), r2);
  EXPECT_EQ(s["data_parallel"]["chips_per_replica"], 2);
  EXPECT_TRUE(s["operators"].contains("tensor_parallel"));
}

TEST(DataParallel, BadSplitsAreInputErrorsNamingTheFields) {
  // More replicas than the system's chips.
  const Workload w = chats(scenario_file("dp4", {{"dp", 4}}), 1);
  std::string e = test::input_error_of([&] { serve::serve(w, system_of(2), {}); });
  EXPECT_NE(e.find("model.parallel.dp = 4 needs 4 chips"), std::string::npos) << e;
  EXPECT_NE(e.find("system.chips = 2"), std::string::npos) << e;
  // P-B-D has pools of its own.
  e = test::input_error_of([&] {
    chats(scenario_file("dp2p", {{"dp", 2}}), 1,
          {{"pbd", {{"prefill_groups", 1}, {"decode_groups", 1}}}});
  });
  EXPECT_NE(e.find("scheduler.pbd"), std::string::npos) << e;
  EXPECT_NE(e.find("model.parallel.dp = 2"), std::string::npos) << e;
  // run simulates one batch on one replica.
  const std::string dp2 = scenario_file("dp2r", {{"dp", 2}});
  e = test::input_error_of([&] {
    RunOptions o;
    o.scenario_file = dp2;
    o.hw_file = "hw.json";
    execute(load_scenario(dp2), system_of(2), o);
  });
  EXPECT_NE(e.find("model.parallel.dp = 2"), std::string::npos) << e;
  EXPECT_NE(e.find("allowed: dp = 1 for run"), std::string::npos) << e;
  // An attention-only model has no layers to split: dp only.
  const std::string tp2a = scenario_file("tp2a", {{"tp", 2}});
  e = test::input_error_of([&] { load_scenario(tp2a); });
  EXPECT_NE(e.find("model.parallel.tp"), std::string::npos) << e;
  EXPECT_NE(e.find("allowed with an attention-only model: dp"), std::string::npos) << e;
  // dp's bounds.
  const std::string dp0 = scenario_file("dp0", {{"dp", 0}});
  e = test::input_error_of([&] { load_scenario(dp0); });
  EXPECT_NE(e.find("model.parallel.dp"), std::string::npos) << e;
}

// The scenario's echo keeps dp, and parses back to the same split.
TEST(DataParallel, EchoKeepsTheReplicas) {
  const Scenario s = load_scenario(scenario_file("dpecho", {{"dp", 3}}));
  const Json j = to_json(s);
  EXPECT_EQ(j["model"]["parallel"], Json({{"dp", 3}}));
  EXPECT_EQ(parse_scenario(j, "echo.json").model.parallel.dp, 3);
  const Scenario t = load_scenario(whole_model_file("tpdpecho", {{"tp", 2}, {"dp", 2}}));
  EXPECT_EQ(to_json(t)["model"]["parallel"], Json({{"dp", 2}, {"tp", 2}}));
}

}  // namespace
}  // namespace ahbm
