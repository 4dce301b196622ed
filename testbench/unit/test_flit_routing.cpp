// The flit engine's routing functions (hw/noc/flit_routing.h) on a made-up router: what each asks
// of VC allocation (min_adapt: the productive channels by credits, then the escape VC), its
// per-packet draws and Valiant's change of phase.
#include <gtest/gtest.h>

#include <vector>

#include "hw/noc/flit_network.h"
#include "hw/noc/flit_routing.h"

using namespace ahbm;

namespace {

// From router 0 towards router 3, X first leaves on channel 10 and Y first on channel 11; from
// router 5 both orders leave on channel 12 (one productive dimension).
int next_channel(int router, int target, int order) {
  if (router == target) return -1;
  return router == 5 ? 12 : 10 + order;
}

struct FakeCredits final : ChannelCredits {
  std::vector<int> per_channel = std::vector<int>(16, 0);
  int credits(int channel, int) const override { return per_channel[size_t(channel)]; }
};

std::vector<int> channels(const std::vector<RouteOption>& opts) {
  std::vector<int> out;
  for (const RouteOption& o : opts) out.push_back(o.channel);
  return out;
}

}  // namespace

TEST(FlitRouting, MinAdaptPrefersTheProductiveChannelWithMostCredits) {
  MinAdaptRouting ma(4, next_channel);
  FakeCredits credits;
  RouteState s;
  std::vector<RouteOption> opts;
  ma.options(0, 3, 10, true, s, credits, opts);  // a tie: X first, then Y, then the escape VC
  EXPECT_EQ(channels(opts), (std::vector<int>{10, 11, 10}));
  EXPECT_EQ(opts[0].first, 1);
  EXPECT_EQ(opts[0].count, 3);
  EXPECT_EQ(opts[2].first, 0);
  EXPECT_EQ(opts[2].count, 1);
  credits.per_channel[11] = 1;
  opts.clear();
  ma.options(0, 3, 10, true, s, credits, opts);
  EXPECT_EQ(channels(opts), (std::vector<int>{11, 10, 10}));
  opts.clear();
  ma.options(5, 3, 12, true, s, credits, opts);  // one productive channel, listed once
  EXPECT_EQ(channels(opts), (std::vector<int>{12, 12}));
  // Once in the escape VC, a packet stays in escape VCs: unicast and multicast alike.
  ma.left(0, s);
  EXPECT_EQ(s.rclass, 1);
  opts.clear();
  ma.options(0, 3, 10, true, s, credits, opts);
  EXPECT_EQ(channels(opts), (std::vector<int>{10}));
  EXPECT_EQ(opts[0].count, 1);
  opts.clear();
  ma.options(0, -1, 11, false, s, credits, opts);
  ASSERT_EQ(opts.size(), 1u);
  EXPECT_EQ(opts[0].channel, 11);
  EXPECT_EQ(opts[0].count, 1);
  RouteState fresh;
  opts.clear();
  ma.options(0, -1, 11, false, fresh, credits, opts);
  EXPECT_EQ(opts[0].count, 4);  // a multicast not yet escaped may take any VC
}

TEST(FlitRouting, ClassesDrawsAndValiantPhases) {
  FakeCredits credits;
  TableRouting table(4, next_channel);
  RouteState s;
  EXPECT_FALSE(table.start(1, s));  // unicasts follow the destination table
  EXPECT_EQ(table.classes(), 1);
  // O1TURN: the packet's draw picks the order and the route class, the class half of the VCs.
  O1TurnRouting o1(4, next_channel, 9);
  for (uint64_t packet = 0; packet < 8; ++packet) {
    RouteState p;
    ASSERT_TRUE(o1.start(packet, p));
    EXPECT_EQ(p.rclass, FlitNetwork::route_pick(9, packet, 2));
    EXPECT_EQ(o1.next(0, 3, p), 10 + p.rclass);
    std::vector<RouteOption> opts;
    o1.options(0, 3, 10 + p.rclass, true, p, credits, opts);
    ASSERT_EQ(opts.size(), 1u);
    EXPECT_EQ(opts[0].first, 2 * p.rclass);
    EXPECT_EQ(opts[0].count, 2);
  }
  // Valiant: phase 0 towards the intermediate router, phase 1 from it on.
  ValiantRouting val(4, next_channel, 3, 8);
  RouteState v;
  ASSERT_TRUE(val.start(42, v));
  EXPECT_EQ(v.via, FlitNetwork::route_pick(3, 42, 8));
  v.via = 2;
  EXPECT_EQ(val.next(0, 3, v), 10);
  EXPECT_EQ(v.rclass, 0);
  EXPECT_EQ(val.next(2, 2, v), -1);  // at the intermediate router, which is also the destination
  EXPECT_EQ(v.rclass, 1);
}
