#include "hw/noc/flit_routing.h"

#include <stdexcept>
#include <utility>

#include "hw/noc/flit_network.h"

namespace ahbm {

int FlitRouting::next(int r, int to, RouteState&) const { return next_channel_(r, to, 0); }

void FlitRouting::options(int, int, int channel, bool, const RouteState& s, const ChannelCredits&,
                          std::vector<RouteOption>& out) const {
  const int per_class = vcs_ / classes();
  out.push_back({channel, s.rclass * per_class, per_class});
}

bool O1TurnRouting::start(uint64_t packet, RouteState& s) const {
  s.rclass = FlitNetwork::route_pick(seed_, packet, 2);
  return true;
}

int O1TurnRouting::next(int r, int to, RouteState& s) const { return next_channel_(r, to, s.rclass); }

bool ValiantRouting::start(uint64_t packet, RouteState& s) const {
  s.via = FlitNetwork::route_pick(seed_, packet, routers_);
  return true;
}

int ValiantRouting::next(int r, int to, RouteState& s) const {
  if (s.rclass == 0 && r == s.via) s.rclass = 1;  // phase 1 from here
  return next_channel_(r, s.rclass == 0 ? s.via : to, 0);
}

int MinAdaptRouting::room(int channel, const ChannelCredits& credits) const {
  int sum = 0;
  for (int v = 1; v < vcs_; ++v) sum += credits.credits(channel, v);
  return sum;
}

void MinAdaptRouting::options(int r, int to, int channel, bool routed, const RouteState& s,
                              const ChannelCredits& credits, std::vector<RouteOption>& out) const {
  if (!routed) {  // a multicast: any VC, the escape VC only once in it
    out.push_back({channel, 0, s.rclass ? 1 : vcs_});
    return;
  }
  const int x = next_channel_(r, to, 0);
  if (s.rclass == 0) {  // not in the escape VCs: the productive channels' adaptive VCs, most room first
    int first = x, second = next_channel_(r, to, 1);
    if (second == first) second = -1;
    if (first < 0 || (second >= 0 && room(second, credits) > room(first, credits))) std::swap(first, second);
    for (int ch : {first, second})
      if (ch >= 0) out.push_back({ch, 1, vcs_ - 1});
  }
  out.push_back({x, 0, 1});  // the escape VC on the X-first channel
}

void MinAdaptRouting::left(int vc, RouteState& s) const {
  if (vc == 0) s.rclass = 1;  // once in the escape VC, always in the escape VCs
}

bool TorusDorRouting::start(uint64_t packet, RouteState& s) const {
  s.via = FlitNetwork::route_pick(seed_, packet, 4);  // bit 0: the tie in X, bit 1: in Y
  return true;
}

int TorusDorRouting::next(int r, int to, RouteState& s) const {
  const int x = r % cols_, y = r / cols_, tx = to % cols_, ty = to / cols_;
  int d, cur, dst, k;
  if (x != tx) {
    d = 0, cur = x, dst = tx, k = cols_;
  } else if (y != ty) {
    d = 1, cur = y, dst = ty, k = rows_;
  } else {
    return -1;  // eject here
  }
  if (s.dim != d) {  // entering dimension d: its direction and VC class for the rest of it
    const int ahead = (dst - cur + k) % k, dist2 = k - 2 * ahead;
    const bool positive = dist2 > 0 || (dist2 == 0 && ((s.via >> d) & 1) != 0);
    s.dim = d;
    s.dir = positive ? 0 : 1;
    s.part = positive ? (cur > dst ? 1 : 0) : (dst < cur ? 1 : 0);
  }
  return ch_[size_t(r)][size_t(2 * d + s.dir)];
}

int TorusDorRouting::table_class(int r, int channel, const std::vector<int>& to) const {
  int dir = -1;
  for (int i = 0; i < 4; ++i)
    if (ch_[size_t(r)][size_t(i)] == channel) dir = i;
  if (dir < 0) return -1;
  const int d = dir / 2;
  const int cur = d == 0 ? r % cols_ : r / cols_;
  bool wraps = false;
  for (int t : to) {
    const int dst = d == 0 ? t % cols_ : t / cols_;
    wraps = wraps || (dir % 2 == 0 ? dst < cur : dst > cur);
  }
  return dir % 2 == 0 ? (wraps ? 1 : 0) : (wraps ? 0 : 1);
}

std::unique_ptr<FlitRouting> make_routing(const FlitTopology& topo, const FlitParams& p) {
  switch (topo.routing) {
    case FlitTopology::Routing::kTable:
      return std::make_unique<TableRouting>(p.vcs, topo.next_channel);
    case FlitTopology::Routing::kO1Turn:
      return std::make_unique<O1TurnRouting>(p.vcs, topo.next_channel, topo.route_seed);
    case FlitTopology::Routing::kValiant:
      return std::make_unique<ValiantRouting>(p.vcs, topo.next_channel, topo.route_seed, topo.routers());
    case FlitTopology::Routing::kMinAdapt:
      return std::make_unique<MinAdaptRouting>(p.vcs, topo.next_channel);
    case FlitTopology::Routing::kTorusDor:
      return std::make_unique<TorusDorRouting>(p.vcs, topo.next_channel, topo.route_seed, topo.cols, topo.rows,
                                               topo.grid_channels);
  }
  throw std::invalid_argument("make_routing: unknown routing");
}

}  // namespace ahbm
