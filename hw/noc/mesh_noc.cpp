#include "hw/noc/mesh_noc.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace ahbm {

NocEstimate MeshNoc::estimate(const NocEstimateInput& in) { return flit_estimate(in, FlitParams{}, 2); }

const ParamTable<GridParams>& grid_param_table() {
  static const ParamTable<GridParams> table(AHBM_PARAM_FIELDS(GridParams, AHBM_PARAMS_NOC_GRID));
  return table;
}

const ParamTable<ConcentrationParams>& concentration_param_table() {
  static const ParamTable<ConcentrationParams> table(AHBM_PARAM_FIELDS(ConcentrationParams, AHBM_PARAMS_NOC_CONCENTRATION));
  return table;
}

const ParamTable<TorusParams>& torus_param_table() {
  static const ParamTable<TorusParams> table(AHBM_PARAM_FIELDS(TorusParams, AHBM_PARAMS_NOC_TORUS));
  return table;
}

TorusDateline torus_dateline(JsonReader& r, const TorusParams& tp, const FlitParams& p, GridRoutingName routing) {
  if (tp.dateline == TorusDateline::booksim && routing != GridRoutingName::dor)
    r.fail("dateline", "booksim: BookSim's dim_order_torus classes apply to dor routing; " + choice_name(routing) +
                           " keeps the wrap classes (\"dateline\": \"wrap\" or \"router\")");
  if (tp.dateline != TorusDateline::by_router) return tp.dateline;
  return p.router == FlitRouterPreset::booksim_iq && routing == GridRoutingName::dor ? TorusDateline::booksim
                                                                                     : TorusDateline::wrap;
}

std::vector<HwParam> grid_model_params(std::vector<HwParam> before) {
  for (HwParam& p : grid_param_table().rows()) before.push_back(std::move(p));
  for (HwParam& p : flit_param_table().rows()) before.push_back(std::move(p));
  return before;
}

Grid grid_size(const GridParams& p, int endpoints, int min_nodes) {
  const int n = std::max(min_nodes, endpoints);
  Grid g;
  g.cols = p.cols > 0 ? p.cols : int(std::ceil(std::sqrt(double(n))));
  g.rows = p.rows > 0 ? p.rows : (n + g.cols - 1) / g.cols;
  return g;
}

void read_grid_placement(JsonReader& r, const std::vector<std::string>& endpoints, Grid& g,
                         const std::vector<int>& defaults) {
  const int cols = g.cols, rows = g.rows;
  g.node = read_placement(r, endpoints, cols * rows, defaults, [&](const Json& v, std::string& err) {
    if (v.is_array() && v.size() == 2) {
      const auto x = integer_in(v[0], 0, cols - 1), y = integer_in(v[1], 0, rows - 1);
      if (x && y) return int(*y) * cols + int(*x);
    } else if (const auto n = integer_in(v, 0, int64_t(cols) * rows - 1)) {
      return int(*n);
    }
    err = "expected [x, y] with 0 <= x < " + std::to_string(cols) + ", 0 <= y < " + std::to_string(rows) +
          ", or a node index 0.." + std::to_string(cols * rows - 1) + " (row-major)";
    return 0;
  });
}

GridRouting grid_routing(JsonReader& r, const GridParams& gp, const FlitParams& p, bool torus, bool seeded_ties) {
  GridRouting g;
  g.name = gp.routing;
  g.routing = std::array{FlitTopology::Routing::kTable, FlitTopology::Routing::kO1Turn,
                         FlitTopology::Routing::kValiant, FlitTopology::Routing::kMinAdapt}[size_t(gp.routing)];
  const std::string& name = choice_name(g.name);
  if (g.routing == FlitTopology::Routing::kO1Turn || g.routing == FlitTopology::Routing::kValiant) {
    const int classes = 2 * p.vc_classes;
    if (p.vcs % classes != 0)
      r.fail("vcs", std::to_string(p.vcs) + ": " + name + " routing needs a multiple of " + std::to_string(classes) +
                        (torus ? " (two route classes, each with two dateline classes)"
                               : " (two route classes: " +
                                     std::string(g.name == GridRoutingName::o1turn ? "X first and Y first)" : "the two phases)")));
    g.seed = gp.route_seed;
  } else if (seeded_ties && g.routing == FlitTopology::Routing::kTable) {
    g.seed = gp.route_seed;  // the torus's distance ties
  } else if (r.has("route_seed")) {
    r.fail("route_seed", "applies to o1turn and valiant routing (per-packet draws) and to dor on a torus with "
                         "\"dateline\": \"booksim\" (distance ties), not to " + name);
  }
  if (g.routing == FlitTopology::Routing::kMinAdapt) {
    if (torus)
      r.fail("routing", "min_adapt: on the mesh only (a torus's escape channels would need dateline classes); "
                        "the torus takes dor, o1turn or valiant");
    if (p.vcs < 2) r.fail("vcs", std::to_string(p.vcs) + ": min_adapt needs at least 2 (VC 0 is the escape channel)");
    if (p.vc_allocator != FlitParams::VcAllocator::kGreedy)
      r.fail("vc_allocator", choice_name(p.vc_allocator) +
                                 ": min_adapt chooses its port while allocating a VC, with the greedy VC allocator only");
  }
  return g;
}

