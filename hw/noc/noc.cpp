#include "hw/noc/noc.h"

#include <algorithm>
#include <stdexcept>

namespace ahbm {

Noc::Noc(sc_core::sc_module_name name, const NocContext& ctx)
    : sc_core::sc_module(name), ctx_(ctx), clients_(ctx.endpoints.size(), nullptr) {}

void Noc::attach(int endpoint, NocClient* client) { clients_.at(size_t(endpoint)) = client; }

void Noc::send(NocPacket packet) {
  // A bad endpoint is a bug in the sender, not user input.
  const int n = endpoint_count();
  if (packet.src < 0 || packet.src >= n || packet.dsts.empty())
    throw std::invalid_argument(std::string(name()) + ": packet with bad source or no destination");
  std::vector<int> sorted = packet.dsts;
  std::sort(sorted.begin(), sorted.end());
  if (sorted.front() < 0 || sorted.back() >= n || std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw std::invalid_argument(std::string(name()) + ": packet destinations out of range or repeated");
  packet.id = next_id_++;
  packet.created = sc_core::sc_time_stamp();
  packet.injected = packet.created;
  packet.hops = -1;
  ++packets_sent_;
  pending_[packet.id] = {packet.created, packet.dsts, packet.dsts.size() > 1};
  inject(std::move(packet));
}

void Noc::begin_run() {
  pending_.clear();
  next_id_ = 1;
  packets_sent_ = deliveries_ = bytes_delivered_ = delivered_flits_ = 0;
  multicast_ = unicast_ = Completion{};
  restart();
}

void Noc::deliver(int endpoint, const NocPacket& packet) {
  auto it = pending_.find(packet.id);
  auto w = it == pending_.end() ? std::vector<int>::iterator()
                                : std::find(it->second.waiting.begin(), it->second.waiting.end(), endpoint);
  if (it == pending_.end() || w == it->second.waiting.end())
    throw std::logic_error(std::string(name()) + ": packet " + std::to_string(packet.id) + " delivered to " +
                           endpoint_name(endpoint) + " twice or to a non-destination");
  it->second.waiting.erase(w);
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  if (it->second.waiting.empty()) {
    Completion& c = it->second.multicast ? multicast_ : unicast_;
    const double ns = to_ns(now - it->second.created);
    ++c.packets;
    c.sum_ns += ns;
    c.max_ns = std::max(c.max_ns, ns);
    pending_.erase(it);
  }
  ++deliveries_;
  bytes_delivered_ += packet.bytes;
  delivered_flits_ += std::max<uint64_t>(1, (packet.bytes + flit_bytes() - 1) / flit_bytes());
  record_span("noc." + endpoint_name(endpoint), "noc_deliver", packet, packet.created, now);
  NocClient* c = clients_.at(size_t(endpoint));
  if (c) c->noc_receive(endpoint, packet);
}

void Noc::record_span(const std::string& component, const char* activity, const NocPacket& packet,
                      const sc_core::sc_time& start, const sc_core::sc_time& end) const {
  if (ctx_.span_hook) ctx_.span_hook(component, activity, packet, start, end);
}

void Noc::Completion::report(StatsNode& node) const {
  node.set(NocStats::packets, packets);
  node.set(NocStats::avg_ns, packets ? sum_ns / double(packets) : 0.0);
  node.set(NocStats::max_ns, max_ns);
}

void Noc::report_stats(StatsNode& node) const {
  node.set(NocStats::packets_sent, packets_sent_);
  node.set(NocStats::deliveries, deliveries_);
  node.set(NocStats::bytes_delivered, bytes_delivered_);
  node.set(NocStats::packets_in_flight, uint64_t(pending_.size()));
  node.set(NocStats::flit_hops, flit_hops());
  node.set(NocStats::routers, int64_t(routers()));
  multicast_.report(node.child(NocStats::multicast));
  unicast_.report(node.child(NocStats::unicast));
}

NocEstimate default_noc_estimate(const NocEstimateInput& in) {
  const double cycle = 1.0 / in.clock_ghz;  // ns
  NocEstimate n;
  n.latency_ns = 2.0 * (4 + 1) * cycle;
  n.bandwidth_gbps = 64 / cycle;
  n.hops = 2;
  return n;
}

NocRegistry NocRegistry::with_builtin_models() {
  NocRegistry r;
  register_builtin_noc_models(r);
  return r;
}

}  // namespace ahbm
