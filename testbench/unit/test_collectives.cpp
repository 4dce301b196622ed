// Collectives on the system network (hw/system/collectives.h, docs/system.md): every schedule
// against its alpha-beta closed form on an idle network (within 1%), contention between two
// concurrent groups, a user's own network model, and a collective started and waited on from a
// SystemC thread.
#include <gtest/gtest.h>

#include "hw/bench/coll_bench.h"
#include "hw/common/base/error.h"
#include "hw/common/sim/sim_context.h"
#include "hw/system/collectives.h"
#include "tools/examples/bus_noc.h"

using namespace ahbm;

namespace {

SystemNetworkSpec network(const std::string& model, int chips, Json params = Json::object()) {
  SystemNetworkSpec s;
  s.model = model;
  s.chips = chips;
  s.params = std::move(params);
  return s;
}

CollectiveSpec spec(CollectiveKind k, CollectiveAlgo a, std::vector<int> ranks, uint64_t bytes, double reduce = 0) {
  CollectiveSpec s;
  s.kind = k;
  s.algo = a;
  s.ranks = std::move(ranks);
  s.bytes = bytes;
  s.reduce_ns_per_byte = reduce;
  return s;
}

std::vector<int> iota(int n) {
  std::vector<int> v;
  for (int i = 0; i < n; ++i) v.push_back(i);
  return v;
}

// Simulated time of `s` alone on `net`, and its closed form.
std::pair<double, double> simulated_and_closed(const SystemNetworkSpec& net, const CollectiveSpec& s) {
  const CollectiveRun run = run_collectives(system_network_registry(), net, {s});
  EXPECT_TRUE(run.alpha_beta.has_value());
  return {run.results.at(0).time_ns(),
          collective_closed_form_ns(s.kind, s.algo, int(s.ranks.size()), double(s.bytes), *run.alpha_beta)};
}

}  // namespace

// Each collective and algorithm within 1% of its closed form on an idle network where every
// rank pair is equally far apart (one switch; fully connected) or the ring's neighbours are.
TEST(Collectives, MatchTheirClosedFormsOnAnIdleNetwork) {
  const uint64_t S = 8 << 20;
  const Json sw = {{"switch_latency_ns", 150}};
  struct Case {
    SystemNetworkSpec net;
    CollectiveSpec s;
  };
  using K = CollectiveKind;
  using A = CollectiveAlgo;
  const std::vector<Case> cases = {
      {network("ring", 8), spec(K::all_reduce, A::ring, iota(8), S)},
      {network("switch", 8, sw), spec(K::all_reduce, A::ring, iota(8), S)},
      {network("switch", 8, sw), spec(K::all_reduce, A::tree, iota(8), S)},
      {network("switch", 6, sw), spec(K::all_reduce, A::tree, iota(6), S)},  // not a power of two: 3 rounds
      {network("fully_connected", 8), spec(K::all_reduce, A::halving_doubling, iota(8), S)},
      {network("switch", 8, sw), spec(K::all_reduce, A::halving_doubling, iota(8), S)},
      {network("ring", 8), spec(K::all_gather, A::ring, iota(8), S)},
      {network("ring", 8), spec(K::reduce_scatter, A::ring, iota(8), S)},
      {network("switch", 8, sw), spec(K::all_to_all, A::direct, iota(8), S)},
      {network("torus", 8), spec(K::p2p, A::direct, {0, 5}, S)},
      {network("fat_tree", 8, sw), spec(K::p2p, A::direct, {1, 6}, S)},
      // A local reduction of 0.01 ns per byte on the critical path.
      {network("ring", 8), spec(K::all_reduce, A::ring, iota(8), S, 0.01)},
      {network("switch", 8, sw), spec(K::all_reduce, A::tree, iota(8), S, 0.01)},
      {network("switch", 8, sw), spec(K::reduce_scatter, A::ring, iota(8), S, 0.01)},
  };
  for (const Case& c : cases) {
    const auto [sim, closed] = simulated_and_closed(c.net, c.s);
    EXPECT_NEAR(sim, closed, 0.01 * closed)
        << collective_name(c.s.kind) << "." << collective_name(c.s.algo) << " on " << c.net.model;
  }
}

