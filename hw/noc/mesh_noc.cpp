#include "hw/noc/mesh_noc.h"

#include <array>
#include <cmath>

namespace ahbm {

NocEstimate MeshNoc::estimate(const NocEstimateInput& in) { return flit_estimate(in, FlitParams{}, 2); }

Grid read_grid_size(JsonReader& r, int endpoints, int min_nodes) {
  const int n = std::max(min_nodes, endpoints);
  const int cols0 = int(std::ceil(std::sqrt(double(n))));
  Grid g;
  g.cols = int(r.integer("cols", cols0, 1, 64));
  g.rows = int(r.integer("rows", (n + g.cols - 1) / g.cols, 1, 64));
  return g;
}

void read_grid_placement(JsonReader& r, const std::vector<std::string>& endpoints, Grid& g) {
  const int cols = g.cols, rows = g.rows;
  g.node = read_placement(r, endpoints, cols * rows, [&](const Json& v, std::string& err) {
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

StatsNode grid_stats(const Grid& g, const std::vector<std::string>& endpoints) {
  // The size is summed over steps like every number before typed statistics (summary.json
  // unchanged); the placement is a label.
  StatsNode topology;
  topology.set(stats::Sum<int64_t>{"cols"}, g.cols);
  topology.set(stats::Sum<int64_t>{"rows"}, g.rows);
  StatsNode& placement = topology.child("placement");
  for (size_t e = 0; e < g.node.size(); ++e)
    placement.set(stats::Label<std::vector<int64_t>>{endpoints[e].c_str()}, {g.node[e] % g.cols, g.node[e] / g.cols});
  return topology;
}

MeshNoc::MeshNoc(sc_core::sc_module_name name, const NocContext& ctx) : FlitNoc(name, ctx) {
  JsonReader r(ctx.params, ctx.config_file, ctx.params_field);
  // Default: the most nearly square mesh with one node per endpoint.
  Grid g = read_grid_size(r, endpoint_count(), 1);
  const int cols = g.cols, rows = g.rows;
  const FlitParams p = read_flit_params(r, FlitParams{});
  read_grid_placement(r, ctx.endpoints, g);
  const std::vector<int>& node = g.node;
  r.finish();

  FlitTopology t;
  const int R = g.routers();
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
  t.endpoint_router = node;
  t.route.assign(size_t(R), std::vector<int>(node.size(), -1));
  for (int i = 0; i < R; ++i)
    for (size_t e = 0; e < node.size(); ++e) {
      const int x = i % cols, y = i / cols, tx = node[e] % cols, ty = node[e] / cols;
      const int dir = tx > x ? 0 : tx < x ? 1 : ty > y ? 2 : ty < y ? 3 : -1;  // X first, then Y
      t.route[size_t(i)][e] = dir < 0 ? -1 : ch[size_t(i)][size_t(dir)];
    }
  build(std::move(t), p, grid_stats(g, ctx.endpoints));
}

}  // namespace ahbm
