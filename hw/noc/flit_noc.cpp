#include "hw/noc/flit_noc.h"

#include <algorithm>
#include <stdexcept>

#include "hw/common/observe/trace_sink.h"

namespace ahbm {

const ParamTable<FlitParams>& flit_param_table() {
  static const ParamTable<FlitParams> table(AHBM_PARAM_FIELDS(FlitParams, AHBM_PARAMS_NOC_FLIT));
  return table;
}

FlitParams router_preset(FlitRouterPreset preset, const FlitParams& model_defaults) {
  FlitParams p = model_defaults;
  p.router = preset;
  if (preset == FlitRouterPreset::booksim_iq) {
    // BookSim2's input-queued router with its default configuration (booksim_config.cpp):
    // routing_delay = vc_alloc_delay = sw_alloc_delay = st_final_delay = 1, st_prepare_delay = 0,
    // speculative = 0, num_vcs = 16, vc_buf_size = 8, sw_allocator = islip with alloc_iters = 1. Channel and credit timing as measured against BookSim in issue 22:
    // 2 cycles through the injection channel, a 7-cycle credit loop (docs/noc.md).
    p.pipeline = FlitPipeline::staged;
    p.routing_delay = p.vc_alloc_delay = p.sw_alloc_delay = p.st_delay = 1;
    p.speculative = false;
    p.vcs = 16;
    p.buffer_flits = 8;
    p.link_cycles = 1;
    p.inject_cycles = 2;
    p.eject_cycles = 0;
    p.credit_delay = 1;
    p.vc_select = FlitVcSelect::kRoundRobin;
    p.sw_allocator = FlitSwAllocator::kIslip;
    // iq_router frees a packet's VCs at its tail's switch allocation (issue 43: a VC passes one
    // packet every 3 cycles, not 4).
    p.vc_release = FlitVcRelease::allocation;
  }
  return p;
}

namespace {

// The relations between the table's fields: each pipeline has its own delay parameters (giving
// the other's is a mistake worth naming), and the staged-only allocators and their options.
void check_flit_params(JsonReader& r, const FlitParams& p) {
  static const char* const kStageKeys[] = {"routing_delay", "vc_alloc_delay", "sw_alloc_delay", "st_delay", "speculative", "vc_release"};
  if (p.staged()) {
    if (r.has("router_cycles"))
      r.fail("router_cycles", "applies to the lumped pipeline; the staged one takes routing_delay, vc_alloc_delay, "
                              "sw_alloc_delay and st_delay");
  } else {
    for (const char* k : kStageKeys)
      if (r.has(k)) r.fail(k, "applies to the staged pipeline (\"pipeline\": \"staged\"); the lumped one takes router_cycles");
  }
  const std::string& alloc = choice_name(p.sw_allocator);
  const bool greedy = p.sw_allocator == FlitSwAllocator::kGreedy;
  if (!greedy && !p.staged())
    r.fail("sw_allocator", alloc + " needs the staged pipeline (\"pipeline\": \"staged\"): it allocates the "
                           "switch among heads that already hold an output VC");
  const bool iterative = !greedy && p.sw_allocator != FlitSwAllocator::kWavefront;
  if (r.has("alloc_iters") && !iterative)
    r.fail("alloc_iters", "applies to the separable allocators (input-first, output-first, islip), not to " + alloc);
  if (r.has("input_speedup") && greedy)
    r.fail("input_speedup", "needs a staged switch allocator (input-first, output-first, islip or wavefront); "
                            "greedy already forwards from any VC of an input");
  r.integer("input_speedup", p.input_speedup, 1, p.vcs);  // at most one switch input per VC
  if (p.vc_allocator != FlitVcAllocator::kGreedy && !p.staged())
    r.fail("vc_allocator", choice_name(p.vc_allocator) + " needs the staged pipeline (\"pipeline\": \"staged\"): the lumped one allocates a "
                           "VC in the cycle the head crosses the switch");
}

}  // namespace

FlitParams read_flit_params(JsonReader& r, const FlitParams& model_defaults) {
  FlitParams p = model_defaults;
  flit_param_table().read(p, r, "router");
  p = router_preset(p.router, model_defaults);
  flit_param_table().read(p, r);
  check_flit_params(r, p);
  return p;
}

std::vector<int> read_placement(JsonReader& r, const std::vector<std::string>& endpoints, int nodes,
                                const std::vector<int>& defaults, const NodeParser& node_of) {
  std::vector<int> node = defaults;
  if (node.size() != endpoints.size()) {
    node.resize(endpoints.size());
    for (size_t e = 0; e < endpoints.size(); ++e) node[e] = int(e % size_t(nodes));
  }
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
  n.latency_ns = double(p.zero_load_cycles(routers, 1)) * cycle;
  n.bandwidth_gbps = double(p.flit_bytes) / cycle;
  n.flit_bytes = p.flit_bytes;
  n.hops = routers;
  return n;
}

FlitNoc::FlitNoc(sc_core::sc_module_name name, const NocContext& ctx)
    : Noc(name, ctx), period_(ctx.clock.period().value()) {
  if (ctx.trace) sig_in_flight_ = ctx.trace->add_signal("noc.packets_in_flight", 16);
  SC_HAS_PROCESS(FlitNoc);
  SC_THREAD(run);
}

void FlitNoc::build(FlitTopology topo, const FlitParams& params, StatsNode topology) {
  params_ = params;
  topology_ = std::move(topology);
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
  if (params_.tree_multicast()) copies.push_back(packet.dsts);
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
      // The head entered its first router inject_cycles after it left the source queue.
      copy.injected = it->second.first_injected - sc_core::sc_time::from_value(uint64_t(params_.inject_cycles) * period_);
      deliver(d.endpoint, copy);
      if (--it->second.waiting == 0) {
        record_span("noc", "noc_network", copy, it->second.first_injected, now);
        flight_.erase(it);
        if (context().trace) context().trace->set(sig_in_flight_, flight_.size());
      }
    }
  }
}

