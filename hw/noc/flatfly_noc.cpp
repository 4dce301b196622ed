#include "hw/noc/flatfly_noc.h"

#include <cstdlib>

#include "hw/noc/mesh_noc.h"

namespace ahbm {

// The flattened butterfly's own parameter: channel latency by length.
#define AHBM_PARAMS_NOC_FLATFLY(X)                                                                              \
  X(int, pitch_cycles, 0, between(0, 64), "cycles",                                                              \
    "a channel between routers d apart in their row or column takes d x this many cycles, its credits as long; 0 = every channel link_cycles", \
    "0: link_cycles, as the other grids; BookSim2's flatfly with use_noc_latency = 1 is xr (endpoints per router along a row)")
struct FlatFlyParams {
  AHBM_PARAMS_NOC_FLATFLY(AHBM_HW_MEMBER)
};

namespace {
const ParamTable<FlatFlyParams>& flatfly_param_table() {
  static const ParamTable<FlatFlyParams> table(AHBM_PARAM_FIELDS(FlatFlyParams, AHBM_PARAMS_NOC_FLATFLY));
  return table;
}

ConcentrationParams flatfly_concentration() {
  ConcentrationParams c;
  c.concentration = 1;  // one endpoint per router: BookSim's flatfly default
  return c;
}
}  // namespace

std::vector<HwParam> FlatFlyNoc::params() {
  std::vector<HwParam> rows = concentration_param_table().rows(flatfly_concentration());
  for (HwParam& p : flatfly_param_table().rows()) rows.push_back(std::move(p));
  return grid_model_params(std::move(rows));
}

NocEstimate FlatFlyNoc::estimate(const NocEstimateInput& in) { return flit_estimate(in, FlitParams{}, 2); }

FlatFlyNoc::FlatFlyNoc(sc_core::sc_module_name name, const NocContext& ctx) : FlitNoc(name, ctx) {
  JsonReader r(ctx.params, ctx.config_file, ctx.params_field);
  ConcentrationParams cp = flatfly_concentration();
  concentration_param_table().read(cp, r);
  const int c = cp.concentration;
  FlatFlyParams fp;
  flatfly_param_table().read(fp, r);
  const int pitch = fp.pitch_cycles;
  GridParams gp;
  grid_param_table().read(gp, r);
  // Default: the most nearly square grid of routers with c endpoints each.
  Grid g = grid_size(gp, (endpoint_count() + c - 1) / c, 1);
  const int cols = g.cols, rows = g.rows, R = g.routers();
  const FlitParams p = read_flit_params(r, FlitParams{});
  const GridRouting routing = grid_routing(r, gp, p, false);
  std::vector<int> defaults;  // endpoints i*c .. i*c + c - 1 on router i
  for (int e = 0; e < endpoint_count(); ++e) defaults.push_back((e / c) % R);
  read_grid_placement(r, ctx.endpoints, g, defaults);
  r.finish();

  FlitTopology t;
  for (int i = 0; i < R; ++i) t.router_names.push_back(g.router_name(i));
  // chx[i][x]: channel from router i to the router in its row at column x; chy[i][y]: to the
  // router in its column at row y (-1: itself).
  std::vector<std::vector<int>> chx(size_t(R), std::vector<int>(size_t(cols), -1)),
      chy(size_t(R), std::vector<int>(size_t(rows), -1));
  for (int i = 0; i < R; ++i) {
    const int x = i % cols, y = i / cols;
    for (int to = 0; to < cols; ++to)
      if (to != x) {
        chx[size_t(i)][size_t(to)] = int(t.channels.size());
        t.channels.push_back({i, y * cols + to, false, 0, pitch * std::abs(to - x)});
      }
    for (int to = 0; to < rows; ++to)
      if (to != y) {
        chy[size_t(i)][size_t(to)] = int(t.channels.size());
        t.channels.push_back({i, to * cols + x, false, 1, pitch * std::abs(to - y)});
      }
  }
  t.endpoint_router = g.node;
  auto next = [cols, chx = std::move(chx), chy = std::move(chy)](int i, int target, int order) {
    const int x = i % cols, y = i / cols, tx = target % cols, ty = target / cols;
    const int xhop = tx != x ? chx[size_t(i)][size_t(tx)] : -1, yhop = ty != y ? chy[size_t(i)][size_t(ty)] : -1;
    return order == 0 ? (xhop >= 0 ? xhop : yhop) : (yhop >= 0 ? yhop : xhop);
  };
  set_routes(std::move(next), routing, t);
  StatsNode topology = grid_stats(g, ctx.endpoints, routing);
  topology.set(stats::Sum<int64_t>{"concentration", "endpoints", "endpoints per router (summed over steps)"}, c);  // summed over steps, as cols and rows
  build(std::move(t), p, std::move(topology));
}

}  // namespace ahbm
