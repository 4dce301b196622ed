// The concentrated mesh (`cmesh`) and the 2D flattened butterfly (`flatfly`), docs/noc.md.
// cmesh: c endpoints per router, placed as BookSim's CMesh::NodeToRouter places them (c = 4: the
// endpoints form a 2k x 2k grid and each 2 x 2 block shares a router); H = router distance + 1.
// flatfly: every router linked to each router of its row and column; H = [x differs] + [y
// differs] + 1. For both: zero-load latency at its closed form for 1- to 64-flit packets on both
// presets; tree and source multicast at theirs; every packet delivered far beyond saturation
// with every routing; the attention run; the BookSim config mapping.
#include <gtest/gtest.h>

#include <cstdlib>

#include "hw/bench/booksim_config.h"
#include "hw/noc/flit_network.h"
#include "hw/noc/mesh_noc.h"
#include "hw/bench/noc_bench.h"
#include "test_noc_support.h"

using namespace ahbm;
using namespace ahbm::test;

namespace {

// Router (x, y) of endpoint e on a k x k cmesh, written out independently of the model: c = 4 is
// BookSim's 2 x 2 blocks of a 2k-wide endpoint grid; c = 3 (not a square) fills routers in turn.
std::pair<int, int> router_of(int e, int c, int k) {
  if (c == 4) return {(e % (2 * k)) / 2, (e / (2 * k)) / 2};
  return {(e / c) % k, (e / c) / k};
}

std::function<int(int, int)> cmesh_hops(int c, int k) {
  return [c, k](int s, int d) {
    const auto [sx, sy] = router_of(s, c, k);
    const auto [dx, dy] = router_of(d, c, k);
    return std::abs(sx - dx) + std::abs(sy - dy) + 1;
  };
}

}  // namespace

TEST(NocCmesh, ZeroLoadMatchesClosedForm) {
  // c = 4 on 4 x 4 routers (64 endpoints, BookSim's k = 4 cmesh) and c = 3 on 2 x 2 (12).
  for (const auto& [c, k, pairs] : std::vector<std::tuple<int, int, std::vector<std::pair<int, int>>>>{
           {4, 4, {{0, 63}, {0, 1}, {0, 8}, {0, 9}, {2, 17}, {63, 0}, {7, 56}, {30, 33}}},
           {3, 2, {{0, 11}, {0, 2}, {3, 5}, {4, 9}, {10, 1}}}})
    for (const auto& [preset, p] : std::vector<std::pair<Json, Pipeline>>{{Json::object(), kClassicPipeline},
                                                                          {{{"router", "booksim-iq"}}, kBooksimPipeline}}) {
      Json params = preset;
      params["concentration"] = c;
      std::vector<ProbeSend> sends;
      for (const auto& [s, d] : pairs)
        for (int64_t f : {1, 2, 7, 64}) sends.push_back({int64_t(sends.size()) * 2000, s, {d}, uint64_t(f) * 64});
      const ProbeResult r = run_probe("cmesh", params, node_names(c * k * k), sends);
      ASSERT_EQ(r.arrivals.size(), sends.size()) << params.dump();
      EXPECT_EQ(r.stats.at("topology").get(GridStats::cols), k);
      for (const auto& a : r.arrivals) {
        const ProbeSend& s = sends[size_t(a.send)];
        const int h = cmesh_hops(c, k)(s.src, s.dsts[0]);
        EXPECT_EQ(a.hops, h) << params.dump() << " " << s.src << "->" << s.dsts[0];
        EXPECT_EQ(a.cycle - s.cycle, closed_form(h, int64_t(s.bytes / 64), p))
            << params.dump() << " " << s.src << "->" << s.dsts[0] << " flits " << s.bytes / 64;
      }
    }
}

