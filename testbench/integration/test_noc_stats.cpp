// The testbench's statistics (docs/noc.md, metric definitions): latency percentiles and
// histogram consistent with the deliveries, per-node accepted and injected load adding up to the
// totals, fairness under a hotspot, and the saturation search bracketing the load-sweep point.
#include <gtest/gtest.h>

#include <numeric>

#include "hw/bench/noc_bench.h"

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

// Network latency (head leaving the source to tail arrival) next to total latency (creation to
// tail arrival): equal when nothing waits in a source queue, below it by the queueing otherwise.
TEST(NocStats, NetworkLatencyExcludesSourceQueueing) {
  NocBenchOptions o;
  o.params = {{"router", "booksim-iq"}};  // the injection channel (2 cycles) counts as network
  o.packet_flits = 1;
  o.rate = 0.002;  // about one packet in flight at a time: no queueing
  o.cycles = 4000;
  const NocBenchResult idle = run_noc_bench(NocRegistry::with_builtin_models(), o);
  ASSERT_GT(idle.deliveries_measured, 50u);
  EXPECT_NEAR(idle.avg_network_latency, idle.avg_latency, 0.05);
  // A 1-flit packet at zero load: 2 + 5 H cycles for H routers (docs/noc-validation.md).
  EXPECT_GE(idle.avg_network_latency, 2 + 5 * 2);
  o.packet_flits = 8;  // 8 flits per packet: a source injects one flit per cycle, so packets queue
  o.rate = 0.5;
  o.cycles = 2000;
  const NocBenchResult busy = run_noc_bench(NocRegistry::with_builtin_models(), o);
  EXPECT_FALSE(busy.saturated);
  EXPECT_LT(busy.avg_network_latency, busy.avg_latency - 1);
  EXPECT_LE(busy.p99_network_latency, busy.p99_latency);
  EXPECT_LE(busy.max_network_latency, busy.max_latency);
  EXPECT_GE(busy.avg_network_latency, 2 + 5 * 2 + 7);
}

// Per-VC utilisation: the VCs of a link add up to the link; `lowest` VC selection loads VC 0
// most, `round-robin` spreads the load.
TEST(NocStats, PerVcUtilisationAddsUpAndShowsVcSelection) {
  auto vc_share = [](const std::string& select) {
    NocBenchOptions o;
    o.params = {{"pipeline", "staged"}, {"vcs", 2}, {"vc_select", select}};
    o.rate = 0.5;
    o.cycles = 2000;
    const NocBenchResult r = run_noc_bench(NocRegistry::with_builtin_models(), o);
    double vc[2] = {0, 0};
    for (const auto& l : r.links) {
      if (l.kind != "link") {
        EXPECT_TRUE(l.vc_utilisation.empty()) << l.name;
        continue;
      }
      EXPECT_EQ(l.vc_utilisation.size(), 2u) << l.name;
      EXPECT_NEAR(l.vc_utilisation[0] + l.vc_utilisation[1], l.utilisation, 1e-12) << l.name;
      EXPECT_LE(l.vc_utilisation[0], r.max_vc_utilisation);
      vc[0] += l.vc_utilisation[0], vc[1] += l.vc_utilisation[1];
    }
    return vc[0] / (vc[0] + vc[1]);
  };
  EXPECT_GT(vc_share("lowest"), 0.6);
  EXPECT_NEAR(vc_share("round-robin"), 0.5, 0.05);
}

// The convergence stopping rule: below saturation the window closes after a whole number of
// sample periods with the fixed window's averages; beyond it the run is marked saturated.
TEST(NocStats, ConvergenceRuleFindsTheWindow) {
  NocBenchOptions o;
  o.rate = 0.3;
  o.converge = true;
  o.sample_period = 500;
  o.max_samples = 40;
  const NocBenchResult r = run_noc_bench(NocRegistry::with_builtin_models(), o);
  EXPECT_TRUE(r.converged);
  EXPECT_FALSE(r.saturated);
  EXPECT_EQ(r.window_start % 500, 0);
  EXPECT_GE(r.window_start, 1000);  // at least two periods to compare
  EXPECT_EQ(r.window_end % 500, 0);
  EXPECT_GE(r.window_end - r.window_start, 4 * 500);  // 3 stable periods after the first
  EXPECT_LT(r.window_end, 40 * 500);
  o.converge = false;
  o.cycles = 10000;
  const NocBenchResult fixed = run_noc_bench(NocRegistry::with_builtin_models(), o);
  EXPECT_NEAR(r.avg_latency, fixed.avg_latency, 0.05 * fixed.avg_latency);
  EXPECT_NEAR(r.accepted, fixed.accepted, 0.03 * fixed.accepted);
  // Far beyond saturation latency keeps growing: no convergence within max_samples.
  o.converge = true;
  o.rate = 0.95;
  o.max_samples = 12;
  const NocBenchResult sat = run_noc_bench(NocRegistry::with_builtin_models(), o);
  EXPECT_TRUE(sat.saturated);
  EXPECT_LE(sat.window_end, 12 * 500);
}
