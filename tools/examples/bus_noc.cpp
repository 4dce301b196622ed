#include "tools/examples/bus_noc.h"

namespace ahbm::examples {

namespace {
const ParamTable<BusParams>& bus_param_table() {
  static const ParamTable<BusParams> table(AHBM_PARAM_FIELDS(BusParams, AHBM_PARAMS_NOC_BUS));
  return table;
}
// The parameters both the model and its estimate read.
BusParams read_bus_params(JsonReader& r) {
  BusParams p;
  bus_param_table().read(p, r);
  return p;
}
}  // namespace

std::vector<HwParam> BusNoc::params() { return bus_param_table().rows(); }

NocEstimate BusNoc::estimate(const NocEstimateInput& in) {
  JsonReader r(in.params, in.config_file, in.params_field);
  const BusParams p = read_bus_params(r);
  NocEstimate n;
  n.bandwidth_gbps = p.bandwidth_gbps;
  n.latency_ns = p.latency_ns;
  return n;
}

BusNoc::BusNoc(sc_core::sc_module_name name, const NocContext& ctx) : Noc(name, ctx) {
  // Parameters are validated like any model's: errors name the config file and field.
  JsonReader r(ctx.params, ctx.config_file, ctx.params_field);
  p_ = read_bus_params(r);
  latency_ = sc_core::sc_time(p_.latency_ns, sc_core::SC_NS);
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
    const sc_core::sc_time t = transfer_time(p.bytes, p_.bandwidth_gbps);
    sc_core::wait(t);
    busy_ += t;
    busy_flits_ += ceil_div(p.bytes, uint64_t(p_.flit_bytes));
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
  node.set(stats::Label<double>{"bandwidth_gbps", "GB/s", "bus bandwidth"}, p_.bandwidth_gbps);
  node.set(stats::Label<double>{"latency_ns", "ns", "bus latency"}, to_ns(latency_));
  node.set(stats::BusyNs{"busy_ns", "ns", "bus busy"}, to_ns(busy_));
  node.set(stats::Sum<uint64_t>{"link_cycles_busy", "flits", "flits carried by the bus"}, busy_flits_);
}

void register_bus_noc(NocRegistry& registry) {
  registry.add(noc_model<BusNoc>("bus", "example: shared bus, fixed latency, bandwidth cap (tools/examples)"));
}

}  // namespace ahbm::examples
