#pragma once
// The routing functions of the flit-level engine (FlitNetwork; docs/noc.md, "Routing"), one class
// per FlitTopology::Routing behind one interface, chosen once by make_routing. A routing function
// routes the unicast packets it takes on at injection (the others, and every multicast, follow the
// destination table: the tree multicast needs) and says which output VCs a head may take. Its
// per-packet state (RouteState) travels with the packet; it keeps none of its own.
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace ahbm {

struct FlitParams;
struct FlitTopology;

// What a routing function records in a packet.
struct RouteState {
  int rclass = 0;  // route class: O1TURN's order (1 = Y first), Valiant's phase, min_adapt's 1 = in the escape VCs
  int via = -1;    // Valiant: the intermediate router; TorusDorRouting: the tie draws, bit d for dimension d
  int dim = -1;    // TorusDorRouting: the dimension the packet travels in (-1: none yet), its direction
  int dir = 0;     // (0 = positive, 1 = negative) and its VC class there (-1: the network's dateline rule)
  int part = -1;
};

// One way a head may leave a router: a channel and a range of its VCs, before the dateline
// classes (which the network applies: they split each range further on rings and tori).
struct RouteOption {
  int channel, first, count;
};

// What an adaptive routing function reads of the router it routes in.
class ChannelCredits {
 public:
  virtual int credits(int channel, int vc) const = 0;

 protected:
  ~ChannelCredits() = default;
};

// The channel a dimension-order route takes from `router` towards router `target` (-1 when there),
// `order` 0 = X first, 1 = Y first (FlitTopology::next_channel).
using NextChannel = std::function<int(int router, int target, int order)>;

class FlitRouting {
 public:
  FlitRouting(int vcs, NextChannel next_channel) : vcs_(vcs), next_channel_(std::move(next_channel)) {}
  virtual ~FlitRouting() = default;

  // The route classes the VCs are split into (O1TURN's orders, Valiant's phases), each a network
  // of its own.
  virtual int classes() const { return 1; }
  // A unicast packet enters the network: true when this function routes it (its draws in `s`),
  // false when it follows the destination table, as every multicast does.
  virtual bool start(uint64_t /*packet*/, RouteState& /*s*/) const { return true; }
  // Route computation at router r for a packet this function routes, destined to router `to`: the
  // channel it leaves on, or -1 to eject. A packet whose route class changes here enters a new
  // network (Valiant's second phase): its dateline classes start afresh.
  virtual int next(int r, int to, RouteState& s) const;
  // VC allocation for a head routed to `channel` at router r (`routed`: by this function, towards
  // router `to`; else by the table): the channels and VCs it may take, best first. By default the
  // channel routed to and the VCs of the packet's route class.
  virtual void options(int r, int to, int channel, bool routed, const RouteState& s, const ChannelCredits& credits,
                       std::vector<RouteOption>& out) const;
  // A head left on VC `vc`: the packet's state from the next router on.
  virtual void left(int /*vc*/, RouteState& /*s*/) const {}
  // The dateline class (ring, torus) of the channel next() chose, or -1 for the network's rule
  // (class 1 after a dateline channel, back to 0 in a new dimension).
  virtual int vc_class(const RouteState& /*s*/) const { return -1; }
  // The dateline class of a table-routed worm (a multicast branch) entering a new dimension on
  // `channel` at router r towards routers `to`, or -1 for the network's rule.
  virtual int table_class(int /*r*/, int /*channel*/, const std::vector<int>& /*to*/) const { return -1; }

 protected:
  int vcs_;
  NextChannel next_channel_;
};

// Dimension order by the destination table, for every packet.
class TableRouting final : public FlitRouting {
 public:
  using FlitRouting::FlitRouting;
  bool start(uint64_t, RouteState&) const override { return false; }
};

// O1TURN (Seo et al., ISCA 2005; BookSim's xy_yx): each packet draws X-first or Y-first and travels
// in route class 0 or 1 accordingly; each class alone is dimension-ordered, hence deadlock-free.
class O1TurnRouting final : public FlitRouting {
 public:
  O1TurnRouting(int vcs, NextChannel next_channel, uint64_t seed)
      : FlitRouting(vcs, std::move(next_channel)), seed_(seed) {}
  int classes() const override { return 2; }
  bool start(uint64_t packet, RouteState& s) const override;
  int next(int r, int to, RouteState& s) const override;

 private:
  uint64_t seed_;
};

// Valiant (Valiant and Brebner 1981): each packet draws an intermediate router, goes there X-first
// in route class 0 (phase 0), then to its destination X-first in class 1 (phase 1).
class ValiantRouting final : public FlitRouting {
 public:
  ValiantRouting(int vcs, NextChannel next_channel, uint64_t seed, int routers)
      : FlitRouting(vcs, std::move(next_channel)), seed_(seed), routers_(routers) {}
  int classes() const override { return 2; }
  bool start(uint64_t packet, RouteState& s) const override;
  int next(int r, int to, RouteState& s) const override;

 private:
  uint64_t seed_;
  int routers_;
};

// min_adapt (Duato 1993; BookSim's min_adapt): VC 0 is the escape channel, routed X-first; VCs 1..
// are adaptive, on any productive channel, the one with the most credits over its adaptive VCs
// first (X first on ties). A head that finds no adaptive VC free takes the escape VC if it is, and
// stays in escape VCs from then on. Multicasts (table-routed) take any VC, the escape VC only once
// in it: a packet in the escape VC waiting for an adaptive one would make the escape network
// depend on adaptive packets, whose routes are not dimension-ordered (a cycle the burst tests
// found on the cmesh).
class MinAdaptRouting final : public FlitRouting {
 public:
  using FlitRouting::FlitRouting;
  void options(int r, int to, int channel, bool routed, const RouteState& s, const ChannelCredits& credits,
               std::vector<RouteOption>& out) const override;
  void left(int vc, RouteState& s) const override;

 private:
  int room(int channel, const ChannelCredits& credits) const;  // credits over the adaptive VCs
};

// BookSim2's dim_order_torus (routefunc.cpp, dor_next_torus without balancing), for tori and rings:
// dimension order, the shorter way round each ring; a packet entering a dimension fixes its
// direction there and its VC class for the whole of that dimension: class 1 when its path wraps
// around going the positive way, or does not wrap going the negative way, else class 0 (each
// class's channel dependencies stay acyclic because routes are minimal). A tie of distances (k
// even, k/2 apart) goes either way: BookSim draws from its global generator, here one bit per
// packet and dimension drawn from route_seed (route_pick), so runs repeat.
class TorusDorRouting final : public FlitRouting {
 public:
  TorusDorRouting(int vcs, NextChannel next_channel, uint64_t seed, int cols, int rows,
                  std::vector<std::array<int, 4>> grid_channels)
      : FlitRouting(vcs, std::move(next_channel)), seed_(seed), cols_(cols), rows_(rows), ch_(std::move(grid_channels)) {}
  bool start(uint64_t packet, RouteState& s) const override;
  int next(int r, int to, RouteState& s) const override;
  int vc_class(const RouteState& s) const override { return s.part; }
  // A multicast branch takes the class BookSim's rule gives the path to its farthest destination
  // in the dimension (the one a branch covers): class 1 when that path wraps going the positive
  // way or stays unwrapped going the negative way. Its paths then keep the unicasts' property
  // (no class uses every channel of a ring), so the two share the classes without a cycle.
  int table_class(int r, int channel, const std::vector<int>& to) const override;

 private:
  uint64_t seed_;
  int cols_, rows_;
  std::vector<std::array<int, 4>> ch_;  // [router]: channel +x, -x, +y, -y (-1: none)
};

// The routing function the topology names (FlitTopology::routing, route_seed, next_channel).
std::unique_ptr<FlitRouting> make_routing(const FlitTopology& topo, const FlitParams& p);

}  // namespace ahbm
