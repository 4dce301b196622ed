#include "hw/system/topologies.h"

#include <functional>
#include <map>
#include <stdexcept>
#include <utility>

namespace ahbm {

const ParamTable<SysLinkParams>& sysnet_link_table() {
  static const ParamTable<SysLinkParams> t(AHBM_PARAM_FIELDS(SysLinkParams, AHBM_PARAMS_SYSNET_LINK));
  return t;
}
const ParamTable<SysSwitchParams>& sysnet_switch_table() {
  static const ParamTable<SysSwitchParams> t(AHBM_PARAM_FIELDS(SysSwitchParams, AHBM_PARAMS_SYSNET_SWITCH));
  return t;
}
const ParamTable<SysTorusParams>& sysnet_torus_table() {
  static const ParamTable<SysTorusParams> t(AHBM_PARAM_FIELDS(SysTorusParams, AHBM_PARAMS_SYSNET_TORUS));
  return t;
}
const ParamTable<SysFatTreeParams>& sysnet_fat_tree_table() {
  static const ParamTable<SysFatTreeParams> t(AHBM_PARAM_FIELDS(SysFatTreeParams, AHBM_PARAMS_SYSNET_FAT_TREE));
  return t;
}

namespace {

// A topology under construction: links by their ends, then the table from a next-node rule.
class Builder {
 public:
  Builder(int chips, std::string description) {
    t_.chips = chips;
    t_.description = std::move(description);
  }
  int add_switch(std::string name) {
    t_.switch_names.push_back(std::move(name));
    return t_.chips + int(t_.switch_names.size()) - 1;
  }
  void link(int from, int to, double gbps, double latency_ns) {
    if (by_ends_.count({from, to})) return;  // one link per ordered pair (a ring of 2)
    by_ends_[{from, to}] = int(t_.links.size());
    t_.links.push_back({from, to, gbps, latency_ns, t_.node_name(from) + "->" + t_.node_name(to)});
  }
  void both_ways(int a, int b, double gbps, double latency_ns) {
    link(a, b, gbps, latency_ns);
    link(b, a, gbps, latency_ns);
  }
  // `next(node, chip)`: the node after `node` on the way to `chip` (node != chip).
  SystemTopology finish(const std::function<int(int node, int chip)>& next) {
    t_.route.assign(size_t(t_.nodes()), std::vector<int>(size_t(t_.chips), -1));
    for (int n = 0; n < t_.nodes(); ++n)
      for (int c = 0; c < t_.chips; ++c)
        if (n != c) t_.route[size_t(n)][size_t(c)] = by_ends_.at({n, next(n, c)});
    return std::move(t_);
  }

 private:
  SystemTopology t_;
  std::map<std::pair<int, int>, int> by_ends_;
};

// One step along a ring of `k` positions from `a` toward `b`: the shorter way, ties increasing.
int ring_step(int a, int b, int k) {
  const int up = ((b - a) % k + k) % k;
  return up <= k - up ? (a + 1) % k : (a - 1 + k) % k;
}

}  // namespace

SystemTopology ring_topology(int chips, const SysLinkParams& p) {
  Builder b(chips, "ring of " + std::to_string(chips) + " chips");
  for (int i = 0; i < chips && chips > 1; ++i) b.both_ways(i, (i + 1) % chips, p.link_gbps, p.link_latency_ns);
  return b.finish([chips](int n, int c) { return ring_step(n, c, chips); });
}

SystemTopology torus_topology(int x, int y, const SysLinkParams& p) {
  Builder b(x * y, std::to_string(x) + " x " + std::to_string(y) + " torus");
  const auto at = [x](int cx, int cy) { return cy * x + cx; };
  for (int cy = 0; cy < y; ++cy)
    for (int cx = 0; cx < x; ++cx) {
      if (x > 1) b.both_ways(at(cx, cy), at((cx + 1) % x, cy), p.link_gbps, p.link_latency_ns);
      if (y > 1) b.both_ways(at(cx, cy), at(cx, (cy + 1) % y), p.link_gbps, p.link_latency_ns);
    }
  return b.finish([x, y, at](int n, int c) {
    const int nx = n % x, ny = n / x, cx = c % x, cy = c / x;
    if (nx != cx) return at(ring_step(nx, cx, x), ny);
    return at(nx, ring_step(ny, cy, y));
  });
}

SystemTopology fully_connected_topology(int chips, const SysLinkParams& p) {
  Builder b(chips, "fully connected, " + std::to_string(chips) + " chips");
  for (int i = 0; i < chips; ++i)
    for (int j = 0; j < chips; ++j)
      if (i != j) b.link(i, j, p.link_gbps, p.link_latency_ns);
  return b.finish([](int, int c) { return c; });
}

SystemTopology switch_topology(int chips, const SysLinkParams& p) {
  Builder b(chips, "one switch, " + std::to_string(chips) + " chips");
  const int sw = b.add_switch("sw0");
  for (int i = 0; i < chips; ++i) b.both_ways(i, sw, p.link_gbps, p.link_latency_ns);
  return b.finish([sw](int n, int c) { return n == sw ? c : sw; });
}

SystemTopology fat_tree_topology(int chips, int radix, double uplink_gbps, const SysLinkParams& p) {
  if (radix < 1 || chips % radix != 0) throw std::logic_error("fat tree: radix does not divide the chips");
  const int leaves = chips / radix;
  Builder b(chips, std::to_string(leaves) + " leaf switches of " + std::to_string(radix) + " chips and a spine");
  std::vector<int> leaf(static_cast<size_t>(leaves));
  for (int l = 0; l < leaves; ++l) leaf[size_t(l)] = b.add_switch("leaf" + std::to_string(l));
  const int spine = leaves > 1 ? b.add_switch("spine") : -1;
  for (int i = 0; i < chips; ++i) b.both_ways(i, leaf[size_t(i / radix)], p.link_gbps, p.link_latency_ns);
  const double up = uplink_gbps > 0 ? uplink_gbps : p.link_gbps * radix;
  for (int l = 0; l < leaves && spine >= 0; ++l) b.both_ways(leaf[size_t(l)], spine, up, p.link_latency_ns);
  return b.finish([&](int n, int c) {
    const int home = leaf[size_t(c / radix)];
    if (n < chips) return leaf[size_t(n / radix)];  // a chip: its leaf
    if (n == spine) return home;
    return n == home ? c : spine;  // a leaf: down to the chip, or up
  });
}

}  // namespace ahbm
