#include "hw/noc/flit_noc.h"

#include <algorithm>
#include <stdexcept>

#include "hw/common/trace_sink.h"

namespace ahbm {

FlitParams read_flit_params(JsonReader& r, const FlitParams& d) {
  FlitParams p = d;
  p.flit_bytes = int(r.integer("flit_bytes", d.flit_bytes, 1, 4096));
  p.router_cycles = int(r.integer("router_cycles", d.router_cycles, 1, 64));
  p.link_cycles = int(r.integer("link_cycles", d.link_cycles, 1, 64));
  p.buffer_flits = int(r.integer("buffer_flits", d.buffer_flits, 1, 1024));
  p.vcs = int(r.integer("vcs", d.vcs, 1, 16));
  p.tree_multicast = r.string("multicast", d.tree_multicast ? "tree" : "source", {"tree", "source"}) == "tree";
  return p;
}

std::vector<int> read_placement(JsonReader& r, const std::vector<std::string>& endpoints, int nodes,
                                const NodeParser& node_of) {
  std::vector<int> node(endpoints.size());
  for (size_t e = 0; e < endpoints.size(); ++e) node[e] = int(e % size_t(nodes));
  if (!r.has("placement")) return node;
  const Json& pl = r.raw("placement");
  if (!pl.is_object()) r.fail("placement", "must be an object mapping endpoint names to nodes, got " + pl.dump());
  for (const auto& [name, value] : pl.items()) {
    auto it = std::find(endpoints.begin(), endpoints.end(), name);
    if (it == endpoints.end()) {
      std::string list;
      for (const auto& n : endpoints) list += (list.empty() ? "" : ", ") + n;
      const std::string near = closest_name(name, endpoints);
      r.fail("placement." + name, "unknown endpoint (endpoints: " + list + ")" +
                                      (near.empty() ? std::string() : "; did you mean \"" + near + "\"?"));
    }
    std::string error;
    const int n = node_of(value, error);
    if (!error.empty()) r.fail("placement." + name, value.dump() + ": " + error);
    node[size_t(it - endpoints.begin())] = n;
  }
  return node;
}

NocEstimate flit_estimate(const NocEstimateInput& in, const FlitParams& defaults, int routers) {
  JsonReader r(in.params, in.config_file, in.params_field);
  const FlitParams p = read_flit_params(r, defaults);
  const double cycle = 1.0 / in.clock_ghz;  // ns
  NocEstimate n;
  n.latency_ns = double(routers) * (double(p.router_cycles) + double(p.link_cycles)) * cycle;
  n.bandwidth_gbps = double(p.flit_bytes) / cycle;
  return n;
}

FlitNoc::FlitNoc(sc_core::sc_module_name name, const NocContext& ctx)
    : Noc(name, ctx), period_(ctx.clock.period().value()) {
  if (ctx.trace) sig_in_flight_ = ctx.trace->add_signal("noc.packets_in_flight", 16);
  SC_HAS_PROCESS(FlitNoc);
  SC_THREAD(run);
}

void FlitNoc::build(FlitTopology topo, const FlitParams& params, Json description) {
  params_ = params;
  description_ = std::move(description);
  topo_ = topo;
  net_ = std::make_unique<FlitNetwork>(std::move(topo), params, context().endpoints);
}

void FlitNoc::restart() {
  // Cycle numbers restart at 0 on the run's first clock edge, so the engine (whose event wheel is
  // indexed by cycle) sees exactly what it sees in a new chip.
  origin_ = sc_core::sc_time_stamp().value();
  net_ = std::make_unique<FlitNetwork>(topo_, params_, context().endpoints);
  flight_.clear();
}

void FlitNoc::inject(NocPacket packet) {
  const uint64_t now = sc_core::sc_time_stamp().value() - origin_;
  // The packet enters at the first clock edge at or after now that has not been processed yet.
  const int64_t cycle = std::max(net_->last_cycle() + 1, int64_t((now + period_ - 1) / period_));
  const int flits = int(std::max<uint64_t>(1, ceil_div(packet.bytes, uint64_t(params_.flit_bytes))));
  std::vector<std::vector<int>> copies;
  if (params_.tree_multicast) copies.push_back(packet.dsts);
  else
    for (int d : packet.dsts) copies.push_back({d});
  net_->enqueue(packet.id, packet.src, std::move(copies), flits, cycle, packet.dsts.size() > 1);
  const uint64_t id = packet.id;
  const size_t waiting = packet.dsts.size();
  flight_.emplace(id, InFlight{std::move(packet), sc_core::SC_ZERO_TIME, waiting});
  if (context().trace) context().trace->set(sig_in_flight_, flight_.size());
  wake_.notify(sc_core::SC_ZERO_TIME);
}

void FlitNoc::run() {
  for (;;) {
    const int64_t next = net_->next_cycle();
    if (next == FlitNetwork::kIdle) {
      // Nothing can move, so packets still in flight can never arrive: report it rather than
      // let the simulation end quietly with missing deliveries.
      if (!flight_.empty())
        throw std::logic_error(std::string(name()) + ": deadlock at cycle " + std::to_string(net_->last_cycle()) +
                               ": " + std::to_string(flight_.size()) + " packets cannot move");
      sc_core::wait(wake_);
      continue;
    }
    const sc_core::sc_time at = at_cycle(next), now = sc_core::sc_time_stamp();
    if (at > now) {
      sc_core::wait(at - now, wake_);  // a send() may bring the next cycle forward
      continue;
    }
    net_->step(next);
    for (uint64_t id : net_->first_injected()) flight_.at(id).first_injected = now;
    for (uint64_t id : net_->last_injected()) {
      const NocPacket& p = flight_.at(id).packet;
      record_span("noc." + endpoint_name(p.src), "noc_inject", p, p.created, now);
    }
    for (const auto& d : net_->delivered()) {
      auto it = flight_.find(d.packet);
      NocPacket copy = it->second.packet;
      copy.hops = d.hops;
      deliver(d.endpoint, copy);
      if (--it->second.waiting == 0) {
        record_span("noc", "noc_network", copy, it->second.first_injected, now);
        flight_.erase(it);
        if (context().trace) context().trace->set(sig_in_flight_, flight_.size());
      }
    }
  }
}

Json FlitNoc::stats() const {
  Json j = Noc::stats();
  const auto& t = net_->totals();
  j["flit_bytes"] = params_.flit_bytes;
  j["router_cycles"] = params_.router_cycles;
  j["link_cycles"] = params_.link_cycles;
  j["buffer_flits"] = params_.buffer_flits;
  j["vcs"] = params_.vcs;
  j["multicast"] = params_.tree_multicast ? "tree" : "source";
  j["flits_injected"] = t.flits_injected;
  j["link_flits"] = t.link_flits;
  j["eject_flits"] = t.eject_flits;
  // Each flit holds one channel (injection, router-to-router or ejection) for one cycle.
  j["link_cycles_busy"] = t.flits_injected + t.link_flits + t.eject_flits;
  j["multicast_channel_flits"] = t.multicast_channel_flits;
  j["topology"] = description_;
  return j;
}

std::vector<NocLink> FlitNoc::links() const { return net_->links(); }

}  // namespace ahbm
