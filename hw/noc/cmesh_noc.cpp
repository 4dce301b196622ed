#include "hw/noc/cmesh_noc.h"

#include <cmath>

#include "hw/noc/mesh_noc.h"

namespace ahbm {

std::vector<HwParam> CMeshNoc::params() { return grid_model_params(concentration_param_table().rows()); }

NocEstimate CMeshNoc::estimate(const NocEstimateInput& in) { return flit_estimate(in, FlitParams{}, 2); }

int cmesh_router(int endpoint, int concentration, int cols, int rows) {
  const int e = endpoint % (concentration * cols * rows);
  const int s = int(std::lround(std::sqrt(double(concentration))));
  if (s * s != concentration) return e / concentration;
  const int x = e % (cols * s), y = e / (cols * s);
  return (y / s) * cols + x / s;
}

CMeshNoc::CMeshNoc(sc_core::sc_module_name name, const NocContext& ctx) : FlitNoc(name, ctx) {
  JsonReader r(ctx.params, ctx.config_file, ctx.params_field);
  ConcentrationParams cp = ConcentrationParams{};
  concentration_param_table().read(cp, r);
  const int c = cp.concentration;
  GridParams gp;
  grid_param_table().read(gp, r);
  // Default: the most nearly square mesh with c endpoints per router.
  Grid g = grid_size(gp, (endpoint_count() + c - 1) / c, 1);
  const FlitParams p = read_flit_params(r, FlitParams{});
  const GridRouting routing = grid_routing(r, gp, p, false);
  std::vector<int> defaults;
  for (int e = 0; e < endpoint_count(); ++e) defaults.push_back(cmesh_router(e, c, g.cols, g.rows));
  read_grid_placement(r, ctx.endpoints, g, defaults);
  r.finish();
  StatsNode topology = grid_stats(g, ctx.endpoints, routing);
  topology.set(stats::Sum<int64_t>{"concentration", "endpoints", "endpoints per router (summed over steps)"}, c);  // summed over steps, as cols and rows
  build(mesh_topology(g, routing), p, std::move(topology));
}

}  // namespace ahbm
