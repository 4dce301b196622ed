#include "hw/system/packet_noc.h"

#include <stdexcept>

namespace ahbm {

namespace {
// The engine counts time in SystemC resolution units.
double ticks_per_ns() { return double(sc_core::sc_time(1, sc_core::SC_NS).value()); }
}  // namespace

PacketNoc::PacketNoc(sc_core::sc_module_name name, const NocContext& ctx) : Noc(name, ctx) {
  SC_HAS_PROCESS(PacketNoc);
  SC_THREAD(run);
}

void PacketNoc::build(SystemTopology topo, const PacketNetworkParams& params) {
  if (topo.chips != endpoint_count())
    throw std::logic_error(std::string(name()) + ": topology of " + std::to_string(topo.chips) + " chips for " +
                           std::to_string(endpoint_count()) + " endpoints");
  topo_ = std::move(topo);
  params_ = params;
  restart();
}

void PacketNoc::restart() {
  net_ = std::make_unique<PacketNetwork>(topo_, params_, ticks_per_ns());
  flight_.clear();
  origin_ = sc_core::sc_time_stamp();
}

void PacketNoc::inject(NocPacket packet) {
  net_->send(packet.id, packet.src, packet.dsts, packet.bytes, sc_core::sc_time_stamp().value());
  const size_t n = packet.dsts.size();
  flight_.emplace(packet.id, InFlight{std::move(packet), n});
  wake_.notify(sc_core::SC_ZERO_TIME);
}

void PacketNoc::run() {
  for (;;) {
    const uint64_t now = sc_core::sc_time_stamp().value();
    for (const PacketNetwork::Delivery& d : net_->advance(now)) {
      auto it = flight_.find(d.id);
      NocPacket copy = it->second.packet;
      copy.hops = int(topo_.path(copy.src, d.dst).size());  // links traversed
      if (--it->second.waiting == 0) flight_.erase(it);
      deliver(d.dst, copy);
    }
    const uint64_t next = net_->next_event();
    if (next == UINT64_MAX) sc_core::wait(wake_);
    else sc_core::wait(sc_core::sc_time::from_value(next - now), wake_);
  }
}

}  // namespace ahbm

namespace ahbm {

std::vector<NocLink> PacketNoc::links() const {
  std::vector<NocLink> out;
  for (size_t l = 0; l < topo_.links.size(); ++l)
    out.push_back({topo_.links[l].name, "link", net_->link_stats()[l].packets, {}});
  return out;
}

void PacketNoc::report_stats(StatsNode& node) const {
  Noc::report_stats(node);
  using S = PacketNocStats;
  node.set(S::topology, topo_.description);
  node.set(S::packet_bytes, int64_t(params_.packet_bytes));
  uint64_t bytes = 0;
  for (const PacketNetwork::LinkStats& s : net_->link_stats()) bytes += s.bytes;
  node.set(S::link_packets, net_->link_traversals());
  node.set(S::link_bytes, bytes);
  node.set(S::energy_pj, net_->energy_pj());
  const double elapsed = to_ns(sc_core::sc_time_stamp() - origin_);
  StatsNode& list = node.list(S::links);
  for (size_t l = 0; l < topo_.links.size(); ++l) {
    const PacketNetwork::LinkStats& s = net_->link_stats()[l];
    StatsNode& n = list.child(topo_.links[l].name);
    const double busy = double(s.busy_ticks) / net_->ticks_per_ns();
    n.set(S::link_name, topo_.links[l].name);
    n.set(S::gbps, topo_.links[l].gbps);
    n.set(S::bytes, s.bytes);
    n.set(S::packets, s.packets);
    n.set(S::busy_ns, busy);
    n.set(S::utilisation, elapsed > 0 ? busy / elapsed : 0.0);
  }
}

}  // namespace ahbm
