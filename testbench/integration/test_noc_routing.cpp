// Routing beyond dimension order on the mesh and the torus (docs/noc.md, "Routing"): O1TURN,
// Valiant and minimal adaptive with an escape VC. Zero-load latency at its closed form (Valiant:
// through the intermediate router each packet draws, recomputed here from the seed and the
// packet id); every packet delivered under bursts far beyond saturation (a deadlock stops the
// run with an error and leaves arrivals missing); saturation throughput against dimension order
// on transpose and uniform traffic; the attention run unchanged in values; parameter errors.
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>

#include "hw/bench/booksim_config.h"
#include "hw/noc/flit_network.h"
#include "hw/noc/flit_routing.h"
#include "hw/bench/noc_bench.h"
#include "test_noc_support.h"

using namespace ahbm;
using namespace ahbm::test;

namespace {

// Routers between two nodes of a cols x rows mesh or torus, not counting the last one.
int distance(int a, int b, int cols, int rows, bool torus) {
  const int dx = std::abs(a % cols - b % cols), dy = std::abs(a / cols - b / cols);
  return torus ? std::min(dx, cols - dx) + std::min(dy, rows - dy) : dx + dy;
}

// Sends each pair alone (1, 2, 7 and 64 flits) and checks hops and arrival time. Packet ids are
// 1, 2, ... in send order (Noc::send), which fixes each Valiant packet's intermediate router.
void check_zero_load(const std::string& model, const std::string& routing, const Json& preset, const Pipeline& p,
                     bool torus) {
  const int cols = 4, rows = 4, R = cols * rows;
  const uint64_t seed = 5;
  Json params = preset;
  params["routing"] = routing;
  params["vcs"] = 4;
  if (routing != "min_adapt" && routing != "dor") params["route_seed"] = seed;
  std::vector<ProbeSend> sends;
  for (const auto& [s, d] : std::vector<std::pair<int, int>>{{0, 15}, {5, 6}, {3, 12}, {9, 9}, {14, 1}})
    for (int64_t f : {1, 2, 7, 64}) sends.push_back({int64_t(sends.size()) * 2000, s, {d}, uint64_t(f) * 64});
  const ProbeResult r = run_probe(model, params, node_names(R), sends);
  ASSERT_EQ(r.arrivals.size(), sends.size()) << model << " " << params.dump();
  for (const auto& a : r.arrivals) {
    const ProbeSend& s = sends[size_t(a.send)];
    const int d = s.dsts[0];
    int hops = distance(s.src, d, cols, rows, torus) + 1;
    if (routing == "valiant") {
      const int via = FlitNetwork::route_pick(seed, uint64_t(a.send) + 1, R);
      hops = distance(s.src, via, cols, rows, torus) + distance(via, d, cols, rows, torus) + 1;
    }
    EXPECT_EQ(a.hops, hops) << model << " " << params.dump() << " " << s.src << "->" << d;
    EXPECT_EQ(a.cycle - s.cycle, closed_form(hops, int64_t(s.bytes / 64), p))
        << model << " " << params.dump() << " " << s.src << "->" << d << " flits " << s.bytes / 64;
  }
}

NocBenchOptions bench(const std::string& traffic, const Json& params, double rate) {
  NocBenchOptions o;
  o.noc = "mesh";
  o.nodes = 16;
  o.params = params;
  o.traffic = traffic;
  o.packet_flits = 1;
  o.rate = rate;
  o.cycles = 3000;
  o.warmup = 1000;
  o.seed = 1;
  return o;
}

// Accepted flits/node/cycle offered far beyond saturation: the saturation throughput.
double saturation(const std::string& traffic, const std::string& routing) {
  const NocBenchResult r =
      run_noc_bench(NocRegistry::with_builtin_models(),
                    bench(traffic, {{"routing", routing}, {"vcs", 4}, {"buffer_flits", 4}}, 0.95));
  EXPECT_TRUE(r.saturated) << traffic << " " << routing;
  return r.accepted;
}

std::string error_of(const std::string& model, const Json& params) {
  try {
    run_probe(model, params, node_names(16), {});
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(NocRouting, ZeroLoadMatchesClosedForm) {
  for (const char* routing : {"o1turn", "valiant", "min_adapt"}) {
    check_zero_load("mesh", routing, Json::object(), kClassicPipeline, false);
    check_zero_load("mesh", routing, {{"router", "booksim-iq"}}, kBooksimPipeline, false);
  }
  for (const char* routing : {"o1turn", "valiant"}) {
    check_zero_load("torus", routing, Json::object(), kClassicPipeline, true);
    check_zero_load("torus", routing, {{"router", "booksim-iq"}}, kBooksimPipeline, true);
  }
}

// Valiant's mean route under uniform traffic at low load: the intermediate router m is uniform
// over all 16 and independent of source and destination, so E[hops] = E|s - m| + E|m - d| + 1
// = 2.5 + 2.5 + 1 = 6 routers on a 4 x 4 mesh (E|x1 - x2| = (k^2 - 1) / 3k = 1.25 per dimension),
// against 1 + 2.5 x 16/15 = 3.67 for the minimal routes (uniform excludes the source itself).
TEST(NocRouting, ValiantDoublesTheRouteLength) {
  const NocRegistry reg = NocRegistry::with_builtin_models();
  NocBenchOptions o = bench("uniform", {{"routing", "valiant"}}, 0.05);
  o.cycles = 20000;
  const NocBenchResult v = run_noc_bench(reg, o);
  EXPECT_NEAR(v.avg_hops, 6.0, 0.1);
  for (const char* routing : {"dor", "o1turn", "min_adapt"}) {
    o.params = {{"routing", routing}};
    EXPECT_NEAR(run_noc_bench(reg, o).avg_hops, 1 + 2.5 * 16 / 15, 0.05) << routing;
  }
}

namespace {
// Every node of 16 sends 150 packets of 1-6 flits in 300 cycles: uniform or transpose, one in ten
// a multicast; `deliveries` counts the copies to deliver.
std::vector<ProbeSend> far_beyond_saturation(size_t& deliveries) {
  const int R = 16;
  std::vector<ProbeSend> sends;
  SplitMix64 rng(11);
  deliveries = 0;
  for (int64_t c = 0; c < 300; ++c)
    for (int s = 0; s < R; ++s) {
      if (rng.below(2)) continue;
      std::vector<int> dsts;
      const int kind = rng.below(10);
      if (kind == 0) dsts = {(s + 1) % R, (s + 6) % R, (s + 11) % R};  // a multicast
      else if (kind < 5) dsts = {(s % 4) * 4 + s / 4};                    // transpose
      else dsts = {(s + 1 + rng.below(R - 1)) % R};                      // uniform, not itself
      deliveries += dsts.size();
      sends.push_back({c, s, dsts, uint64_t(1 + rng.below(6)) * 64});
    }
  return sends;
}
}  // namespace

// Bursts far beyond saturation (every node sends 150 packets of 1-6 flits in 300 cycles, uniform
// or transpose, some of them multicasts) with 1- and 4-flit buffers, 2 and 4 VCs, both router
// presets and separable VC allocators: every packet reaches every destination. A deadlock would
// throw from the NoC thread.
TEST(NocRouting, EveryPacketDeliveredFarBeyondSaturation) {
  const int R = 16;
  size_t deliveries = 0;
  const std::vector<ProbeSend> sends = far_beyond_saturation(deliveries);
  for (const char* routing : {"o1turn", "valiant", "min_adapt"})
    for (const Json& preset : {Json{{"vcs", 2}, {"buffer_flits", 1}}, Json{{"vcs", 4}, {"buffer_flits", 4}},
                               Json{{"router", "booksim-iq"}, {"vcs", 2}, {"buffer_flits", 1}},
                               Json{{"router", "booksim-iq"}, {"vcs", 4}, {"buffer_flits", 2}},
                               Json{{"router", "booksim-iq"}, {"vcs", 4}, {"buffer_flits", 2}, {"vc_allocator", "input-first"}},
                               Json{{"router", "booksim-iq"}, {"vcs", 2}, {"buffer_flits", 1}, {"vc_allocator", "islip"}}}) {
      Json params = preset;
      params["routing"] = routing;
      if (std::string(routing) == "min_adapt" && params.contains("vc_allocator")) continue;  // greedy only
      EXPECT_EQ(arrivals_or_error("mesh", params, node_names(R), sends), deliveries) << params.dump();
      if (std::string(routing) == "min_adapt") continue;
      if (params["vcs"] == 2) params["vcs"] = 4;  // a torus: two route classes x two dateline classes
      EXPECT_EQ(arrivals_or_error("torus", params, node_names(R), sends), deliveries) << params.dump();
    }
}

// BookSim's dim_order_torus (issue 43), the routing of dor on a torus or ring with "dateline":
// "booksim" (the booksim-iq default): a packet entering a dimension fixes its direction, the
// shorter way round, and its VC class for the rest of that dimension: 1 when its path wraps
// going the positive way or stays unwrapped going the negative way, else 0. A tie (k/2 apart)
// goes either way, drawn per packet from the seed: never from a global generator, so runs repeat.
TEST(NocRouting, TorusDimensionOrderAsBookSim) {
  std::vector<std::array<int, 4>> ring;  // 4 routers: channel 2i goes +1, 2i + 1 goes -1
  for (int i = 0; i < 4; ++i) ring.push_back({2 * i, 2 * i + 1, -1, -1});
  const TorusDorRouting t(2, nullptr, 5, 4, 1, ring);
  auto route = [&](int from, int to, uint64_t packet) {
    RouteState s;
    EXPECT_TRUE(t.start(packet, s));
    const int ch = t.next(from, to, s);
    return std::make_pair(ch, t.vc_class(s));
  };
  EXPECT_EQ(route(0, 1, 0), std::make_pair(0, 0));  // +1, no wrap: class 0
  EXPECT_EQ(route(3, 0, 0), std::make_pair(6, 1));  // +1 across the wrap: class 1 all the way
  EXPECT_EQ(route(1, 0, 0), std::make_pair(3, 1));  // -1, no wrap: class 1
  EXPECT_EQ(route(0, 3, 0), std::make_pair(1, 0));  // -1 across the wrap: class 0
  EXPECT_EQ(route(2, 2, 0).first, -1);              // there: eject
  // A packet keeps its direction and class through the dimension: 3 -> 1 going +1 wraps at once.
  int plus = 0;
  for (uint64_t p = 0; p < 400; ++p) {
    RouteState s;
    t.start(p, s);
    const int first = t.next(3, 1, s), part = s.part;
    const int second = t.next(first == 6 ? 0 : 2, 1, s);
    EXPECT_EQ(s.part, part);
    EXPECT_EQ(second, first == 6 ? 0 : 5);  // on round the same way
    EXPECT_EQ(part, 1);                      // +1 wraps, -1 does not: class 1 either way
    plus += first == 6;
  }
  EXPECT_GT(plus, 160);  // both ways, about half each
  EXPECT_LT(plus, 240);
  EXPECT_EQ(route(0, 2, 17), route(0, 2, 17));  // the same packet, the same draw
  const TorusDorRouting other(2, nullptr, 6, 4, 1, ring);
  int differ = 0;
  for (uint64_t p = 0; p < 64; ++p) {
    RouteState a, b;
    t.start(p, a);
    other.start(p, b);
    differ += t.next(0, 2, a) != other.next(0, 2, b);
  }
  EXPECT_GT(differ, 10);  // another seed, other draws
}

// The BookSim classes on the torus and ring with their 2-cycle channels (use_noc_latency):
// every packet of bursts far beyond saturation delivered, multicasts (which keep the destination
// table and the wrap-around datelines) among them, with 1-flit buffers and 2 VCs; the zero-load
// time is the closed form with 2-cycle links.
TEST(NocRouting, BooksimTorusDeliversEverythingAndKeepsZeroLoad) {
  const int R = 16;
  size_t deliveries = 0;
  const std::vector<ProbeSend> sends = far_beyond_saturation(deliveries);
  for (const Json& p : {Json{{"router", "booksim-iq"}, {"vcs", 2}, {"buffer_flits", 1}, {"link_cycles", 2}, {"eject_cycles", 1}},
                        Json{{"router", "booksim-iq"}, {"vcs", 4}, {"buffer_flits", 2}, {"route_seed", 9}}}) {
    EXPECT_EQ(arrivals_or_error("torus", p, node_names(R), sends), deliveries) << p.dump();
    Json ring = p;
    ring.erase("route_seed");
    EXPECT_EQ(arrivals_or_error("ring", ring, node_names(R), sends), deliveries) << p.dump();
  }
  const Json two = {{"router", "booksim-iq"}, {"link_cycles", 2}, {"eject_cycles", 1}};
  std::vector<ProbeSend> alone;
  for (int d : {1, 2, 5, 10, 15}) alone.push_back({int64_t(alone.size()) * 500, 0, {d}, 3 * 64});
  const ProbeResult r = run_probe("torus", two, node_names(R), alone);
  ASSERT_EQ(r.arrivals.size(), alone.size());
  for (const auto& a : r.arrivals) {
    const ProbeSend& s = alone[size_t(a.send)];
    EXPECT_EQ(a.cycle - s.cycle, closed_form(torus_hops(4, 4)(0, s.dsts[0]), 3, {4, 2, 2, 1})) << s.dsts[0];
  }
}

// Saturation throughput against dimension order (accepted flits/node/cycle offered 0.95; classic
// router, 4 VCs x 4 flits, 1-flit packets). On a 4 x 4 mesh under transpose, dimension order
// loads the channels into and out of the diagonal's turns; O1TURN spreads each row's traffic
// over both orders and min_adapt around busy ports, so both accept more (measured 0.746 and
// 0.908 against 0.606). Valiant's two random phases make any pattern look like uniform traffic
// twice over: its throughput is nearly the same under transpose and uniform and below half the
// mesh's uniform bound (4/k = 1), so on the mesh it loses to dimension order (0.42 against 0.61
// and 0.79). Where dimension order meets its adversary, tornado on the 8 x 8 torus (every packet
// 3 hops the same way round its ring), both Valiant and O1TURN beat it (measured 0.159 and 0.179
// against 0.092).
TEST(NocRouting, SaturationThroughputAgainstDimensionOrder) {
  const double dor_t = saturation("transpose", "dor"), dor_u = saturation("uniform", "dor");
  EXPECT_GT(saturation("transpose", "o1turn"), 1.1 * dor_t);
  EXPECT_GT(saturation("transpose", "min_adapt"), 1.1 * dor_t);
  EXPECT_GT(saturation("uniform", "o1turn"), 0.9 * dor_u);
  EXPECT_GT(saturation("uniform", "min_adapt"), 0.9 * dor_u);
  const double valiant_u = saturation("uniform", "valiant"), valiant_t = saturation("transpose", "valiant");
  EXPECT_LT(valiant_u, 0.5);
  EXPECT_GT(valiant_u, 0.3);
  EXPECT_NEAR(valiant_t, valiant_u, 0.1 * valiant_u);
  auto tornado = [](const std::string& routing) {
    NocBenchOptions o = bench("tornado", {{"routing", routing}, {"vcs", 8}, {"buffer_flits", 4}}, 0.95);
    o.noc = "torus";
    o.nodes = 64;
    o.cycles = 2000;
    return run_noc_bench(NocRegistry::with_builtin_models(), o).accepted;
  };
  const double dor_tornado = tornado("dor");
  EXPECT_GT(tornado("valiant"), 1.3 * dor_tornado);
  EXPECT_GT(tornado("o1turn"), 1.3 * dor_tornado);
}

// The attention run on every routing: the same O as on the ideal NoC; the Q multicast follows
// the XY tree on every routing (multicasts always do), so it completes at dimension order's time.
TEST(NocRouting, AttentionOutputsIdenticalOnEveryRouting) {
  const RunOutput ideal = run_default_scenario("ideal");
  const RunOutput dor = run_default_scenario("mesh", {{"vcs", 4}});
  for (const char* routing : {"o1turn", "valiant", "min_adapt"}) {
    const RunOutput r = run_default_scenario("mesh", {{"vcs", 4}, {"routing", routing}});
    EXPECT_TRUE((r.sim.outputs[0].array() == ideal.sim.outputs[0].array()).all()) << routing;
    EXPECT_EQ(r.summary.noc.stats["multicast_completion"]["max_ns"], dor.summary.noc.stats["multicast_completion"]["max_ns"])
        << routing;
    EXPECT_EQ(r.summary.noc.stats["topology"]["routing"], routing);
  }
  EXPECT_FALSE(dor.summary.noc.stats["topology"].contains("routing"));  // dor adds nothing to the summary
}

TEST(NocRouting, ParameterErrorsNameTheField) {
  const std::string unknown = error_of("mesh", {{"routing", "west_first"}});
  EXPECT_NE(unknown.find("routing"), std::string::npos);
  EXPECT_NE(unknown.find("min_adapt"), std::string::npos);  // the allowed names
  EXPECT_NE(error_of("mesh", {{"routing", "o1turn"}, {"vcs", 3}}).find("vcs"), std::string::npos);
  EXPECT_NE(error_of("torus", {{"routing", "valiant"}, {"vcs", 2}}).find("vcs"), std::string::npos);
  EXPECT_NE(error_of("mesh", {{"routing", "min_adapt"}, {"vcs", 1}}).find("vcs"), std::string::npos);
  EXPECT_NE(error_of("torus", {{"routing", "min_adapt"}, {"vcs", 4}}).find("routing"), std::string::npos);
  EXPECT_NE(error_of("mesh", {{"route_seed", 3}}).find("route_seed"), std::string::npos);
  EXPECT_NE(error_of("ring", {{"routing", "o1turn"}}).find("routing"), std::string::npos);  // not a ring parameter
}

// BookSim's routing_function names map onto "routing": dim_order, xy_yx (BookSim's O1TURN),
// valiant, min_adapt (mesh only); anything else names the field. Its vc_allocator too.
TEST(NocRouting, BooksimRoutingFunctions) {
  const std::string mesh = "topology = mesh; k = 4; n = 2; num_vcs = 4;";
  auto routing = [&](const std::string& fn, const std::string& base) {
    const NocBenchOptions o = parse_booksim_config(base, "r.cfg", {"routing_function=" + fn});
    return o.params.contains("routing") ? o.params["routing"].get<std::string>() : std::string("dor");
  };
  EXPECT_EQ(routing("dim_order", mesh), "dor");
  EXPECT_EQ(routing("xy_yx", mesh), "o1turn");
  EXPECT_EQ(routing("valiant", mesh), "valiant");
  EXPECT_EQ(routing("min_adapt", mesh), "min_adapt");
  EXPECT_EQ(routing("valiant", "topology = torus; k = 4; n = 2; num_vcs = 4;"), "valiant");
  // BookSim's vc_allocator (default islip) maps onto ours, except for min_adapt, which picks its
  // port while allocating (greedy), and wavefront, a maximal matching as our greedy one.
  EXPECT_EQ(parse_booksim_config(mesh, "r.cfg").params["vc_allocator"], "islip");
  EXPECT_EQ(parse_booksim_config(mesh, "r.cfg", {"vc_allocator=separable_input_first"}).params["vc_allocator"],
            "input-first");
  EXPECT_FALSE(parse_booksim_config(mesh, "r.cfg", {"vc_allocator=wavefront"}).params.contains("vc_allocator"));
  EXPECT_FALSE(parse_booksim_config(mesh, "r.cfg", {"routing_function=min_adapt"}).params.contains("vc_allocator"));
  for (const auto& [fn, base] : std::vector<std::pair<std::string, std::string>>{
           {"romm", mesh}, {"min_adapt", "topology = torus; k = 4; n = 2;"}, {"xy_yx", "topology = torus; k = 8; n = 1;"}}) {
    try {
      parse_booksim_config(base, "r.cfg", {"routing_function=" + fn});
      ADD_FAILURE() << fn << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("routing_function"), std::string::npos) << e.what();
    }
  }
}