// Two tensor-parallel groups of a ring of 8, {0,2,4,6} and {1,3,5,7}: each group's ring steps
// go two hops, and the groups share every link (0->1 carries 0->2 and 7->1 traffic). Run
// together, each takes longer than alone, and alone each is its closed form.
TEST(Collectives, ConcurrentGroupsContendOnSharedLinks) {
  const uint64_t S = 4 << 20;
  const SystemNetworkSpec ring = network("ring", 8);
  const CollectiveSpec even = spec(CollectiveKind::all_reduce, CollectiveAlgo::ring, {0, 2, 4, 6}, S);
  const CollectiveSpec odd = spec(CollectiveKind::all_reduce, CollectiveAlgo::ring, {1, 3, 5, 7}, S);
  const auto [alone, closed] = simulated_and_closed(ring, even);
  EXPECT_NEAR(alone, closed, 0.01 * closed);
  const CollectiveRun both = run_collectives(system_network_registry(), ring, {even, odd});
  const double together = std::max(both.results[0].time_ns(), both.results[1].time_ns());
  EXPECT_GT(both.results[0].time_ns(), 1.5 * alone);
  EXPECT_GT(both.results[1].time_ns(), 1.5 * alone);
  EXPECT_LT(together, 2.1 * alone);  // at worst the two share each link's bandwidth
  // On a switch the two groups share no link in one direction: no slowdown.
  const SystemNetworkSpec star = network("switch", 8);
  const double star_alone = run_collectives(system_network_registry(), star, {even}).results[0].time_ns();
  const CollectiveRun star_both = run_collectives(system_network_registry(), star, {even, odd});
  EXPECT_DOUBLE_EQ(star_both.results[0].time_ns(), star_alone);
  EXPECT_DOUBLE_EQ(star_both.results[1].time_ns(), star_alone);
}

TEST(Collectives, SameInputsGiveIdenticalResults) {
  const SystemNetworkSpec net = network("torus", 8);
  const std::vector<CollectiveSpec> specs = {spec(CollectiveKind::all_to_all, CollectiveAlgo::direct, iota(8), 1 << 20),
                                             spec(CollectiveKind::all_reduce, CollectiveAlgo::tree, {0, 3, 5}, 3 << 20)};
  const CollectiveRun a = run_collectives(system_network_registry(), net, specs);
  const CollectiveRun b = run_collectives(system_network_registry(), net, specs);
  ASSERT_EQ(a.results.size(), 2u);
  for (size_t i = 0; i < 2; ++i) EXPECT_EQ(a.results[i].end, b.results[i].end);
  EXPECT_EQ(a.end_ns, b.end_ns);
}

// The schedules themselves: message counts and bytes on the wire.
TEST(Collectives, SchedulesMoveTheTextbookBytes) {
  const uint64_t S = 8000;
  const auto total = [](const std::vector<CollectiveMessage>& m) {
    uint64_t b = 0;
    for (const auto& x : m) b += x.bytes;
    return b;
  };
  const auto ring = collective_schedule(spec(CollectiveKind::all_reduce, CollectiveAlgo::ring, iota(8), S));
  EXPECT_EQ(ring.size(), 2u * 7 * 8);
  EXPECT_EQ(total(ring), 2u * 7 * S);  // 2 (n-1) chunks of S/n from each of n ranks
  const auto tree = collective_schedule(spec(CollectiveKind::all_reduce, CollectiveAlgo::tree, iota(5), S));
  EXPECT_EQ(tree.size(), 2u * 4);      // n - 1 up, n - 1 down
  const auto hd = collective_schedule(spec(CollectiveKind::all_reduce, CollectiveAlgo::halving_doubling, iota(8), S));
  EXPECT_EQ(total(hd), 2u * 7 * S);
  EXPECT_EQ(collective_schedule(spec(CollectiveKind::all_to_all, CollectiveAlgo::direct, iota(4), S)).size(), 12u);
  EXPECT_TRUE(collective_schedule(spec(CollectiveKind::all_reduce, CollectiveAlgo::ring, {3}, S)).empty());
  EXPECT_THROW(collective_schedule(spec(CollectiveKind::all_reduce, CollectiveAlgo::halving_doubling, iota(6), S)), InputError);
  EXPECT_THROW(collective_schedule(spec(CollectiveKind::all_gather, CollectiveAlgo::tree, iota(4), S)), InputError);
  EXPECT_THROW(collective_schedule(spec(CollectiveKind::p2p, CollectiveAlgo::direct, iota(3), S)), InputError);
  EXPECT_THROW(run_collectives(system_network_registry(), network("ring", 4),
                               {spec(CollectiveKind::all_reduce, CollectiveAlgo::ring, {0, 4}, S)}),
               InputError);
}

