// Zero-load latency of single packets equals each model's closed form:
//   T = H * (router_cycles + link_cycles) + (F - 1),  F = ceil(bytes / flit_bytes),
// H = routers traversed (mesh: |dx| + |dy| + 1, ring: shortest distance + 1, crossbar: 1).
// Multicast: tree copies arrive at each destination's own unicast time; source replication
// delays the k-th copy by k * F cycles (the source injects one flit per cycle).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <set>

#include "hw/noc/flit_noc.h"
#include "test_noc_support.h"

using namespace ahbm;
using namespace ahbm::test;

namespace {

struct Timing {
  int tr, tl, flit_bytes;
};

int64_t closed_form(int hops, uint64_t bytes, const Timing& t) {
  const int64_t flits = std::max<int64_t>(1, int64_t((bytes + uint64_t(t.flit_bytes) - 1) / uint64_t(t.flit_bytes)));
  return int64_t(hops) * (t.tr + t.tl) + flits - 1;
}

// Sends each (src, dst, bytes) alone (10000 cycles apart) and checks arrival time and hops.
void check_unicasts(const std::string& model, const Json& params, int nodes, const Timing& t,
                    const std::vector<std::pair<int, int>>& pairs, const std::function<int(int, int)>& hops) {
  const std::vector<uint64_t> sizes = {1, 64, 65, 1000, 4096};
  std::vector<ProbeSend> sends;
  for (const auto& [s, d] : pairs)
    for (uint64_t b : sizes) sends.push_back({int64_t(sends.size()) * 10000, s, {d}, b});
  const ProbeResult r = run_probe(model, params, node_names(nodes), sends);
  ASSERT_EQ(r.arrivals.size(), sends.size());
  for (const auto& a : r.arrivals) {
    const ProbeSend& s = sends[size_t(a.send)];
    const int h = hops(s.src, s.dsts[0]);
    EXPECT_EQ(a.endpoint, s.dsts[0]);
    EXPECT_EQ(a.hops, h) << model << " " << s.src << "->" << s.dsts[0];
    EXPECT_EQ(a.cycle - s.cycle, closed_form(h, s.bytes, t))
        << model << " " << params.dump() << " " << s.src << "->" << s.dsts[0] << " bytes " << s.bytes;
  }
}

}  // namespace

TEST(NocZeroLoad, MeshMatchesClosedForm) {
  const std::vector<std::pair<int, int>> pairs = {{0, 15}, {5, 6}, {3, 12}, {9, 9}, {14, 1}};
  check_unicasts("mesh", Json::object(), 16, {4, 1, 64}, pairs, mesh_hops(4));  // defaults: 4x4 from 16 endpoints
  check_unicasts("mesh", {{"router_cycles", 2}, {"link_cycles", 3}, {"flit_bytes", 32}, {"cols", 4}, {"rows", 4}}, 16,
                 {2, 3, 32}, pairs, mesh_hops(4));
  check_unicasts("mesh", {{"router_cycles", 1}, {"link_cycles", 1}, {"buffer_flits", 3}, {"vcs", 1}}, 16, {1, 1, 64},
                 pairs, mesh_hops(4));
}

TEST(NocZeroLoad, RingMatchesClosedForm) {
  // 0->3 clockwise, 0->5 counter-clockwise, 2->6 a tie, 7->0 and 0->7 across the datelines.
  const std::vector<std::pair<int, int>> pairs = {{0, 3}, {0, 5}, {2, 6}, {7, 0}, {0, 7}, {4, 4}};
  check_unicasts("ring", Json::object(), 8, {4, 1, 64}, pairs, ring_hops(8));
  check_unicasts("ring", {{"router_cycles", 3}, {"link_cycles", 2}, {"flit_bytes", 16}, {"vcs", 4}}, 8, {3, 2, 16},
                 pairs, ring_hops(8));
}

TEST(NocZeroLoad, CrossbarMatchesClosedForm) {
  const std::vector<std::pair<int, int>> pairs = {{0, 7}, {3, 2}, {5, 5}};
  check_unicasts("crossbar", Json::object(), 8, {2, 1, 64}, pairs, [](int, int) { return 1; });
  check_unicasts("crossbar", {{"router_cycles", 5}, {"link_cycles", 2}, {"flit_bytes", 8}}, 8, {5, 2, 8}, pairs,
                 [](int, int) { return 1; });
}