// Tree multicast: each destination at its own unicast time, fewer router-to-router flits than
// source replication, whose k-th copy arrives at its unicast time + k F.
TEST(NocCmesh, MulticastTreeAndSourceReplication) {
  const std::vector<int> dsts = {1, 8, 9, 63, 36};  // own router, neighbours, far corner
  const int F = 16;
  for (const auto& [preset, p] : std::vector<std::pair<Json, Pipeline>>{{Json::object(), kClassicPipeline},
                                                                        {{{"router", "booksim-iq"}}, kBooksimPipeline}}) {
    const ProbeResult tree = run_probe("cmesh", preset, node_names(64), {{0, 0, dsts, uint64_t(F) * 64}});
    ASSERT_EQ(tree.arrivals.size(), dsts.size());
    for (const auto& a : tree.arrivals) EXPECT_EQ(a.cycle, closed_form(cmesh_hops(4, 4)(0, a.endpoint), F, p));
    Json source = preset;
    source["multicast"] = "source";
    const ProbeResult src = run_probe("cmesh", source, node_names(64), {{0, 0, dsts, uint64_t(F) * 64}});
    ASSERT_EQ(src.arrivals.size(), dsts.size());
    for (const auto& a : src.arrivals) {
      const int64_t k = std::find(dsts.begin(), dsts.end(), a.endpoint) - dsts.begin();
      EXPECT_EQ(a.cycle, closed_form(cmesh_hops(4, 4)(0, a.endpoint), F, p) + k * F) << a.endpoint;
    }
    EXPECT_LT(tree.stats.get(FlitNocStats::link_flits), src.stats.get(FlitNocStats::link_flits));
  }
}

// Every packet arrives under a burst far beyond saturation, unicast and multicast, with each
// routing (a deadlock would throw from the NoC thread).
TEST(NocCmesh, EveryPacketDeliveredFarBeyondSaturation) {
  std::vector<ProbeSend> sends;
  SplitMix64 rng(5);
  size_t deliveries = 0;
  for (int64_t c = 0; c < 200; ++c)
    for (int s = 0; s < 64; ++s) {
      if (rng.below(2)) continue;
      std::vector<int> d = {(s + 1 + rng.below(63)) % 64};
      if (rng.below(8) == 0) d = {(s + 5) % 64, (s + 30) % 64, (s + 50) % 64};
      deliveries += d.size();
      sends.push_back({c, s, d, uint64_t(1 + rng.below(4)) * 64});
    }
  for (const char* routing : {"dor", "o1turn", "valiant", "min_adapt"})
    for (const Json& preset : {Json{{"vcs", 2}, {"buffer_flits", 2}}, Json{{"router", "booksim-iq"}, {"vcs", 4}}}) {
      Json params = preset;
      params["routing"] = routing;
      EXPECT_EQ(arrivals_or_error("cmesh", params, node_names(64), sends), deliveries) << params.dump();
    }
}

TEST(NocCmesh, BooksimConfig) {
  const NocBenchOptions o = parse_booksim_config("topology = cmesh; k = 4; n = 2; c = 4; xr = 2; yr = 2;", "c.cfg");
  EXPECT_EQ(o.noc, "cmesh");
  EXPECT_EQ(o.nodes, 64);
  EXPECT_EQ(o.params["concentration"], 4);
  EXPECT_FALSE(o.params.contains("routing"));  // dor_no_express, BookSim's plain cmesh routing
  EXPECT_EQ(parse_booksim_config("topology = cmesh; k = 4; routing_function = xy_yx_no_express;", "c.cfg")
                .params["routing"],
            "o1turn");
  // BookSim's dor_cmesh uses express channels along the edges: not modelled, named in the error.
  EXPECT_THROW(parse_booksim_config("topology = cmesh; k = 4; routing_function = dor;", "c.cfg"), InputError);
  EXPECT_THROW(parse_booksim_config("topology = mesh; k = 4; c = 4;", "c.cfg"), InputError);
}

