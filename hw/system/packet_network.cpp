#include "hw/system/packet_network.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

namespace ahbm {

std::string SystemTopology::node_name(int node) const {
  return is_switch(node) ? switch_names.at(size_t(node - chips)) : "chip" + std::to_string(node);
}

std::vector<int> SystemTopology::path(int src, int dst) const {
  std::vector<int> out;
  for (int node = src; node != dst;) {
    const int l = route.at(size_t(node)).at(size_t(dst));
    if (l < 0 || int(out.size()) > nodes())
      throw std::logic_error(description + ": no route from " + node_name(src) + " to " + node_name(dst));
    out.push_back(l);
    node = links.at(size_t(l)).to;
  }
  return out;
}

void SystemTopology::check() const {
  if (int(route.size()) != nodes()) throw std::logic_error(description + ": routing table of the wrong size");
  for (const SystemLink& l : links)
    if (l.from < 0 || l.from >= nodes() || l.to < 0 || l.to >= nodes() || l.from == l.to || !(l.gbps > 0))
      throw std::logic_error(description + ": bad link " + l.name);
  for (int a = 0; a < chips; ++a)
    for (int b = 0; b < chips; ++b) path(a, b);
}

PacketNetwork::PacketNetwork(SystemTopology topo, PacketNetworkParams params, double ticks_per_ns)
    : topo_(std::move(topo)), params_(params), ticks_per_ns_(ticks_per_ns) {
  topo_.check();
  if (params_.packet_bytes == 0) throw std::logic_error("packet network: packet_bytes is 0");
  link_free_.assign(topo_.links.size(), 0);
  stats_.assign(topo_.links.size(), {});
  switch_ticks_.assign(size_t(topo_.nodes()), 0);
  for (int n = topo_.chips; n < topo_.nodes(); ++n) switch_ticks_[size_t(n)] = ticks(params_.switch_latency_ns);
}

uint64_t PacketNetwork::ticks(double ns) const { return uint64_t(std::llround(ns * ticks_per_ns_)); }

uint64_t PacketNetwork::duration(int link, uint64_t bytes) const {
  return uint64_t(std::llround(double(bytes) / topo_.links[size_t(link)].gbps * ticks_per_ns_));
}

void PacketNetwork::push(Event e) {
  e.seq = next_seq_++;
  heap_.push_back(std::move(e));
  std::push_heap(heap_.begin(), heap_.end(), Later{});
}

uint64_t PacketNetwork::next_event() const {
  return heap_.empty() ? std::numeric_limits<uint64_t>::max() : heap_.front().time;
}

void PacketNetwork::send(uint64_t id, int src, const std::vector<int>& dsts, uint64_t bytes, uint64_t now) {
  if (src < 0 || src >= topo_.chips || dsts.empty() || messages_.count(id))
    throw std::logic_error("packet network: bad message " + std::to_string(id));
  const uint64_t p = params_.packet_bytes;
  const uint64_t k = std::max<uint64_t>(1, (bytes + p - 1) / p);
  Message& m = messages_[id];
  for (int d : dsts) {
    if (d < 0 || d >= topo_.chips || m.waiting.count(d)) throw std::logic_error("packet network: bad destination");
    m.waiting[d] = k;
  }
  for (uint64_t i = 0; i < k; ++i) {
    Event e{};
    e.packet = next_packet_++;
    e.msg = id;
    e.bytes = std::min(p, bytes - std::min(bytes, i * p));
    e.dsts = dsts;
    fan_out(src, e, now, 0, now);
  }
}

void PacketNetwork::fan_out(int node, const Event& at, uint64_t head, uint64_t prev_finish, uint64_t tail) {
  std::map<int, std::vector<int>> by_link;  // ordered: copies are made in link order
  for (int d : at.dsts) {
    if (d == node) {
      Event a{};
      a.time = tail;
      a.packet = at.packet;
      a.kind = Kind::arrive;
      a.node = node;
      a.msg = at.msg;
      a.bytes = at.bytes;
      push(std::move(a));
    } else {
      by_link[topo_.route[size_t(node)][size_t(d)]].push_back(d);
    }
  }
  for (auto& [link, dsts] : by_link) {
    const uint64_t d = duration(link, at.bytes);
    Event r{};
    r.time = std::max(head, prev_finish > d ? prev_finish - d : 0);
    r.packet = at.packet;
    r.kind = Kind::request;
    r.link = link;
    r.msg = at.msg;
    r.bytes = at.bytes;
    r.dsts = std::move(dsts);
    push(std::move(r));
  }
}

std::vector<PacketNetwork::Delivery> PacketNetwork::advance(uint64_t until) {
  std::vector<Delivery> out;
  while (!heap_.empty() && heap_.front().time <= until) {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    Event e = std::move(heap_.back());
    heap_.pop_back();
    if (e.kind == Kind::request) {
      const SystemLink& link = topo_.links[size_t(e.link)];
      const uint64_t d = duration(e.link, e.bytes);
      const uint64_t start = std::max(e.time, link_free_[size_t(e.link)]);
      const uint64_t finish = start + d;
      link_free_[size_t(e.link)] = finish;
      LinkStats& s = stats_[size_t(e.link)];
      s.bytes += e.bytes;
      ++s.packets;
      s.busy_ticks += d;
      const uint64_t lat = ticks(link.latency_ns);
      fan_out(link.to, e, start + lat + switch_ticks_[size_t(link.to)], finish, finish + lat);
    } else {
      auto m = messages_.find(e.msg);
      auto w = m->second.waiting.find(e.node);
      if (--w->second == 0) {
        out.push_back({e.msg, e.node, e.time});
        m->second.waiting.erase(w);
        if (m->second.waiting.empty()) messages_.erase(m);
      }
    }
  }
  return out;
}

uint64_t PacketNetwork::link_traversals() const {
  uint64_t n = 0;
  for (const LinkStats& s : stats_) n += s.packets;
  return n;
}

double PacketNetwork::energy_pj() const {
  uint64_t bytes = 0;
  for (const LinkStats& s : stats_) bytes += s.bytes;
  return double(bytes) * params_.energy_pj_per_byte;
}

}  // namespace ahbm