void FlitNoc::report_stats(StatsNode& node) const {
  Noc::report_stats(node);
  const auto& t = net_->totals();
  // The model's parameters, echoed. Summed over steps like every number before typed
  // statistics, so summary.json stays as it was (a multi-step run shows steps x flit_bytes);
  // stats::Label would keep them constant.
  node.set(FlitNocStats::flit_bytes, params_.flit_bytes);
  node.set(FlitNocStats::router_cycles, params_.router_cycles);
  node.set(FlitNocStats::link_cycles, params_.link_cycles);
  node.set(FlitNocStats::buffer_flits, params_.buffer_flits);
  node.set(FlitNocStats::vcs, params_.vcs);
  node.set(FlitNocStats::multicast, choice_name(params_.multicast));
  // The router micro-architecture, when it is not the classic default (whose summaries stay as
  // they were before these parameters existed).
  const FlitParams& p = params_;
  if (p.router != FlitRouterPreset::classic || p.staged() || p.inject_cycles != 0 || p.eject() != p.link_cycles || p.credit_delay != 0 ||
      p.vc_select != FlitParams::VcSelect::kLowest || p.sw_allocator != FlitParams::SwAllocator::kGreedy ||
      p.alloc_iters != 1 || p.input_speedup != 1 || p.vc_allocator != FlitParams::VcAllocator::kGreedy) {
    StatsNode& r = node.child("router");
    r.set(FlitRouterStats::preset, choice_name(p.router));
    r.set(FlitRouterStats::pipeline, choice_name(p.pipeline));
    r.set(FlitRouterStats::head_cycles, int64_t(p.head_cycles()));
    r.set(FlitRouterStats::body_cycles, int64_t(p.body_cycles()));
    r.set(FlitRouterStats::inject_cycles, int64_t(p.inject_cycles));
    r.set(FlitRouterStats::eject_cycles, int64_t(p.eject()));
    r.set(FlitRouterStats::credit_delay, int64_t(p.credit_delay));
    r.set(FlitRouterStats::vc_select, choice_name(p.vc_select));
    r.set(FlitRouterStats::sw_allocator, choice_name(p.sw_allocator));
    if (p.alloc_iters != 1) r.set(FlitRouterStats::alloc_iters, int64_t(p.alloc_iters));
    if (p.input_speedup != 1) r.set(FlitRouterStats::input_speedup, int64_t(p.input_speedup));
    if (p.vc_allocator != FlitParams::VcAllocator::kGreedy)
      r.set(FlitRouterStats::vc_allocator, choice_name(p.vc_allocator));
    if (p.staged()) {
      r.set(FlitRouterStats::routing_delay, int64_t(p.routing_delay));
      r.set(FlitRouterStats::vc_alloc_delay, int64_t(p.vc_alloc_delay));
      r.set(FlitRouterStats::sw_alloc_delay, int64_t(p.sw_alloc_delay));
      r.set(FlitRouterStats::st_delay, int64_t(p.st_delay));
      r.set(FlitRouterStats::speculative, int64_t(p.speculative ? 1 : 0));
      r.set(FlitRouterStats::vc_release, choice_name(p.vc_release));
    }
  }
  node.set(FlitNocStats::flits_injected, t.flits_injected);
  node.set(FlitNocStats::link_flits, t.link_flits);
  node.set(FlitNocStats::eject_flits, t.eject_flits);
  // Each flit holds one channel (injection, router-to-router or ejection) for one cycle.
  node.set(FlitNocStats::link_cycles_busy, t.flits_injected + t.link_flits + t.eject_flits);
  node.set(FlitNocStats::multicast_channel_flits, t.multicast_channel_flits);
  merge_stats(node.child("topology"), topology_, 0, 0);  // into an empty node: a copy
}

std::vector<NocLink> FlitNoc::links() const { return net_->links(); }

// A router traversal ends on a router-to-router link or on an ejection channel.
uint64_t FlitNoc::flit_hops() const { return net_->totals().link_flits + net_->totals().eject_flits; }
int FlitNoc::routers() const { return net_->routers(); }

}  // namespace ahbm
