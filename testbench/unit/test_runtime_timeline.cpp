// Statistics of successive steps fold into the run's by the documented rules.
#include <gtest/gtest.h>

#include "runtime/timeline.h"

using namespace ahbm;

TEST(RuntimeTimeline, MergeStatsRules) {
  Json acc = Json::parse(R"({"groups": [{"group": 1, "cubes": [{"q_buffer_high_water_bytes": 10, "pes": [{"macs": 5, "dma_busy_ns": 1.5}]}],
                             "links": [{"from": 1, "to": 0, "busy_ns": 2.0}]}], "noc": {"avg_latency_ns": 10.0, "max_hops": 2, "packets": 3}})");
  const Json step = Json::parse(R"({"groups": [{"group": 1, "cubes": [{"q_buffer_high_water_bytes": 7, "pes": [{"macs": 6, "dma_busy_ns": 0.5}]}],
                                  "links": [{"from": 1, "to": 0, "busy_ns": 1.0}]}], "noc": {"avg_latency_ns": 40.0, "max_hops": 5, "packets": 1, "new": 9}})");
  merge_stats(acc, step, 300.0, 100.0);
  const Json& g = acc["groups"][0];
  EXPECT_EQ(g["group"].get<int>(), 1);
  EXPECT_EQ(g["cubes"][0]["q_buffer_high_water_bytes"].get<int>(), 10);
  EXPECT_EQ(g["cubes"][0]["pes"][0]["macs"].get<int>(), 11);
  EXPECT_DOUBLE_EQ(g["cubes"][0]["pes"][0]["dma_busy_ns"].get<double>(), 2.0);
  EXPECT_EQ(g["links"][0]["from"].get<int>(), 1);
  EXPECT_DOUBLE_EQ(g["links"][0]["busy_ns"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(acc["noc"]["avg_latency_ns"].get<double>(), (10.0 * 300 + 40.0 * 100) / 400);
  EXPECT_EQ(acc["noc"]["max_hops"].get<int>(), 5);
  EXPECT_EQ(acc["noc"]["packets"].get<int>(), 4);
  EXPECT_EQ(acc["noc"]["new"].get<int>(), 9);
}
