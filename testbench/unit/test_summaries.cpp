// The typed summaries (runtime/run/run_summary.h, runtime/serve/serve_summary.h) built by hand
// and serialised by their one to_json: the sections' key names, nested numbers, which numbers
// stay integers and which floats (summary.json's text depends on it), optional sections and
// fields left out when unset.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "runtime/run/run_summary.h"
#include "runtime/serve/serve_summary.h"

using namespace ahbm;

namespace {

std::set<std::string> keys_of(const Json& j) {
  std::set<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.insert(k);
  return keys;
}

RunSummary small_run_summary() {
  RunSummary s;
  s.scenario = "tiny", s.seed = 7, s.total_ns = 1234;
  s.rows = 16, s.q_tiles = 2, s.q_tile_rows = 8;
  PhaseSummary& fanout = s.phases["fanout"];
  fanout.end_ns = fanout.ns = 1234;
  fanout.steps = 1;
  fanout.agents["a"] = {2, 1, 1200.5, 1200.5};
  StepSummary st;
  st.label = st.phase = "fanout";
  st.ns = 1234;
  st.agents = 1;
  st.max_abs_err = 1e-6;
  s.steps.push_back(st);
  s.agents["a"].rows = 2;
  s.agents["a"].latency_ns = 1200.5;
  s.energy.static_power_w = 3.25;
  s.power.peak_w = 9.5;
  s.busy_ns_by_component["group0.cube0.pe0"]["gemm_qk"] = 100;
  s.noc = {"mesh", Json{{"packets_sent", 4}}};
  s.latency.phases["fanout"].agent_latency = report::distribution({1, 2, 3});
  return s;
}

}  // namespace

TEST(Summaries, RunSummaryToJsonNamesEverySectionWithItsNumbers) {
  RunSummary s = small_run_summary();
  const Json j = to_json(s);
  EXPECT_EQ(keys_of(j), (std::set<std::string>{
                            "agents", "arithmetic", "balance", "baselines", "busy_ns_by_activity", "busy_ns_by_component",
                            "config", "energy", "gemm_batching", "kv", "latency", "model", "noc", "numerics",
                            "phases", "policy", "power", "precision", "q_tile_rows", "q_tiles", "roofline", "rows",
                            "scenario", "seed", "simulator", "stats", "steps", "total_ns"}));
  // A time stays a float even when whole ("1234.0"), a count an integer.
  EXPECT_EQ(j["total_ns"].dump(), "1234.0");
  EXPECT_EQ(j["rows"].dump(), "16");
  EXPECT_EQ(j["phases"]["fanout"]["agents"]["a"]["tokens"], 2);
  EXPECT_EQ(j["phases"]["fanout"]["agents"]["a"]["latency_ns"].get<double>(), 1200.5);
  EXPECT_FALSE(j["phases"]["fanout"].contains("unbatched_ns"));
  EXPECT_EQ(j["steps"][0]["max_abs_err"].get<double>(), 1e-6);
  EXPECT_EQ(j["steps"][0]["agents"], 1);
  EXPECT_FALSE(j["steps"][0].contains("layers"));
  EXPECT_FALSE(j["steps"][0].contains("max_abs_err_vs_unrounded"));
  EXPECT_EQ(j["agents"]["a"], Json({{"rows", 2}, {"new_tokens", 0}, {"latency_ns", 1200.5}}));
  EXPECT_EQ(j["energy"]["static_power_w"].get<double>(), 3.25);
  EXPECT_FALSE(j["energy"].contains("decode_tokens"));
  EXPECT_FALSE(j["energy"].contains("by_operator_dynamic_j"));
  EXPECT_EQ(j["power"]["peak_w"].get<double>(), 9.5);
  EXPECT_FALSE(j["power"].contains("cap"));
  EXPECT_EQ(j["busy_ns_by_component"]["group0.cube0.pe0"]["gemm_qk"].get<double>(), 100);
  EXPECT_EQ(j["noc"], Json({{"model", "mesh"}, {"packets_sent", 4}}));
  EXPECT_EQ(j["numerics"], Json({{"checked", false}}));
  EXPECT_EQ(j["balance"]["idle_pes"], 0);  // a count, an integer
  EXPECT_EQ(j["balance"]["pe_imbalance"].dump(), "0.0");
  EXPECT_EQ(j["baselines"], Json::object());
  EXPECT_EQ(j["latency"]["phases"]["fanout"]["agent_latency"]["p50_ns"].get<double>(), 2);
  EXPECT_TRUE(j["policy"].is_null());

  // The optional sections: a power cap, a whole model's operators, a join.
  s.power.cap = report::PowerCapReport{20, 0.5, 10, 1224, 30, 3};
  s.operators = ModelOperatorsSummary{Json{{"attention_ns", 5.0}}, 12, "decode[0]", 3, 2};
  s.join = Json{{"strategy", "schema"}};
  const Json k = to_json(s);
  EXPECT_EQ(k["power"]["throttled_ns"].get<double>(), 10);
  EXPECT_EQ(k["power"]["cap"]["clock_scale"].get<double>(), 0.5);
  EXPECT_EQ(k["power"]["cap"]["runs"], 3);
  EXPECT_EQ(k["operators"]["attention_ns"].get<double>(), 5);
  EXPECT_EQ(k["operators"]["ttft_step"], "decode[0]");
  EXPECT_EQ(k["operators"]["tpot_ns"].dump(), "3.0");
  EXPECT_EQ(k["operators"]["decode_steps"], 2);
  EXPECT_EQ(k["join"]["strategy"], "schema");
  EXPECT_FALSE(k.contains("memory_map"));
}