// The attention run on the cmesh: the same O as on the ideal NoC. The default 6 endpoints with
// c = 4 give 2 x 1 routers; BookSim's placement (a 4-wide endpoint grid in 2 x 2 blocks) puts
// host, qsrc, g0.cube2 and g0.cube3 on router 0 and g0.cube0, g0.cube1 on router 1, so the
// 1280-flit Q multicast completes 2 routers away: 2 x 5 + 1279 cycles on the classic router.
TEST(NocCmesh, AttentionRunsOnTheCmesh) {
  const RunOutput ideal = run_default_scenario("ideal");
  const RunOutput r = run_default_scenario("cmesh");
  EXPECT_TRUE((r.sim.outputs[0].array() == ideal.sim.outputs[0].array()).all());
  EXPECT_DOUBLE_EQ(r.summary.noc.stats["multicast_completion"]["max_ns"].get<double>(), double(2 * 5 + 1279));
  EXPECT_EQ(r.summary.noc.stats["topology"]["placement"]["g0.cube0"], Json::array({1, 0}));
  EXPECT_EQ(r.summary.noc.stats["topology"]["placement"]["g0.cube3"], Json::array({0, 0}));
}

namespace {

// Routers crossed on a cols-wide flatfly with c endpoints per router (endpoint e on router e / c).
std::function<int(int, int)> flatfly_hops(int c, int cols) {
  return [c, cols](int s, int d) {
    const int rs = s / c, rd = d / c;
    return int(rs % cols != rd % cols) + int(rs / cols != rd / cols) + 1;
  };
}

}  // namespace

TEST(NocFlatfly, ZeroLoadMatchesClosedForm) {
  for (const auto& [c, pairs] : std::vector<std::pair<int, std::vector<std::pair<int, int>>>>{
           {1, {{0, 15}, {0, 3}, {0, 12}, {5, 6}, {9, 9}, {14, 1}}}, {2, {{0, 31}, {0, 1}, {2, 7}, {30, 4}}}})
    for (const auto& [preset, p] : std::vector<std::pair<Json, Pipeline>>{{Json::object(), kClassicPipeline},
                                                                          {{{"router", "booksim-iq"}}, kBooksimPipeline}})
      for (const char* routing : {"dor", "o1turn", "min_adapt"}) {  // minimal routes: the same H
        Json params = preset;
        params["concentration"] = c;
        params["routing"] = routing;
        params["vcs"] = 4;
        std::vector<ProbeSend> sends;
        for (const auto& [s, d] : pairs)
          for (int64_t f : {1, 2, 7, 64}) sends.push_back({int64_t(sends.size()) * 2000, s, {d}, uint64_t(f) * 64});
        const ProbeResult r = run_probe("flatfly", params, node_names(16 * c), sends);
        ASSERT_EQ(r.arrivals.size(), sends.size()) << params.dump();
        for (const auto& a : r.arrivals) {
          const ProbeSend& s = sends[size_t(a.send)];
          const int h = flatfly_hops(c, 4)(s.src, s.dsts[0]);
          EXPECT_EQ(a.hops, h) << params.dump() << " " << s.src << "->" << s.dsts[0];
          EXPECT_EQ(a.cycle - s.cycle, closed_form(h, int64_t(s.bytes / 64), p))
              << params.dump() << " " << s.src << "->" << s.dsts[0] << " flits " << s.bytes / 64;
        }
      }
}

TEST(NocFlatfly, MulticastTreeAndSourceReplication) {
  const std::vector<int> dsts = {3, 5, 10, 15, 12};
  const int F = 16;
  for (const auto& [preset, p] : std::vector<std::pair<Json, Pipeline>>{{Json::object(), kClassicPipeline},
                                                                        {{{"router", "booksim-iq"}}, kBooksimPipeline}}) {
    const ProbeResult tree = run_probe("flatfly", preset, node_names(16), {{0, 0, dsts, uint64_t(F) * 64}});
    ASSERT_EQ(tree.arrivals.size(), dsts.size());
    for (const auto& a : tree.arrivals) EXPECT_EQ(a.cycle, closed_form(flatfly_hops(1, 4)(0, a.endpoint), F, p));
    Json source = preset;
    source["multicast"] = "source";
    const ProbeResult src = run_probe("flatfly", source, node_names(16), {{0, 0, dsts, uint64_t(F) * 64}});
    ASSERT_EQ(src.arrivals.size(), dsts.size());
    for (const auto& a : src.arrivals) {
      const int64_t k = std::find(dsts.begin(), dsts.end(), a.endpoint) - dsts.begin();
      EXPECT_EQ(a.cycle, closed_form(flatfly_hops(1, 4)(0, a.endpoint), F, p) + k * F) << a.endpoint;
    }
    EXPECT_LT(tree.stats.get(FlitNocStats::link_flits), src.stats.get(FlitNocStats::link_flits));
  }
}

