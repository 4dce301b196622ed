// `ideal`: every packet reaches every destination a fixed latency after it is sent, with
// unlimited bandwidth and no contention. The reference point the other models are compared to.
#include "hw/noc/ideal_noc.h"

namespace ahbm {

namespace {
const ParamTable<IdealParams>& ideal_param_table() {
  static const ParamTable<IdealParams> table(AHBM_PARAM_FIELDS(IdealParams, AHBM_PARAMS_NOC_IDEAL));
  return table;
}
double read_latency_ns(JsonReader& r) {
  IdealParams p;
  ideal_param_table().read(p, r);
  return p.latency_ns;
}
}  // namespace

std::vector<HwParam> IdealNoc::params() { return ideal_param_table().rows(); }

NocEstimate IdealNoc::estimate(const NocEstimateInput& in) {
  JsonReader r(in.params, in.config_file, in.params_field);
  NocEstimate n;
  n.latency_ns = read_latency_ns(r);
  return n;
}

IdealNoc::IdealNoc(sc_core::sc_module_name name, const NocContext& ctx) : Noc(name, ctx) {
  JsonReader r(ctx.params, ctx.config_file, ctx.params_field);
  latency_ = sc_core::sc_time(read_latency_ns(r), sc_core::SC_NS);
  r.finish();
  SC_HAS_PROCESS(IdealNoc);
  SC_THREAD(deliver_loop);
}

void IdealNoc::inject(NocPacket packet) {
  for (int d : packet.dsts) in_flight_.push({d, packet}, latency_);
}

void IdealNoc::deliver_loop() {
  for (;;) {
    auto [endpoint, packet] = in_flight_.pop();
    deliver(endpoint, packet);
  }
}

void IdealNoc::report_stats(StatsNode& node) const {
  Noc::report_stats(node);
  // A parameter, not a count: summed over steps like every number before typed statistics,
  // so summary.json stays as it was (a multi-step run shows steps x latency).
  node.set(stats::Sum<double>{"latency_ns", "ns", "fixed delivery latency (summed over steps)"}, to_ns(latency_));
}

}  // namespace ahbm