// A user's own network (tools/examples/bus_noc, written for the NoC) added to a system
// registry carries collectives like a built-in one; it has no closed form here.
TEST(Collectives, UserNetworkModelRunsCollectives) {
  NocRegistry reg = system_network_registry();
  examples::register_bus_noc(reg);
  SystemNetworkSpec bus = network("bus", 4, {{"bandwidth_gbps", 32.0}, {"latency_ns", 50.0}});
  const CollectiveRun run = run_collectives(reg, bus, {spec(CollectiveKind::all_reduce, CollectiveAlgo::ring, iota(4), 1 << 20)});
  EXPECT_FALSE(run.alpha_beta.has_value());
  // One transfer at a time on the bus: 2 (n-1) steps of n chunks of S/n, serialised.
  const double serial = 2.0 * 3 * (1 << 20) / 32.0;
  EXPECT_GE(run.results[0].time_ns(), serial);
  EXPECT_LE(run.results[0].time_ns(), serial + 6 * 50.0 + 1);
}

namespace {
// A SystemC thread that runs two all-reduces one after the other, as a chip's program would
// between its layers: start, wait on the engine, start the next.
struct TwoLayers : sc_core::sc_module {
  TwoLayers(sc_core::sc_module_name n, CollectiveEngine& e, CollectiveSpec s) : sc_core::sc_module(n), engine(e), spec(std::move(s)) {
    SC_HAS_PROCESS(TwoLayers);
    SC_THREAD(run);
  }
  void run() {
    const int a = engine.start(spec);
    engine.wait(a);
    first = sc_core::sc_time_stamp();
    sc_core::wait(1, sc_core::SC_US);  // the next layer's compute
    const int b = engine.start(spec);
    engine.wait(b);
    second = sc_core::sc_time_stamp();
  }
  CollectiveEngine& engine;
  CollectiveSpec spec;
  sc_core::sc_time first, second;
};
}  // namespace

TEST(Collectives, StartedAndWaitedOnFromASystemCThread) {
  SimContext context;
  SimContext::Scope use(context);
  std::unique_ptr<Noc> net = make_system_network(system_network_registry(), network("ring", 4));
  CollectiveEngine engine("collectives", *net);
  TwoLayers layers("layers", engine, spec(CollectiveKind::all_reduce, CollectiveAlgo::ring, iota(4), 1 << 20));
  sc_core::sc_start();
  const double one = to_ns(layers.first);
  EXPECT_GT(one, 0);
  EXPECT_NEAR(to_ns(layers.second), 2 * one + 1000, 1e-6);
  unwind_threads();
}

// coll-bench's rows: nccl-tests' bandwidths and the closed form beside the simulated time.
TEST(CollBench, RowsCarryBusBandwidthAndTheClosedForm) {
  CollBenchOptions o;
  o.network = network("ring", 8);
  o.min_bytes = 1 << 20;
  o.max_bytes = 4 << 20;
  o.step_factor = 4;
  const CollBenchResult r = run_coll_bench(system_network_registry(), o);
  ASSERT_EQ(r.rows.size(), 2u);
  for (const CollBenchRow& row : r.rows) {
    EXPECT_NEAR(row.algbw_gbps, double(row.bytes) / (row.time_us * 1e3), 1e-9);
    EXPECT_NEAR(row.busbw_gbps, row.algbw_gbps * 2 * 7 / 8, 1e-9);
    EXPECT_LT(std::abs(row.error_pct), 1.0);
  }
  EXPECT_GT(r.rows[1].busbw_gbps, r.rows[0].busbw_gbps);  // latency matters less at larger sizes
  EXPECT_LT(r.rows[1].busbw_gbps, 64.0);                   // never above the link
  o.collective = "all_gather";
  o.algo = "tree";
  EXPECT_THROW(run_coll_bench(system_network_registry(), o), InputError);
}
