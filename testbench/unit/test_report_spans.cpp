// Report building blocks on hand-made spans: Perfetto tracks for overlapping spans of one
// component, and the latency percentiles (linear interpolation) per phase and per agent.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "hw/common/sim/sim_context.h"
#include "hw/common/observe/span_recorder.h"
#include "runtime/report/latency.h"
#include "runtime/report/percentiles.h"
#include "runtime/report/trace_json.h"

using namespace ahbm;

TEST(Outputs, OverlappingSpansOfOneComponentGoToSeparateTracks) {
  SimContext ctx;  // sc_time needs a simulation context
  SimContext::Scope use_ctx(ctx);
  SpanRecorder rec;
  // Declared as the CUBE reducer declares itself: the track is named by its item in the CUBE.
  rec.declare("group0.cube0.reducer", ComponentInfo{ComponentInfo::Kind::reducer, 0, 0, -1, "reducer"});
  const int comp = rec.intern("group0.cube0.reducer"), phase = rec.intern("p"), none = rec.intern("-");
  auto ns = [](double t) { return sc_core::sc_time(t, sc_core::SC_NS); };
  rec.record(ns(0), ns(10), comp, rec.intern("merge"), phase, none, 1, 0);
  rec.record(ns(5), ns(15), comp, rec.intern("xcube_merge"), phase, none, 1, 0);  // overlaps, not nested
  rec.record(ns(15), ns(20), comp, rec.intern("merge"), phase, none, 1, 0);
  const Json ev = report::trace_events(rec);
  std::map<int, std::vector<std::pair<double, double>>> by_tid;
  std::set<std::string> names;
  for (const Json& e : ev) {
    if (e["ph"] == "M" && e["name"] == "thread_name") names.insert(e["args"]["name"]);
    if (e["ph"] == "X" && e["cat"] != "phase") by_tid[e["tid"]].emplace_back(e["ts"], e["ts"].get<double>() + e["dur"].get<double>());
  }
  ASSERT_EQ(by_tid.size(), 2u);
  EXPECT_EQ(names, (std::set<std::string>{"reducer", "reducer #2"}));
  for (auto& [tid, v] : by_tid) {
    std::sort(v.begin(), v.end());
    for (size_t i = 1; i < v.size(); ++i) EXPECT_LE(v[i - 1].second, v[i].first + 1e-12);
  }
}

TEST(Outputs, PercentilesFollowLinearInterpolation) {
  EXPECT_DOUBLE_EQ(report::percentile({4, 1, 3, 2}, 50), 2.5);
  EXPECT_DOUBLE_EQ(report::percentile({4, 1, 3, 2}, 90), 3.7);   // 1 + 0.9*3 = 3.7 -> 3 + 0.7
  EXPECT_DOUBLE_EQ(report::percentile({4, 1, 3, 2}, 99), 3.97);
  EXPECT_DOUBLE_EQ(report::percentile({4, 1, 3, 2}, 0), 1);
  EXPECT_DOUBLE_EQ(report::percentile({4, 1, 3, 2}, 100), 4);
  EXPECT_DOUBLE_EQ(report::percentile({7}, 99), 7);
  std::vector<double> v;
  for (int i = 1; i <= 101; ++i) v.push_back(i * 10.0);
  const report::Distribution d = report::distribution(v);
  EXPECT_DOUBLE_EQ(d.p50, 510);
  EXPECT_DOUBLE_EQ(d.p90, 910);
  EXPECT_DOUBLE_EQ(d.p99, 1000);
  EXPECT_DOUBLE_EQ(d.mean, 510);
  EXPECT_EQ(report::distribution({}).count, 0u);
  // As JSON: every field with the unit as its suffix; no samples, the count alone.
  const Json j = report::to_json(d, "_j");
  EXPECT_EQ(j.size(), 8u);
  EXPECT_EQ(j["count"], 101);
  EXPECT_EQ(j["p90_j"].get<double>(), 910);
  EXPECT_EQ(j["total_j"].get<double>(), 51510);
  EXPECT_EQ(report::to_json(report::distribution({})), Json({{"count", 0}}));
}

TEST(Outputs, LatencyPercentilesPerPhaseAndAgent) {
  SimContext ctx;
  SimContext::Scope use_ctx(ctx);
  SpanRecorder rec;
  auto ns = [](double t) { return sc_core::sc_time(t, sc_core::SC_NS); };
  const int prefill = rec.intern("prefill"), decode = rec.intern("decode"), att = rec.intern("attention");
  const double lat[2][4] = {{10, 20, 30, 40}, {5, 5, 6, 100}};
  for (int p = 0; p < 2; ++p)
    for (int a = 0; a < 4; ++a) {
      const std::string name = "a" + std::to_string(a);
      rec.record(ns(p * 1000), ns(p * 1000 + lat[p][a]), rec.intern("agent." + name), att, p ? decode : prefill,
                 rec.intern(name), 1, 0);
    }
  rec.record(ns(0), ns(8), rec.intern("group0.cube0.pe0"), rec.intern("gemm_qk"), prefill, rec.intern("*"), 4, 0);
  const report::LatencySummary s = report::latency_summary(rec);
  EXPECT_DOUBLE_EQ(s.phases.at("prefill").agent_latency.p50, 25);
  EXPECT_TRUE(s.phases.at("decode").span_ns_by_activity.empty());  // agent spans only
  EXPECT_EQ(s.agents.at("a3").latency.count, 2u);
  const Json l = report::to_json(s);
  EXPECT_DOUBLE_EQ(l["phases"]["prefill"]["agent_latency"]["p50_ns"].get<double>(), 25);
  EXPECT_DOUBLE_EQ(l["phases"]["prefill"]["agent_latency"]["p90_ns"].get<double>(), 37);
  EXPECT_DOUBLE_EQ(l["phases"]["decode"]["agent_latency"]["p99_ns"].get<double>(), 6 + 0.97 * 94);
  EXPECT_DOUBLE_EQ(l["phases"]["decode"]["start_ns"].get<double>(), 1000);
  EXPECT_DOUBLE_EQ(l["phases"]["prefill"]["span_ns_by_class"]["local GEMM"]["max_ns"].get<double>(), 8);
  EXPECT_EQ(l["agents"]["a3"]["count"], 2);
  EXPECT_DOUBLE_EQ(l["agents"]["a3"]["p50_ns"].get<double>(), 70);
  EXPECT_DOUBLE_EQ(l["agents"]["a3"]["by_phase_ns"]["decode"].get<double>(), 100);
}