TEST(NocZeroLoad, IdealIsItsFixedLatency) {
  const ProbeResult r = run_probe("ideal", {{"latency_ns", 37}}, node_names(4), {{0, 0, {1, 2, 3}, 5000}, {100, 3, {0}, 1}});
  ASSERT_EQ(r.arrivals.size(), 4u);
  for (const auto& a : r.arrivals) EXPECT_EQ(a.cycle, (a.send == 0 ? 0 : 100) + 37);
}

namespace {

// One multicast alone; returns arrival cycle per destination, in the order of `dsts`.
std::vector<int64_t> multicast_arrivals(const std::string& model, Json params, int nodes, int src,
                                        const std::vector<int>& dsts, uint64_t bytes, StatsNode* stats = nullptr) {
  const ProbeResult r = run_probe(model, params, node_names(nodes), {{0, src, dsts, bytes}});
  EXPECT_EQ(r.arrivals.size(), dsts.size()) << model;
  std::vector<int64_t> at(dsts.size(), -1);
  for (const auto& a : r.arrivals) {
    const size_t i = size_t(std::find(dsts.begin(), dsts.end(), a.endpoint) - dsts.begin());
    EXPECT_LT(i, dsts.size());
    EXPECT_EQ(at[i], -1) << "two copies at " << a.endpoint;
    at[i] = a.cycle;
  }
  if (stats) *stats = r.stats;
  return at;
}

// Router-to-router links in the union of the XY routes from src to dsts (the tree).
size_t xy_tree_links(int cols, int src, const std::vector<int>& dsts, size_t* path_sum) {
  std::set<std::pair<int, int>> links;
  *path_sum = 0;
  for (int d : dsts) {
    int x = src % cols, y = src / cols;
    while (x != d % cols || y != d / cols) {
      const int from = y * cols + x;
      if (x != d % cols) x += d % cols > x ? 1 : -1;
      else y += d / cols > y ? 1 : -1;
      links.insert({from, y * cols + x});
      ++*path_sum;
    }
  }
  return links.size();
}

}  // namespace

TEST(NocZeroLoad, MulticastTreeAndSourceReplication) {
  const uint64_t bytes = 1024;  // 16 flits of 64 bytes
  const int64_t F = 16;
  const Timing t{4, 1, 64};
  const std::vector<int> dsts = {0, 7, 13, 15};
  const auto hops = mesh_hops(4);
  StatsNode tree_stats, source_stats;
  const auto tree = multicast_arrivals("mesh", {{"multicast", "tree"}}, 16, 5, dsts, bytes, &tree_stats);
  const auto source = multicast_arrivals("mesh", {{"multicast", "source"}}, 16, 5, dsts, bytes, &source_stats);
  for (size_t k = 0; k < dsts.size(); ++k) {
    EXPECT_EQ(tree[k], closed_form(hops(5, dsts[k]), bytes, t)) << "tree copy to " << dsts[k];
    EXPECT_EQ(source[k], int64_t(k) * F + closed_form(hops(5, dsts[k]), bytes, t)) << "source copy " << k;
  }
  // Flit counts: the tree carries the packet once per link of the XY tree, replication once per path hop.
  size_t path_sum = 0;
  const size_t tree_links = xy_tree_links(4, 5, dsts, &path_sum);
  EXPECT_EQ(tree_stats.get(FlitNocStats::link_flits), tree_links * F);
  EXPECT_EQ(source_stats.get(FlitNocStats::link_flits), path_sum * F);
  EXPECT_EQ(tree_stats.get(FlitNocStats::flits_injected), uint64_t(F));
  EXPECT_EQ(source_stats.get(FlitNocStats::flits_injected), dsts.size() * F);
  EXPECT_LT(tree_links, path_sum);

  // Ring: the tree splits into both directions at the source; crossbar: it splits in the switch.
  const auto ring_tree = multicast_arrivals("ring", Json::object(), 8, 1, {3, 5, 7, 0}, bytes);
  const std::vector<int> rd = {3, 5, 7, 0};
  for (size_t k = 0; k < rd.size(); ++k) EXPECT_EQ(ring_tree[k], closed_form(ring_hops(8)(1, rd[k]), bytes, t));
  const auto xbar_tree = multicast_arrivals("crossbar", Json::object(), 8, 2, {0, 1, 6}, bytes);
  const auto xbar_src = multicast_arrivals("crossbar", {{"multicast", "source"}}, 8, 2, {0, 1, 6}, bytes);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(xbar_tree[k], closed_form(1, bytes, {2, 1, 64}));
    EXPECT_EQ(xbar_src[k], int64_t(k) * F + closed_form(1, bytes, {2, 1, 64}));
  }
}
