// Credit backpressure: with 1-flit buffers (and heavy mixed unicast/multicast traffic) every
// packet still reaches every destination exactly once: no loss, no duplication, no deadlock
// (XY routing on the mesh, dateline VCs on the ring).
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "test_noc_support.h"

using namespace ahbm;
using namespace ahbm::test;

namespace {

std::vector<ProbeSend> heavy_traffic(int nodes, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<ProbeSend> sends;
  for (int i = 0; i < 1500; ++i) {
    ProbeSend s;
    s.cycle = i / 3;  // ~3 packets per cycle into 16 nodes: far beyond saturation
    s.src = int(rng() % unsigned(nodes));
    const int copies = (i % 5 == 0) ? 2 + int(rng() % 4) : 1;
    while (int(s.dsts.size()) < copies) {
      const int d = int(rng() % unsigned(nodes));
      if (std::find(s.dsts.begin(), s.dsts.end(), d) == s.dsts.end()) s.dsts.push_back(d);
    }
    s.bytes = 1 + rng() % 512;  // 1 to 8 flits
    sends.push_back(s);
  }
  return sends;
}

void expect_all_delivered_once(const std::string& model, const Json& params, int nodes) {
  const std::vector<ProbeSend> sends = heavy_traffic(nodes, 7);
  const ProbeResult r = run_probe(model, params, node_names(nodes), sends);
  size_t expected = 0;
  for (const auto& s : sends) expected += s.dsts.size();
  ASSERT_EQ(r.arrivals.size(), expected) << model << " " << params.dump() << ": packets lost or stuck";
  std::map<std::pair<int, int>, int> seen;
  int64_t worst_wait = 0;
  for (const auto& a : r.arrivals) {
    const ProbeSend& s = sends[size_t(a.send)];
    EXPECT_NE(std::find(s.dsts.begin(), s.dsts.end(), a.endpoint), s.dsts.end());
    EXPECT_EQ(++seen[std::make_pair(a.send, a.endpoint)], 1);
    worst_wait = std::max(worst_wait, a.cycle - s.cycle);
  }
  EXPECT_EQ(r.stats.get(NocStats::packets_in_flight), 0u);
  // The traffic really was held back by credits (zero-load latency here is below 100 cycles).
  EXPECT_GT(worst_wait, 1000) << model;
}

}  // namespace

TEST(NocBackpressure, OneFlitBuffersMeshDeliverEverything) {
  expect_all_delivered_once("mesh", {{"buffer_flits", 1}, {"vcs", 1}}, 16);
  expect_all_delivered_once("mesh", {{"buffer_flits", 1}, {"vcs", 2}, {"multicast", "source"}}, 16);
}

TEST(NocBackpressure, OneFlitBuffersRingAndCrossbarDeliverEverything) {
  expect_all_delivered_once("ring", {{"buffer_flits", 1}}, 16);
  expect_all_delivered_once("crossbar", {{"buffer_flits", 1}, {"vcs", 1}}, 16);
}
