#include "hw/noc/torus_noc.h"

#include <array>

#include "hw/noc/mesh_noc.h"

namespace ahbm {

std::vector<HwParam> TorusNoc::params() { return grid_model_params(torus_param_table().rows()); }

NocEstimate TorusNoc::estimate(const NocEstimateInput& in) { return flit_estimate(in, FlitParams{}, 2); }

TorusNoc::TorusNoc(sc_core::sc_module_name name, const NocContext& ctx) : FlitNoc(name, ctx) {
  JsonReader r(ctx.params, ctx.config_file, ctx.params_field);
  // Default: the most nearly square torus with one node per endpoint (as the mesh).
  TorusParams tp;
  torus_param_table().read(tp, r);
  GridParams gp;
  grid_param_table().read(gp, r);
  Grid g = grid_size(gp, endpoint_count(), 2);
  const int cols = g.cols, rows = g.rows;
  if (cols * rows < 2) r.fail("cols", "a torus needs at least 2 nodes (cols x rows)");
  FlitParams p = read_flit_params(r, FlitParams{});
  if (p.vcs % 2 != 0) r.fail("vcs", std::to_string(p.vcs) + ": a torus needs an even number of VCs (2, 4, ...): "
                                    "in each dimension half for packets before its dateline, half after");
  p.vc_classes = 2;
  const bool booksim = torus_dateline(r, tp, p, gp.routing) == TorusDateline::booksim;
  const GridRouting routing = grid_routing(r, gp, p, true, booksim);
  read_grid_placement(r, ctx.endpoints, g);
  const std::vector<int>& node = g.node;
  r.finish();

  FlitTopology t;
  const int R = g.routers();
  for (int i = 0; i < R; ++i) t.router_names.push_back(g.router_name(i));
  // Channel index per router and direction: 0 = +x, 1 = -x, 2 = +y, 3 = -y. A dimension of size 1
  // has no channels. The dateline of each ring is its wrap-around channel in each direction.
  std::vector<std::array<int, 4>> ch(size_t(R), {-1, -1, -1, -1});
  for (int i = 0; i < R; ++i) {
    const int x = i % cols, y = i / cols;
    auto add = [&](int dir, int to, bool dateline, int dim) {
      ch[size_t(i)][size_t(dir)] = int(t.channels.size());
      t.channels.push_back({i, to, dateline, dim});
    };
    if (cols > 1) {
      add(0, y * cols + (x + 1) % cols, x == cols - 1, 0);
      add(1, y * cols + (x + cols - 1) % cols, x == 0, 0);
    }
    if (rows > 1) {
      add(2, ((y + 1) % rows) * cols + x, y == rows - 1, 1);
      add(3, ((y + rows - 1) % rows) * cols + x, y == 0, 1);
    }
  }
  t.endpoint_router = node;
  // The way round a ring of k nodes from a to b: +1, -1 or 0 (there); a tie goes the positive way.
  auto way = [](int a, int b, int k) {
    const int fwd = (b - a + k) % k;
    return fwd == 0 ? 0 : 2 * fwd <= k ? 1 : -1;
  };
  if (booksim) {  // BookSim's dim_order_torus for unicasts; multicasts keep the table and the datelines
    GridRouting dor = routing;
    dor.routing = FlitTopology::Routing::kTorusDor;
    t.cols = cols;
    t.rows = rows;
    t.grid_channels = ch;
    t.inject_any_vc = true;
    set_grid_routes(g, std::move(ch), way, dor, t);
  } else {
    set_grid_routes(g, std::move(ch), way, routing, t);
  }
  build(std::move(t), p, grid_stats(g, ctx.endpoints, routing));
}

}  // namespace ahbm