TEST(Summaries, ServeSummaryToJsonNamesEverySectionWithItsNumbers) {
  serve::ServeSummary s;
  s.scheduler = "fcfs";
  s.requests.count = 3;
  s.requests.ttft = report::distribution({30, 10, 20});
  s.throughput.tokens_per_s = 1e6;
  s.slo.ttft_attained = 0.5;
  s.energy.per_request = report::distribution({1.5});
  s.end_ns = 99;
  serve::PbdSummary pbd;
  for (const char* name : {"prefill0", "prefill1"}) pbd.prefill_pool.by_pool.push_back({name, 1, 4, 10, 0.5, 8, 2, {}, {}});
  pbd.thinfer.dp_p = 2;
  pbd.thinfer.bottleneck = "decode";
  s.pbd = pbd;
  const Json j = serve::to_json(s);
  EXPECT_EQ(keys_of(j), (std::set<std::string>{"end_ns", "energy", "hw", "kv", "pbd", "requests", "scheduler",
                                               "simulator", "slo", "steps", "throughput", "workflows", "workload"}));
  EXPECT_EQ(j["requests"]["count"], 3);
  EXPECT_EQ(j["requests"]["ttft"]["p50_ns"].get<double>(), 20);
  EXPECT_EQ(j["requests"]["ttft"]["count"], 3);
  EXPECT_EQ(j["requests"]["tpot"], Json({{"count", 0}}));
  EXPECT_EQ(j["throughput"]["tokens_per_s"].get<double>(), 1e6);
  EXPECT_EQ(j["slo"], Json({{"ttft_attained", 0.5}}));
  EXPECT_EQ(j["steps"]["batch_tokens"], Json({{"count", 0}}));  // no steps
  EXPECT_EQ(j["energy"]["per_request"]["max_j"].get<double>(), 1.5);
  EXPECT_EQ(j["end_ns"].dump(), "99.0");
  const Json& prefill = j["pbd"]["prefill_pool"];
  EXPECT_FALSE(prefill.contains("name"));
  EXPECT_EQ(prefill["pools"], 2);
  EXPECT_EQ(prefill["by_pool"][1]["name"], "prefill1");
  EXPECT_EQ(prefill["by_pool"][1]["busy_fraction"].get<double>(), 0.5);
  EXPECT_FALSE(prefill["by_pool"][1].contains("operators"));
  EXPECT_FALSE(j["pbd"]["decode_pool"].contains("by_pool"));
  EXPECT_EQ(j["pbd"]["thinfer"]["dp_p"], 2);
  EXPECT_FALSE(j["pbd"]["thinfer"].contains("dp_d"));
  EXPECT_EQ(j["pbd"]["thinfer"]["bottleneck"], "decode");

  // Preemption: preemptions per workflow have no unit suffix.
  s.preemption = serve::PreemptionSummary{};
  s.preemption->per_workflow = report::distribution({0, 2});
  s.preemption->swap.out_count = 5;
  const Json k = serve::to_json(s);
  EXPECT_EQ(k["preemption"]["per_workflow"]["max"].get<double>(), 2);
  EXPECT_EQ(k["preemption"]["swap"]["out_count"], 5);
  EXPECT_FALSE(k.contains("placement"));
  EXPECT_FALSE(k.contains("operators"));
}