void set_routes(std::function<int(int, int, int)> next, const GridRouting& routing, FlitTopology& t) {
  const std::vector<int>& node = t.endpoint_router;
  t.route.assign(size_t(t.routers()), std::vector<int>(node.size(), -1));
  for (int i = 0; i < t.routers(); ++i)
    for (size_t e = 0; e < node.size(); ++e) t.route[size_t(i)][e] = next(i, node[e], 0);  // X first, then Y
  t.routing = routing.routing;
  t.route_seed = routing.seed;
  if (routing.routing != FlitTopology::Routing::kTable) t.next_channel = std::move(next);
}

void set_grid_routes(const Grid& g, std::vector<std::array<int, 4>> ch, GridWay way, const GridRouting& routing,
                     FlitTopology& t) {
  auto next = [cols = g.cols, rows = g.rows, ch = std::move(ch), way](int i, int target, int order) {
    const int x = i % cols, y = i / cols, tx = target % cols, ty = target / cols;
    const int wx = way(x, tx, cols), wy = way(y, ty, rows);
    const int xdir = wx > 0 ? 0 : wx < 0 ? 1 : -1, ydir = wy > 0 ? 2 : wy < 0 ? 3 : -1;
    const int dir = order == 0 ? (xdir >= 0 ? xdir : ydir) : (ydir >= 0 ? ydir : xdir);
    return dir < 0 ? -1 : ch[size_t(i)][size_t(dir)];
  };
  set_routes(std::move(next), routing, t);
}

StatsNode grid_stats(const Grid& g, const std::vector<std::string>& endpoints, const GridRouting& routing) {
  // The size is summed over steps like every number before typed statistics (summary.json
  // unchanged); the placement is a label.
  StatsNode topology;
  topology.set(GridStats::cols, g.cols);
  topology.set(GridStats::rows, g.rows);
  StatsNode& placement = topology.child("placement");
  for (size_t e = 0; e < g.node.size(); ++e)
    placement.set(stats::Label<std::vector<int64_t>>{endpoints[e].c_str(), "", "grid coordinate (column, row) of this endpoint"}, {g.node[e] % g.cols, g.node[e] / g.cols});
  if (routing.routing != FlitTopology::Routing::kTable) {  // dor adds nothing: summaries stay as they were
    topology.set(GridStats::routing, choice_name(routing.name));
    if (routing.routing != FlitTopology::Routing::kMinAdapt)
      topology.set(GridStats::route_seed, int64_t(routing.seed));
  }
  return topology;
}

FlitTopology mesh_topology(const Grid& g, const GridRouting& routing) {
  const int cols = g.cols, rows = g.rows, R = g.routers();
  FlitTopology t;
  for (int i = 0; i < R; ++i) t.router_names.push_back(g.router_name(i));
  // Channel index per router and direction: 0 = +x, 1 = -x, 2 = +y, 3 = -y.
  std::vector<std::array<int, 4>> ch(size_t(R), {-1, -1, -1, -1});
  const int dx[4] = {1, -1, 0, 0}, dy[4] = {0, 0, 1, -1};
  for (int i = 0; i < R; ++i)
    for (int d = 0; d < 4; ++d) {
      const int x = i % cols + dx[d], y = i / cols + dy[d];
      if (x < 0 || x >= cols || y < 0 || y >= rows) continue;
      ch[size_t(i)][size_t(d)] = int(t.channels.size());
      t.channels.push_back({i, y * cols + x, false});
    }
  t.endpoint_router = g.node;
  set_grid_routes(g, std::move(ch), [](int a, int b, int) { return b > a ? 1 : b < a ? -1 : 0; }, routing, t);
  return t;
}

MeshNoc::MeshNoc(sc_core::sc_module_name name, const NocContext& ctx) : FlitNoc(name, ctx) {
  JsonReader r(ctx.params, ctx.config_file, ctx.params_field);
  GridParams gp;
  grid_param_table().read(gp, r);
  Grid g = grid_size(gp, endpoint_count(), 1);
  const FlitParams p = read_flit_params(r, FlitParams{});
  const GridRouting routing = grid_routing(r, gp, p, false);
  read_grid_placement(r, ctx.endpoints, g);
  r.finish();
  build(mesh_topology(g, routing), p, grid_stats(g, ctx.endpoints, routing));
}

}  // namespace ahbm
