// The plug-in path: a model written outside hw/ (tools/examples/bus_noc) is registered with
// NocRegistry::add() and then used by the attention model and by the NoC testbench exactly
// like a built-in one.
#include <gtest/gtest.h>

#include "hw/bench/noc_bench.h"
#include "runtime/plan/choose.h"
#include "test_noc_support.h"
#include "test_support.h"
#include "tools/examples/bus_noc.h"

using namespace ahbm;
using namespace ahbm::test;

TEST(NocPlugin, ExampleBusRunsTheAttentionModel) {
  NocRegistry reg = NocRegistry::with_builtin_models();
  EXPECT_THROW(reg.get("bus"), InputError);
  examples::register_bus_noc(reg);
  const RunOutput bus = run_default_scenario("bus", {{"bandwidth_gbps", 40.0}, {"latency_ns", 25.0}}, true, &reg);
  const RunOutput ideal = run_default_scenario("ideal");
  EXPECT_EQ(bus.summary.noc.model, "bus");
  EXPECT_TRUE((bus.sim.outputs[0].array() == ideal.sim.outputs[0].array()).all());
  // One Q tile, one bus transfer for all four CUBEs: bytes / bandwidth + latency.
  const double bytes = bus.summary.q_tile_rows * 128.0 * 4.0;
  const Json& mc = bus.summary.noc.stats["multicast_completion"];
  EXPECT_EQ(mc["packets"].get<int>(), int(bus.summary.q_tiles));
  EXPECT_NEAR(mc["max_ns"].get<double>(), bytes / 40.0 + 25.0, 1e-3);
  EXPECT_GT(bus.summary.total_ns, ideal.summary.total_ns);
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

// Each model estimates itself for the cost model (runtime/policy/cost_model: noc_estimate asks
// the registry entry). The built-in closed forms: flit models H x (router + link) cycles with
// H = 2 (mesh, ring) or 1 (crossbar) and one flit per cycle per port; ideal its latency.
TEST(NocEstimate, BuiltInModelsGiveTheirClosedForms) {
  HwConfig hw;
  auto est = [&](const std::string& model, const Json& params) {
    hw.noc.model = model;
    hw.noc.params = params;
    return noc_estimate(hw);
  };
  EXPECT_DOUBLE_EQ(est("ideal", Json::object()).latency_ns, 10.0);
  EXPECT_DOUBLE_EQ(est("ideal", Json::object()).bandwidth_gbps, 0.0);
  EXPECT_DOUBLE_EQ(est("ideal", {{"latency_ns", 3.5}}).latency_ns, 3.5);
  EXPECT_DOUBLE_EQ(est("mesh", Json::object()).latency_ns, 2.0 * (4 + 1));
  EXPECT_DOUBLE_EQ(est("mesh", Json::object()).bandwidth_gbps, 64.0);
  EXPECT_DOUBLE_EQ(est("ring", {{"router_cycles", 3}, {"link_cycles", 2}}).latency_ns, 2.0 * (3 + 2));
  EXPECT_DOUBLE_EQ(est("crossbar", Json::object()).latency_ns, 1.0 * (2 + 1));
  EXPECT_DOUBLE_EQ(est("crossbar", {{"flit_bytes", 32}}).bandwidth_gbps, 32.0);
  hw.clock_ghz = 2.0;  // cycles are 0.5 ns
  EXPECT_DOUBLE_EQ(est("mesh", Json::object()).latency_ns, 5.0);
  EXPECT_DOUBLE_EQ(est("mesh", Json::object()).bandwidth_gbps, 128.0);
  // Bad parameters and unknown models are input errors, as when the chip is built.
  EXPECT_THROW(est("mesh", {{"router_cycles", 0}}), InputError);
  EXPECT_THROW(est("nope", Json::object()), InputError);
}

namespace {
// A plug-in with no estimate of its own: everything arrives at once.
class InstantNoc : public Noc {
 public:
  using Noc::Noc;

 protected:
  void inject(NocPacket packet) override {
    for (int d : packet.dsts) deliver(d, packet);
  }
};
}  // namespace

TEST(NocEstimate, PluginModelsGiveTheirOwnOrTheDefault) {
  NocRegistry reg = NocRegistry::with_builtin_models();
  examples::register_bus_noc(reg);
  reg.add(noc_model<InstantNoc>("instant", "test: no estimate of its own"));
  EXPECT_FALSE(reg.get("instant").estimate);
  HwConfig hw;
  hw.noc.model = "instant";
  NocEstimateInput in;
  const NocEstimate dflt = default_noc_estimate(in);
  EXPECT_DOUBLE_EQ(noc_estimate(hw, &reg).latency_ns, dflt.latency_ns);
  EXPECT_DOUBLE_EQ(noc_estimate(hw, &reg).bandwidth_gbps, dflt.bandwidth_gbps);
  hw.noc.model = "bus";
  hw.noc.params = {{"bandwidth_gbps", 8.0}, {"latency_ns", 500.0}};
  const NocEstimate bus = noc_estimate(hw, &reg);
  EXPECT_DOUBLE_EQ(bus.latency_ns, 500.0);
  EXPECT_DOUBLE_EQ(bus.bandwidth_gbps, 8.0);
  hw.noc.params = {{"bandwidth_gbps", -1.0}};
  EXPECT_THROW(noc_estimate(hw, &reg, "my.json"), InputError);

  // The cost model uses it: a slow bus makes every policy slower than the default estimate, by
  // at least the extra latency of the Q multicast, and the per-policy Q term grows with it.
  hw.noc.params = {{"bandwidth_gbps", 8.0}, {"latency_ns", 500.0}};
  const AttentionJob a = test::random_job(hw, 64, 64 * hw.pes_per_group(), 64, 3);
  const std::vector<Candidate> candidates = layout_candidates(hw, a, hw.q_tile_rows);
  CostModel bus_model(hw, bus), plain_model(hw, dflt);
  const Choice slow = choose({a}, candidates, hw, "auto", bus_model);
  const Choice plain = choose({a}, candidates, hw, "auto", plain_model);
  ASSERT_EQ(slow.estimates.size(), plain.estimates.size());
  for (size_t i = 0; i < slow.estimates.size(); ++i) {
    EXPECT_GE(slow.estimates[i].total_ns, plain.estimates[i].total_ns + (bus.latency_ns - dflt.latency_ns))
        << policy_name(slow.estimates[i].policy);
    EXPECT_GT(slow.estimates[i].q_ns, plain.estimates[i].q_ns);
  }
}

// Through the run: the step's decision is estimated with the model the simulation uses.
TEST(NocEstimate, TheRunAsksThePluginModel) {
  NocRegistry reg = NocRegistry::with_builtin_models();
  examples::register_bus_noc(reg);
  NocModelInfo plain = reg.get("bus");
  plain.name = "bus-plain";
  plain.estimate = nullptr;  // the same bus without its estimate
  reg.add(plain);
  const Json params = {{"bandwidth_gbps", 8.0}, {"latency_ns", 500.0}};
  const RunOutput own = run_default_scenario("bus", params, false, &reg);
  const RunOutput dflt = run_default_scenario("bus-plain", params, false, &reg);
  EXPECT_EQ(own.summary.total_ns, dflt.summary.total_ns);  // the same hardware
  const double own_est = own.summary.policy["decision"]["chosen_estimate_ns"].get<double>();
  const double dflt_est = dflt.summary.policy["decision"]["chosen_estimate_ns"].get<double>();
  EXPECT_GT(own_est, dflt_est + 490.0);
  // The bus's own estimate is the closer one.
  const double sim = own.summary.total_ns;
  EXPECT_LT(std::abs(own_est - sim), std::abs(dflt_est - sim));
}
