#pragma once
// `mesh`: a cols x rows 2D mesh of input-queued VC routers, dimension-order (XY) routing,
// wormhole switching with credit-based flow control; XY tree multicast or source replication.
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
// "placement": endpoint -> [x, y] or a row-major node index (read_placement's defaults).
void read_grid_placement(JsonReader& r, const std::vector<std::string>& endpoints, Grid& g);
// The size and placement reported under noc.topology.
StatsNode grid_stats(const Grid& g, const std::vector<std::string>& endpoints);

class MeshNoc : public FlitNoc {
 public:
  MeshNoc(sc_core::sc_module_name name, const NocContext& ctx);
  // Two routers: the typical CUBE-to-CUBE distance of the default placement.
  static NocEstimate estimate(const NocEstimateInput& in);
};

}  // namespace ahbm
