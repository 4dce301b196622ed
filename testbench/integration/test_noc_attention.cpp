// The default scenario over each NoC model: O is bit-identical (the NoC changes timing, never
// values), the first Q multicast completes at each model's zero-load closed form, the latency
// trace shows every multicast as injection / network / per-CUBE delivery spans, and tree
// multicast puts fewer flits on the channels than source replication, both delivering exactly
// one copy of every Q tile to each CUBE.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "test_noc_support.h"

using namespace ahbm;
using namespace ahbm::test;

namespace {

struct NocSpans {
  std::map<std::string, std::vector<const Span*>> by_component;  // noc_deliver spans per CUBE
  size_t inject = 0, network = 0;
};

NocSpans noc_spans(const SpanRecorder& spans) {
  NocSpans out;
  for (const Span& s : spans.spans()) {
    const std::string& comp = spans.name(s.component);
    const std::string& act = spans.name(s.activity);
    if (act == "noc_deliver" && comp.rfind("noc.g0.cube", 0) == 0) out.by_component[comp].push_back(&s);
    if (act == "noc_inject" && comp == "noc.qsrc") ++out.inject;
    if (act == "noc_network" && comp == "noc") ++out.network;
  }
  return out;
}

// Completion time (ns) of the first Q multicast: its last per-CUBE delivery after its creation.
double first_multicast_ns(const NocSpans& ns) {
  double created = INFINITY, last = 0;
  for (const auto& [comp, spans] : ns.by_component)
    for (const Span* s : spans) created = std::min(created, to_ns(s->start));
  for (const auto& [comp, spans] : ns.by_component)
    for (const Span* s : spans)
      if (std::abs(to_ns(s->start) - created) < 1e-6) last = std::max(last, to_ns(s->end));
  return last - created;
}

}  // namespace

TEST(NocAttention, SameOutputsDifferentMulticastTimesAcrossModels) {
  const RunOutput ideal = run_default_scenario("ideal");
  const int tiles = int(ideal.summary.q_tiles);
  const int64_t F = int64_t(ideal.summary.q_tile_rows) * 128 * 4 / 64;  // flits of one Q tile
  // Zero-load closed forms (1 GHz: cycles = ns) for the default placement: host, qsrc, then
  // g0.cube0..3 on nodes 0..5. Mesh 3x2: qsrc at (1,0), farthest CUBEs (0,1), (2,1): 3 routers.
  // Ring of 6: qsrc on node 1, farthest CUBE node 4: 3 links, 4 routers.
  const std::map<std::string, double> expected = {
      {"ideal", 10.0}, {"crossbar", double(1 * (2 + 1) + F - 1)}, {"mesh", double(3 * (4 + 1) + F - 1)},
      {"ring", double(4 * (4 + 1) + F - 1)}};
  std::vector<double> times;
  for (const auto& [model, want] : expected) {
    const RunOutput r = run_default_scenario(model);
    ASSERT_TRUE(r.summary.numerics.pass) << model;
    const MatrixRM& o = r.sim.outputs[0];
    const MatrixRM& o_ideal = ideal.sim.outputs[0];
    ASSERT_EQ(o.rows(), o_ideal.rows());
    EXPECT_TRUE((o.array() == o_ideal.array()).all()) << model << ": O differs from the ideal NoC's";
    EXPECT_EQ(r.summary.noc.model, model);
    const NocSpans ns = noc_spans(*r.sim.spans);
    ASSERT_EQ(ns.by_component.size(), 4u) << model;
    for (const auto& [comp, spans] : ns.by_component) EXPECT_EQ(spans.size(), size_t(tiles)) << model << " " << comp;
    const double t = first_multicast_ns(ns);
    EXPECT_NEAR(t, want, 1e-6) << model;
    EXPECT_NEAR(r.summary.noc.stats["multicast_completion"]["max_ns"].get<double>(), t, 1e-6) << model;
    if (model != "ideal") {
      EXPECT_EQ(ns.inject, size_t(tiles)) << model;
      EXPECT_EQ(ns.network, size_t(tiles) + size_t(tiles)) << model;  // each Q multicast and each O tile
      EXPECT_GT(r.summary.noc.stats["link_cycles_busy"].get<uint64_t>(), 0u);
    }
    times.push_back(t);
  }
  std::sort(times.begin(), times.end());
  EXPECT_TRUE(std::adjacent_find(times.begin(), times.end()) == times.end()) << "multicast times must differ";
}

TEST(NocAttention, TreeMulticastUsesFewerChannelFlitsThanSourceReplication) {
  for (const std::string model : {"mesh", "ring", "crossbar", "torus", "cmesh", "flatfly"}) {
    const RunOutput tree = run_default_scenario(model, {{"multicast", "tree"}}, false);
    const RunOutput source = run_default_scenario(model, {{"multicast", "source"}}, false);
    const int tiles = int(tree.summary.q_tiles);
    for (const RunOutput* r : {&tree, &source}) {
      const NocSpans ns = noc_spans(*r->sim.spans);
      ASSERT_EQ(ns.by_component.size(), 4u);
      for (const auto& [comp, spans] : ns.by_component) EXPECT_EQ(spans.size(), size_t(tiles)) << model << " " << comp;
      EXPECT_EQ(r->summary.noc.stats["packets_in_flight"].get<uint64_t>(), 0u);
    }
    const uint64_t t = tree.summary.noc.stats["multicast_channel_flits"].get<uint64_t>();
    const uint64_t s = source.summary.noc.stats["multicast_channel_flits"].get<uint64_t>();
    EXPECT_LT(t, s) << model;
    // Every copy is ejected once either way; the savings are on injection and router links.
    const uint64_t F = uint64_t(tree.summary.q_tile_rows) * 128 * 4 / 64;
    EXPECT_EQ(t % F, 0u);
    EXPECT_GE(s - t, 3 * F * uint64_t(tiles)) << model << ": source replication injects 3 extra copies per tile";
  }
}
