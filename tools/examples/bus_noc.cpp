#include "tools/examples/bus_noc.h"

namespace ahbm::examples {

namespace {
// The parameters both the model and its estimate read, with their defaults and ranges.
double read_bandwidth_gbps(JsonReader& r) { return r.number("bandwidth_gbps", 32.0, 0.001, 1e6); }
double read_latency_ns(JsonReader& r) { return r.number("latency_ns", 20.0, 0.0, 1e9); }
}  // namespace

NocEstimate BusNoc::estimate(const NocEstimateInput& in) {
  JsonReader r(in.params, in.config_file, in.params_field);
  NocEstimate n;
  n.bandwidth_gbps = read_bandwidth_gbps(r);
  n.latency_ns = read_latency_ns(r);
  return n;
}

BusNoc::BusNoc(sc_core::sc_module_name name, const NocContext& ctx) : Noc(name, ctx) {
  // Parameters are validated like any model's: errors name the config file and field.
  JsonReader r(ctx.params, ctx.config_file, ctx.params_field);
  bandwidth_gbps_ = read_bandwidth_gbps(r);
  latency_ = sc_core::sc_time(read_latency_ns(r), sc_core::SC_NS);
  flit_bytes_ = uint64_t(r.integer("flit_bytes", 64, 1, 4096));
  r.finish();
  SC_HAS_PROCESS(BusNoc);
  SC_THREAD(transfer_loop);
  SC_THREAD(deliver_loop);
}

void BusNoc::inject(NocPacket packet) { waiting_.push(std::move(packet)); }

void BusNoc::transfer_loop() {
  for (;;) {
    NocPacket p = waiting_.pop();
    const sc_core::sc_time start = sc_core::sc_time_stamp();
    const sc_core::sc_time t = transfer_time(p.bytes, bandwidth_gbps_);
    sc_core::wait(t);
    busy_ += t;
    busy_flits_ += ceil_div(p.bytes, flit_bytes_);
    record_span("noc", "bus_transfer", p, start, sc_core::sc_time_stamp());
    arriving_.push(std::move(p), latency_);
  }
}

void BusNoc::deliver_loop() {
  for (;;) {
    const NocPacket p = arriving_.pop();
    for (int d : p.dsts) deliver(d, p);
  }
}

void BusNoc::report_stats(StatsNode& node) const {
  Noc::report_stats(node);  // packets, deliveries, completion times
  // Parameters are labels (constant over the steps of a run); counts and busy time are sums.
  node.set(stats::Label<double>{"bandwidth_gbps", "GB/s", "bus bandwidth"}, bandwidth_gbps_);
  node.set(stats::Label<double>{"latency_ns", "ns", "bus latency"}, to_ns(latency_));
  node.set(stats::BusyNs{"busy_ns", "ns", "bus busy"}, to_ns(busy_));
  node.set(stats::Sum<uint64_t>{"link_cycles_busy", "flits", "flits carried by the bus"}, busy_flits_);
}

void register_bus_noc(NocRegistry& registry) {
  registry.add(noc_model<BusNoc>("bus", "example: shared bus, fixed latency, bandwidth cap (tools/examples)"));
}

}  // namespace ahbm::examples
