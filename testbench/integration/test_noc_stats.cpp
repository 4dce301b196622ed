// The testbench's statistics (docs/noc.md, metric definitions): latency percentiles and
// histogram consistent with the deliveries, per-node accepted and injected load adding up to the
// totals, fairness under a hotspot, and the saturation search bracketing the load-sweep point.
#include <gtest/gtest.h>

#include <numeric>

#include "hw/noc/noc_bench.h"

using namespace ahbm;

TEST(NocStats, PercentilesHistogramAndPerNodeLoad) {
  NocBenchOptions o;
  o.rate = 0.4;
  o.cycles = 4000;
  const NocBenchResult r = run_noc_bench(NocRegistry::with_builtin_models(), o);
  EXPECT_LE(r.p50_latency, r.p90_latency);
  EXPECT_LE(r.p90_latency, r.p99_latency);
  EXPECT_LE(r.p99_latency, r.p999_latency);
  EXPECT_LE(r.p999_latency, r.max_latency);
  EXPECT_GE(r.p50_latency, 5 * 2 + 3);  // at least the zero-load latency of a 1-hop 4-flit packet
  EXPECT_LT(r.max_latency / double(r.histogram_bin), 64.0);
  EXPECT_EQ(std::accumulate(r.histogram.begin(), r.histogram.end(), uint64_t(0)), r.deliveries_measured);
  ASSERT_EQ(r.node_accepted.size(), 16u);
  ASSERT_EQ(r.node_injected.size(), 16u);
  EXPECT_NEAR(std::accumulate(r.node_accepted.begin(), r.node_accepted.end(), 0.0) / 16, r.accepted, 1e-12);
  // Flits entering the network in the window: what was offered, within the edge effects.
  EXPECT_NEAR(std::accumulate(r.node_injected.begin(), r.node_injected.end(), 0.0) / 16, r.offered, 0.02);
  EXPECT_LE(r.accepted_min, r.accepted);
  EXPECT_GE(r.accepted_max, r.accepted);
}

TEST(NocStats, HotspotShowsInFairness) {
  NocBenchOptions o;
  o.traffic = "hotspot";
  o.hotspot_node = 5;
  o.hotspot_fraction = 0.3;
  o.rate = 0.1;
  o.cycles = 4000;
  const NocBenchResult r = run_noc_bench(NocRegistry::with_builtin_models(), o);
  EXPECT_DOUBLE_EQ(r.accepted_max, r.node_accepted[5]);
  EXPECT_GT(r.accepted_max, 3 * r.accepted_min);
}

TEST(NocStats, SaturationSearchBracketsTheKnee) {
  // 4 x 4 mesh, uniform, 4-flit packets: the load sweep in docs/noc.md saturates between 0.65 and 0.70.
  NocBenchOptions o;
  o.cycles = 5000;
  const NocSaturation s = find_saturation(NocRegistry::with_builtin_models(), o, 0.05, 1.0, 0.02);
  EXPECT_FALSE(s.at_rate.saturated);
  EXPECT_LE(s.saturated_at - s.rate, 0.02);
  EXPECT_GT(s.rate, 0.55);
  EXPECT_LT(s.saturated_at, 0.8);
  EXPECT_DOUBLE_EQ(s.at_rate.options.rate, s.rate);
  EXPECT_THROW(find_saturation(NocRegistry::with_builtin_models(), o, 0.9, 1.0), InputError);  // saturated at lo
}
