#include "hw/link/reduction_network.h"

#include <algorithm>
#include <map>

#include "hw/common/base/component.h"
#include "hw/common/model/resource_times.h"
#include "hw/common/model/engines.h"

namespace ahbm {

std::vector<int> reduction_parents(ReductionTopology topology, int cubes) {
  std::vector<int> p(size_t(cubes), -1);
  for (int c = 1; c < cubes; ++c) {
    switch (topology) {
      case ReductionTopology::chain: p[size_t(c)] = c - 1; break;
      case ReductionTopology::ring: p[size_t(c)] = (c <= cubes / 2) ? c - 1 : (c + 1) % cubes; break;
      case ReductionTopology::tree: p[size_t(c)] = c - (c & -c); break;
    }
  }
  return p;
}

ReductionNetwork::ReductionNetwork(sc_core::sc_module_name name, SimShared& sh, int group, int cubes, Noc& noc,
                                   std::vector<int> cube_endpoints, int host_endpoint,
                                   const std::vector<std::string>& node_components)
    : sc_core::sc_module(name),
      sh_(sh),
      noc_(noc),
      cube_endpoints_(std::move(cube_endpoints)),
      host_endpoint_(host_endpoint),
      parents_(reduction_parents(sh.cfg.group.link.topology, cubes)),
      pending_(size_t(cubes)),
      uplink_(size_t(cubes), ServerPool(1)),
      own_units_(size_t(cubes), ServerPool(1)),
      link_busy_(size_t(cubes), sc_core::SC_ZERO_TIME),
      link_bytes_(size_t(cubes), 0) {
  for (auto& u : own_units_) node_units_.push_back(&u);
  const std::string group_path = component_path(*get_parent_object());
  for (int c = 0; c < cubes; ++c) {
    inbox_.push_back(std::make_unique<TimedQueue<Arrival>>());
    inputs_.push_back(std::make_unique<NodeInput>(*this, c));
    node_in.push_back(std::make_unique<sc_core::sc_export<StateSink>>(("cube" + std::to_string(c) + "_in").c_str()));
    node_in.back()->bind(*inputs_.back());
    const std::string link_item =
        "cube" + std::to_string(c) + "_to_cube" + std::to_string(parents_[size_t(c)] < 0 ? 0 : parents_[size_t(c)]);
    const std::string link = group_path + ".link." + link_item;
    sh.spans.declare(link, {ComponentInfo::Kind::link, group, c, -1, link_item});
    link_component_.push_back(sh.spans.intern(link));
    sig_link_busy_.push_back(parents_[size_t(c)] >= 0 ? sh.trace.add_signal(link + ".busy", 1) : -1);
    node_component_.push_back(sh.spans.intern(node_components.at(size_t(c))));
  }
  sh.waits.add(component_path(*this), [this] { return describe_wait(); });
  for (int c = 0; c < cubes; ++c) sc_core::sc_spawn(sc_bind(&ReductionNetwork::node_loop, this, c));
}

void ReductionNetwork::begin_run() {
  for (auto& q : inbox_) q->clear();
  for (auto& p : pending_) p.clear();
  for (auto& u : uplink_) u.reset();
  for (auto& u : own_units_) u.reset();
  std::fill(link_busy_.begin(), link_busy_.end(), sc_core::SC_ZERO_TIME);
  std::fill(link_bytes_.begin(), link_bytes_.end(), uint64_t(0));
  vector_ops_ = 0;
}

ReductionNetwork::TileTree ReductionNetwork::tree_of(const TileRef& t) const {
  const QTile& q = sh_.jobs[size_t(t.job)].tiles[size_t(t.index)];
  TileTree tree;
  tree.members = tile_cubes(q, int(parents_.size()), sh_.cfg.cube.pes);
  tree.parent.assign(parents_.size(), -1);
  tree.children.assign(parents_.size(), {});
  // The configured topology over the participating CUBEs, rooted at the lowest one.
  const std::vector<int> shape = reduction_parents(sh_.cfg.group.link.topology, int(tree.members.size()));
  for (size_t i = 0; i < tree.members.size(); ++i)
    if (shape[i] >= 0) {
      const int c = tree.members[i], up = tree.members[size_t(shape[i])];
      tree.parent[size_t(c)] = up;
      tree.children[size_t(up)].push_back(c);
    }
  for (auto& ch : tree.children) std::sort(ch.begin(), ch.end());
  return tree;
}

sc_core::sc_time ReductionNetwork::run_on_units(int cube, const sc_core::sc_time& duration) {
  auto [start, end] = node_units_[size_t(cube)]->reserve(duration);
  sc_core::wait(end - sc_core::sc_time_stamp());
  return start;
}

void ReductionNetwork::node_loop(int cube) {
  auto& pending = pending_[size_t(cube)];  // a member, so the stall watchdog can report it
  for (;;) {
    Arrival a = inbox_[size_t(cube)]->pop();
    const TileRef& t = sh_.tiles[size_t(a.tile)];
    const int d = sh_.jobs[size_t(t.job)].head_dim;
    const TileTree tree = tree_of(t);
    const size_t expected = 1 + tree.children[size_t(cube)].size();
    auto& got = pending[a.tile];
    got[a.from] = std::move(a.state);
    if (got.size() > 1) {  // each state after the first costs one merge
      const sc_core::sc_time start = run_on_units(
          cube, sh_.cycles(merge_cycles(sh_.cfg.cube.reducer.lanes, sh_.cfg.pe.vector.ops_per_merge, uint64_t(t.rows()),
                                        uint64_t(d))));
      sh_.span(start, sc_core::sc_time_stamp(), node_component_[size_t(cube)], "xcube_merge", t, t.rows(),
               int64_t(AttnState::wire_bytes(t.rows(), d)));
      vector_ops_ += merge_ops(sh_.cfg.pe.vector.ops_per_merge, uint64_t(t.rows()), uint64_t(d));
    }
    if (got.size() < expected) continue;
    StatePtr merged = got[cube];
    if (merged) {
      merged = std::make_shared<AttnState>(*merged);
      for (int child : tree.children[size_t(cube)]) merge_into(*merged, *got[child]);
      sh_.guard.check(*merged, node_component_[size_t(cube)], a.tile);
    }
    pending.erase(a.tile);
    const int parent = tree.parent[size_t(cube)];
    if (parent >= 0) {
      const uint64_t bytes = AttnState::wire_bytes(t.rows(), d);
      auto [start, end] = uplink_[size_t(cube)].reserve(link_transfer<sc_time>(sh_.cfg.group.link, bytes));
      sc_core::wait(start - sc_core::sc_time_stamp());
      sh_.trace.set(sig_link_busy_[size_t(cube)], 1);
      sc_core::wait(end - start);
      sh_.trace.set(sig_link_busy_[size_t(cube)], 0);
      link_busy_[size_t(cube)] += end - start;
      link_bytes_[size_t(cube)] += bytes;
      const sc_core::sc_time latency = link_latency<sc_time>(sh_.cfg.group.link);
      sh_.span(start, end + latency, link_component_[size_t(cube)], "link_xfer", t, t.rows(), int64_t(bytes));
      inbox_[size_t(parent)]->push({cube, a.tile, std::move(merged)}, latency);
      continue;
    }
    // Root: normalise and send O to the host.
    const sc_core::sc_time start =
        run_on_units(cube, sh_.cycles(normalise_cycles(sh_.cfg.cube.reducer.lanes, uint64_t(t.rows()), uint64_t(d))));
    sh_.span(start, sc_core::sc_time_stamp(), node_component_[size_t(cube)], "normalise", t, t.rows(), 0);
    vector_ops_ += normalise_ops(uint64_t(t.rows()), uint64_t(d));
    NocPacket p;
    p.src = cube_endpoints_[size_t(cube)];
    p.dsts = {host_endpoint_};
    p.bytes = o_tile_bytes(uint64_t(t.rows()), uint64_t(d));
    p.tag = a.tile;
    if (merged) p.payload = std::make_shared<const MatrixRM>(normalise(*merged));
    noc_.send(std::move(p));
  }
}

std::string ReductionNetwork::describe_wait() const {
  std::string out;
  for (size_t c = 0; c < pending_.size(); ++c) {
    std::map<int, std::vector<int>> tiles_by_source;  // missing source CUBE -> tiles
    for (const auto& [tile, got] : pending_[c]) {
      if (!got.count(int(c))) tiles_by_source[int(c)].push_back(tile);
      const TileTree tree = tree_of(sh_.tiles[size_t(tile)]);  // a named tree: it must outlive the loop
      for (int child : tree.children[c])
        if (!got.count(child)) tiles_by_source[child].push_back(tile);
    }
    for (const auto& [src, tiles] : tiles_by_source)
      out += (out.empty() ? "" : "; ") + std::string("CUBE ") + std::to_string(c) + " waits for " +
             (src == int(c) ? std::string("its own CUBE state") : "the state of CUBE " + std::to_string(src)) +
             " for tiles " + id_list(tiles);
  }
  return out;
}

void ReductionNetwork::report_stats(StatsNode& group_node) const {
  group_node.set(LinkStats::vector_ops, vector_ops_);
  StatsNode& links = group_node.list(LinkStats::list);
  for (size_t c = 0; c < parents_.size(); ++c) {
    if (parents_[c] < 0) continue;
    StatsNode& l = links.child("cube" + std::to_string(c) + "_to_cube" + std::to_string(parents_[c]));
    l.component = sh_.spans.name(link_component_[c]);
    l.set(LinkStats::from, uint64_t(c));
    l.set(LinkStats::to, uint64_t(parents_[c]));
    l.set(LinkStats::busy, to_ns(link_busy_[c]));
    l.set(LinkStats::bytes, link_bytes_[c]);
  }
}

}  // namespace ahbm
