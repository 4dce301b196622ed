// The plug-in path: a model written outside hw/ (tools/examples/bus_noc) is registered with
// NocRegistry::add() and then used by the attention model and by the NoC testbench exactly
// like a built-in one.
#include <gtest/gtest.h>

#include "hw/noc/noc_bench.h"
#include "test_noc_support.h"
#include "tools/examples/bus_noc.h"

using namespace ahbm;
using namespace ahbm::test;

TEST(NocPlugin, ExampleBusRunsTheAttentionModel) {
  NocRegistry reg = NocRegistry::with_builtin_models();
  EXPECT_THROW(reg.get("bus"), InputError);
  examples::register_bus_noc(reg);
  const RunOutput bus = run_default_scenario("bus", {{"bandwidth_gbps", 40.0}, {"latency_ns", 25.0}}, true, &reg);
  const RunOutput ideal = run_default_scenario("ideal");
  EXPECT_EQ(bus.summary["noc"]["model"], "bus");
  EXPECT_TRUE((bus.sim.outputs[0].array() == ideal.sim.outputs[0].array()).all());
  // One Q tile, one bus transfer for all four CUBEs: bytes / bandwidth + latency.
  const double bytes = bus.summary["q_tile_rows"].get<int>() * 128.0 * 4.0;
  const Json& mc = bus.summary["noc"]["multicast_completion"];
  EXPECT_EQ(mc["packets"].get<int>(), bus.summary["q_tiles"].get<int>());
  EXPECT_NEAR(mc["max_ns"].get<double>(), bytes / 40.0 + 25.0, 1e-3);
  EXPECT_GT(bus.summary["total_ns"].get<double>(), ideal.summary["total_ns"].get<double>());
}

TEST(NocPlugin, ExampleBusInTheTestbench) {
  NocRegistry reg = NocRegistry::with_builtin_models();
  examples::register_bus_noc(reg);
  NocBenchOptions o;
  o.noc = "bus";
  o.params = {{"bandwidth_gbps", 40.0}, {"latency_ns", 25.0}};
  o.nodes = 8;
  o.cycles = 4000;
  o.rate = 0.005;
  const NocBenchResult light = run_noc_bench(reg, o);
  EXPECT_FALSE(light.saturated);
  // 4 flits of 64 bytes at 40 GB/s = 6.4 ns, plus 25 ns; created half a cycle before an edge.
  EXPECT_GE(light.avg_latency, 31.0);
  EXPECT_LT(light.avg_latency, 33.0);
  EXPECT_LT(light.avg_hops, 0);  // a bus has no routers
  o.rate = 0.5;
  const NocBenchResult heavy = run_noc_bench(reg, o);
  const double cap = 40.0 / 64.0 / o.nodes;  // flits per node per cycle the bus can carry
  EXPECT_TRUE(heavy.saturated);
  EXPECT_LE(heavy.accepted, cap * 1.01);
  EXPECT_GT(heavy.accepted, cap * 0.95);
}
