#include "hw/noc/crossbar_noc.h"

namespace ahbm {

namespace {
FlitParams crossbar_defaults() {
  FlitParams p;
  p.router_cycles = 2;  // arbitration, then switch traversal
  return p;
}
}  // namespace

std::vector<HwParam> CrossbarNoc::params() { return flit_param_table().rows(crossbar_defaults()); }

NocEstimate CrossbarNoc::estimate(const NocEstimateInput& in) { return flit_estimate(in, crossbar_defaults(), 1); }

CrossbarNoc::CrossbarNoc(sc_core::sc_module_name name, const NocContext& ctx) : FlitNoc(name, ctx) {
  JsonReader r(ctx.params, ctx.config_file, ctx.params_field);
  const FlitParams p = read_flit_params(r, crossbar_defaults());
  r.finish();
  FlitTopology t;
  t.router_names = {"xbar"};
  t.endpoint_router.assign(size_t(endpoint_count()), 0);
  t.route.assign(1, std::vector<int>(size_t(endpoint_count()), -1));  // every destination is one output away
  StatsNode topology;
  topology.set(stats::Sum<int64_t>{"ports", "ports", "crossbar ports (summed over steps)"}, endpoint_count());  // summed over steps, as before typed statistics
  build(std::move(t), p, std::move(topology));
}

}  // namespace ahbm
