// Under uniform random traffic (noc-bench), below saturation the network accepts what is
// offered and latency rises monotonically with load; it saturates below its bisection bound.
// Bisection bounds for uniform traffic (half of all traffic crosses the bisection):
//   k x k mesh: 2k channels per direction pair -> 4/k flits/node/cycle; N-node bidirectional
//   ring: 4 channels cross a cut -> 8/N.
#include <gtest/gtest.h>

#include "hw/bench/noc_bench.h"
#include "hw/noc/flit_noc.h"
#include "runtime/report/noc_bench_json.h"

using namespace ahbm;

namespace {

NocBenchOptions uniform(const std::string& noc, int nodes) {
  NocBenchOptions o;
  o.noc = noc;
  o.nodes = nodes;
  o.traffic = "uniform";
  o.packet_flits = 4;
  o.cycles = 4000;
  o.warmup = 1000;
  o.seed = 3;
  return o;
}

void check_load_curve(const std::string& noc, int nodes, double bound, const std::vector<double>& below,
                      double above) {
  const NocRegistry reg = NocRegistry::with_builtin_models();
  NocBenchOptions o = uniform(noc, nodes);
  double last_latency = 0;
  for (double rate : below) {
    o.rate = rate;
    const NocBenchResult r = run_noc_bench(reg, o);
    EXPECT_FALSE(r.saturated) << noc << " at " << rate;
    EXPECT_TRUE(r.drained);
    EXPECT_NEAR(r.offered, rate, 0.1 * rate);  // Bernoulli injection at the asked rate
    EXPECT_NEAR(r.accepted, r.offered, 0.03 * r.offered) << noc << " at " << rate;
    EXPECT_GT(r.avg_latency, last_latency) << noc << ": latency must rise with load (rate " << rate << ")";
    last_latency = r.avg_latency;
  }
  o.rate = above;
  const NocBenchResult sat = run_noc_bench(reg, o);
  EXPECT_TRUE(sat.saturated) << noc << " at " << above;
  EXPECT_LT(sat.accepted, bound) << noc << ": accepted throughput above the bisection bound";
  EXPECT_LT(sat.accepted, 0.95 * sat.offered);
  EXPECT_GT(sat.avg_latency, 5 * last_latency);
}

}  // namespace

TEST(NocLoad, MeshUniformLatencyRisesAndSaturatesBelowBisection) {
  // 8x8 mesh: bisection bound 4/8 = 0.5 flits/node/cycle.
  check_load_curve("mesh", 64, 0.5, {0.05, 0.15, 0.25, 0.3}, 0.6);
}

TEST(NocLoad, RingUniformLatencyRisesAndSaturatesBelowBisection) {
  // 16-node ring: bisection bound 8/16 = 0.5 flits/node/cycle.
  check_load_curve("ring", 16, 0.5, {0.02, 0.08, 0.14, 0.18}, 0.6);
}

TEST(NocLoad, BenchIsDeterministicAndBoundedWhenSaturated) {
  const NocRegistry reg = NocRegistry::with_builtin_models();
  NocBenchOptions o = uniform("mesh", 16);
  o.rate = 1.0;  // far beyond saturation: measured packets never all arrive
  o.cycles = 2000;
  o.warmup = 200;
  o.drain = 300;  // source queues grow ~0.3 flits/node/cycle: the last measured packets need longer
  const NocBenchResult a = run_noc_bench(reg, o), b = run_noc_bench(reg, o);
  EXPECT_EQ(report::noc_bench_json(a).dump(), report::noc_bench_json(b).dump());
  EXPECT_FALSE(a.drained);
  EXPECT_GT(a.undelivered, 0u);
  EXPECT_TRUE(a.saturated);
  EXPECT_LE(a.end_cycle, o.warmup + o.cycles + o.drain);
  o.seed = 4;
  EXPECT_NE(report::noc_bench_json(run_noc_bench(reg, o)).dump(), report::noc_bench_json(a).dump());
}

// The torus's wrap-around links double the mesh's bisection: under uniform traffic on 8 x 8 it
// accepts more beyond saturation (not twice as much: the dateline classes halve the VCs a packet
// may use), below the torus's bound 8/k = 1. Far beyond saturation its dateline VC classes keep
// it deadlock-free on every router preset (a deadlock would stop the run with a logic_error),
// with tree multicast too.
TEST(NocLoad, TorusOutlastsTheMeshAndDoesNotDeadlock) {
  const NocRegistry reg = NocRegistry::with_builtin_models();
  NocBenchOptions o = uniform("mesh", 64);
  o.params = {{"vcs", 4}};
  o.rate = 0.95;
  o.cycles = 1000;
  o.warmup = 500;
  const double mesh = run_noc_bench(reg, o).accepted;
  o.noc = "torus";
  const NocBenchResult torus = run_noc_bench(reg, o);
  EXPECT_TRUE(torus.saturated);
  EXPECT_GT(torus.accepted, 1.05 * mesh);
  EXPECT_LT(torus.accepted, 1.0);
  o = uniform("torus", 16);
  o.rate = 0.95;
  o.cycles = 1500;
  o.warmup = 500;
  for (const Json& params : {Json{{"router", "booksim-iq"}, {"vcs", 2}}, Json{{"vcs", 2}, {"buffer_flits", 2}}}) {
    o.params = params;
    o.traffic = "uniform";
    EXPECT_GT(run_noc_bench(reg, o).accepted, 0.15) << params.dump();  // 2 VCs: one per dateline class
    o.traffic = "multicast";
    o.rate = 0.5;
    EXPECT_GT(run_noc_bench(reg, o).accepted, 0.15) << params.dump();
    o.rate = 0.95;
  }
}

TEST(NocLoad, TreeMulticastTrafficBeatsSourceReplication) {
  const NocRegistry reg = NocRegistry::with_builtin_models();
  NocBenchOptions o = uniform("mesh", 16);
  o.traffic = "multicast";
  o.rate = 0.1;  // 4 destinations: 0.4 delivered flits/node/cycle
  const NocBenchResult tree = run_noc_bench(reg, o);
  o.params = {{"multicast", "source"}};
  const NocBenchResult source = run_noc_bench(reg, o);
  EXPECT_FALSE(tree.saturated);
  EXPECT_NEAR(tree.accepted, tree.offered, 0.03 * tree.offered);
  EXPECT_LT(tree.avg_latency, source.avg_latency);
  EXPECT_LT(tree.noc_stats.get(FlitNocStats::link_flits), source.noc_stats.get(FlitNocStats::link_flits));
}