TEST(NocFlatfly, EveryPacketDeliveredFarBeyondSaturation) {
  std::vector<ProbeSend> sends;
  SplitMix64 rng(9);
  size_t deliveries = 0;
  for (int64_t c = 0; c < 300; ++c)
    for (int s = 0; s < 16; ++s) {
      if (rng.below(3) == 0) continue;
      std::vector<int> d = {(s + 1 + rng.below(15)) % 16};
      if (rng.below(8) == 0) d = {(s + 3) % 16, (s + 7) % 16, (s + 12) % 16};
      deliveries += d.size();
      sends.push_back({c, s, d, uint64_t(1 + rng.below(4)) * 64});
    }
  for (const char* routing : {"dor", "o1turn", "valiant", "min_adapt"})
    for (const Json& preset : {Json{{"vcs", 2}, {"buffer_flits", 1}}, Json{{"router", "booksim-iq"}, {"vcs", 4}}}) {
      Json params = preset;
      params["routing"] = routing;
      EXPECT_EQ(arrivals_or_error("flatfly", params, node_names(16), sends), deliveries) << params.dump();
    }
}

// A 4 x 4 flatfly has 3 channels each way per router and dimension where the mesh has at most
// one, and routes take at most 3 routers: under uniform traffic it saturates well above the mesh.
TEST(NocFlatfly, OutlastsTheMeshUnderUniformTraffic) {
  const NocRegistry reg = NocRegistry::with_builtin_models();
  NocBenchOptions o;
  o.noc = "mesh";
  o.nodes = 16;
  o.traffic = "uniform";
  o.packet_flits = 4;
  o.rate = 0.95;
  o.cycles = 2000;
  o.warmup = 500;
  const NocBenchResult mesh = run_noc_bench(reg, o);
  o.noc = "flatfly";
  const NocBenchResult ff = run_noc_bench(reg, o);
  EXPECT_TRUE(mesh.saturated);
  EXPECT_GT(ff.accepted, 1.1 * mesh.accepted);
  EXPECT_LT(ff.avg_hops, mesh.avg_hops);
}

TEST(NocFlatfly, AttentionRunsOnTheFlatfly) {
  const RunOutput ideal = run_default_scenario("ideal");
  const RunOutput r = run_default_scenario("flatfly");
  EXPECT_TRUE((r.sim.outputs[0].array() == ideal.sim.outputs[0].array()).all());
  // 3 x 2 routers, qsrc on (1,0): the CUBEs on (0,1) and (2,1) differ in both coordinates, 3 routers.
  EXPECT_DOUBLE_EQ(r.summary.noc.stats["multicast_completion"]["max_ns"].get<double>(), double(3 * 5 + 1279));
}

TEST(NocFlatfly, BooksimConfig) {
  const NocBenchOptions o = parse_booksim_config("topology = flatfly; k = 4; n = 2; c = 4; xr = 2; yr = 2; x = 4; y = 4;", "f.cfg");
  EXPECT_EQ(o.noc, "flatfly");
  EXPECT_EQ(o.nodes, 64);
  EXPECT_EQ(o.params["concentration"], 4);
  EXPECT_FALSE(o.params.contains("routing"));  // ran_min: dimension order
  EXPECT_EQ(parse_booksim_config("topology = flatfly; k = 4; x = 4; y = 4; routing_function = xyyx;", "f.cfg").params["routing"],
            "o1turn");
  EXPECT_THROW(parse_booksim_config("topology = flatfly; k = 4; routing_function = ugal;", "f.cfg"), InputError);
}
