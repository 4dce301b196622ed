#pragma once
// `mesh`: a cols x rows 2D mesh of input-queued VC routers, dimension-order (XY) routing or
// O1TURN, Valiant or minimal adaptive with an escape VC ("routing"),
// wormhole switching with credit-based flow control; XY tree multicast or source replication.
#include <array>

#include "hw/noc/flit_noc.h"

namespace ahbm {

// A cols x rows grid of routers, shared by the mesh and the torus. Its size: "cols" and "rows",
// by default the most nearly square grid with one node per endpoint (at least `min_nodes`).
struct Grid {
  int cols = 1, rows = 1;
  std::vector<int> node;  // router (row-major) of each endpoint
  int routers() const { return cols * rows; }
  std::string router_name(int i) const { return "r(" + std::to_string(i % cols) + "," + std::to_string(i / cols) + ")"; }
};
Grid read_grid_size(JsonReader& r, int endpoints, int min_nodes);
// "placement": endpoint -> [x, y] or a row-major node index; endpoints it does not name sit on
// `defaults` (empty: read_placement's, endpoint i on node i mod nodes).
void read_grid_placement(JsonReader& r, const std::vector<std::string>& endpoints, Grid& g,
                         const std::vector<int>& defaults = {});
// Routing on a grid (mesh, torus): "routing" = dor (default), o1turn, valiant or min_adapt
// (mesh only), "route_seed" for the per-packet draws (FlitTopology::Routing). Checks the VC
// count each needs: o1turn and valiant split the VCs of every dateline class into two classes.
struct GridRouting {
  FlitTopology::Routing routing = FlitTopology::Routing::kTable;
  std::string name = "dor";
  uint64_t seed = 1;
};
GridRouting read_grid_routing(JsonReader& r, const FlitParams& p, bool torus);
// The direction from a to b along one dimension of k routers: +1, -1 or 0 (there).
using GridWay = int (*)(int a, int b, int k);
// Fills t.route (`next` with order 0 towards each endpoint's router) and, when the routing is
// not dor, the routing hook (`next` itself: router, target router, order 0 = X first / 1 = Y
// first -> channel, -1 when there).
void set_routes(std::function<int(int, int, int)> next, const GridRouting& routing, FlitTopology& t);
// set_routes for a grid whose channels per
// router and direction (0 = +x, 1 = -x, 2 = +y, 3 = -y; -1 = none) are `ch`.
void set_grid_routes(const Grid& g, std::vector<std::array<int, 4>> ch, GridWay way, const GridRouting& routing,
                     FlitTopology& t);
// The counters grid_stats writes into a topology node.
struct GridStats {
  static constexpr stats::Sum<int64_t> cols{"cols", "routers", "grid columns (summed over steps)"};
  static constexpr stats::Sum<int64_t> rows{"rows", "routers", "grid rows (summed over steps)"};
  static constexpr stats::Label<std::string> routing{"routing", "", "routing function"};
  static constexpr stats::Label<int64_t> route_seed{"route_seed", "", "seed of the randomised routing"};
};
// The size and placement reported under noc.topology (and the routing when it is not dor).
StatsNode grid_stats(const Grid& g, const std::vector<std::string>& endpoints, const GridRouting& routing);

// The mesh's routers, channels (one each way between neighbours) and routes; endpoints on g.node.
FlitTopology mesh_topology(const Grid& g, const GridRouting& routing);

class MeshNoc : public FlitNoc {
 public:
  MeshNoc(sc_core::sc_module_name name, const NocContext& ctx);
  // Two routers: the typical CUBE-to-CUBE distance of the default placement.
  static NocEstimate estimate(const NocEstimateInput& in);
};

}  // namespace ahbm
