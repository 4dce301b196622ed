#pragma once
// `mesh`: a cols x rows 2D mesh of input-queued VC routers, dimension-order (XY) routing or
// O1TURN, Valiant or minimal adaptive with an escape VC ("routing"),
// wormhole switching with credit-based flow control; XY tree multicast or source replication.
#include <array>

#include "hw/noc/flit_noc.h"

namespace ahbm {

#define AHBM_GRID_ROUTINGS(V) V(dor, "dor") V(o1turn, "o1turn") V(valiant, "valiant") V(min_adapt, "min_adapt")
AHBM_CHOICE(GridRoutingName, AHBM_GRID_ROUTINGS)

// The parameters of a grid of routers (mesh, torus, cmesh, flatfly), a table like the hardware
// config's (flit_params.h has the flit-level ones all these models share).
#define AHBM_PARAMS_NOC_GRID(X)                                                                                 \
  X(int, cols, 0, between(0, 64), "routers",                                                                    \
    "grid columns; 0 = the most nearly square grid with N nodes: ceil(sqrt(N)) (mesh, torus: one node per endpoint; cmesh, flatfly: ceil(endpoints / concentration))", \
    "as square as the node count allows: the shortest average distance")                                        \
  X(int, rows, 0, between(0, 64), "routers", "grid rows; 0 = ceil(N / cols)", "as for cols")                    \
  X(GridRoutingName, routing, GridRoutingName::dor, one_of_names(), "name",                                     \
    "unicast routing: dor (dimension order), o1turn, valiant, min_adapt (not on the torus); docs/noc.md, Routing", \
    "dimension order: minimal and deadlock-free with the fewest VCs")                                           \
  X(uint64_t, route_seed, 1, between(0, double(int64_t(1) << 62)), "seed",                                      \
    "o1turn, valiant only: seed of the per-packet draws", "any fixed seed: runs repeat")                         \
  X(Json, placement, Json::object(), checked_by("endpoint name -> [x, y] or a row-major node index"), "object", \
    "where endpoints sit; those it does not name keep the default",                                             \
    "mesh, torus: endpoint i on node i (row-major); cmesh: BookSim's CMesh::NodeToRouter; flatfly: endpoints i c .. i c + c - 1 on router i")
struct GridParams {
  AHBM_PARAMS_NOC_GRID(AHBM_HW_MEMBER)
};
const ParamTable<GridParams>& grid_param_table();

// Endpoints per router of a concentrated grid (cmesh: 4 by default, flatfly: 1).
#define AHBM_PARAMS_NOC_CONCENTRATION(X)                                                                        \
  X(int, concentration, 4, between(1, 64), "endpoints", "endpoints per router",                                 \
    "cmesh: 4, BookSim's (a 2 x 2 block of endpoints per router); flatfly: 1")
struct ConcentrationParams {
  AHBM_PARAMS_NOC_CONCENTRATION(AHBM_HW_MEMBER)
};
const ParamTable<ConcentrationParams>& concentration_param_table();

// The VC classes of a torus or ring (docs/noc.md, "Routing").
#define AHBM_TORUS_DATELINES(V) V(by_router, "router") V(wrap, "wrap") V(booksim, "booksim")
AHBM_CHOICE(TorusDateline, AHBM_TORUS_DATELINES)
#define AHBM_PARAMS_NOC_TORUS(X)                                                                                \
  X(TorusDateline, dateline, TorusDateline::by_router, one_of_names(), "name",                                  \
    "VC classes of dor routing: wrap (the upper half of the VCs after the wrap-around channel, injection into the lower half, a distance tie the positive way) or booksim (BookSim2's dim_order_torus: the half fixed as a packet enters a dimension, injection into every VC, a tie drawn per packet from route_seed); router = booksim on the booksim-iq router, else wrap", \
    "each router preset's own: classic as before, booksim-iq as BookSim2")
struct TorusParams {
  AHBM_PARAMS_NOC_TORUS(AHBM_HW_MEMBER)
};
const ParamTable<TorusParams>& torus_param_table();
// The dateline scheme a torus or ring runs with (`router` resolved by the preset); booksim applies
// to dor routing only (r.fail otherwise).
TorusDateline torus_dateline(JsonReader& r, const TorusParams& tp, const FlitParams& p, GridRoutingName routing);

// A cols x rows grid of routers, shared by the mesh and the torus.
struct Grid {
  int cols = 1, rows = 1;
  std::vector<int> node;  // router (row-major) of each endpoint
  int routers() const { return cols * rows; }
  std::string router_name(int i) const { return "r(" + std::to_string(i % cols) + "," + std::to_string(i / cols) + ")"; }
};
// The grid's size: `cols` and `rows` as given, 0 = the most nearly square grid with one node per
// endpoint (at least `min_nodes`).
Grid grid_size(const GridParams& p, int endpoints, int min_nodes);
// "placement": endpoint -> [x, y] or a row-major node index; endpoints it does not name sit on
// `defaults` (empty: read_placement's, endpoint i on node i mod nodes).
void read_grid_placement(JsonReader& r, const std::vector<std::string>& endpoints, Grid& g,
                         const std::vector<int>& defaults = {});
// Routing on a grid (mesh, torus): the routing and its seed (FlitTopology::Routing), checked
// against the VC count each needs: o1turn and valiant split the VCs of every dateline class
// into two classes.
struct GridRouting {
  FlitTopology::Routing routing = FlitTopology::Routing::kTable;
  GridRoutingName name = GridRoutingName::dor;
  uint64_t seed = 1;
};
// `seeded_ties`: dor draws per packet too (BookSim's torus ties), so route_seed applies to it.
GridRouting grid_routing(JsonReader& r, const GridParams& g, const FlitParams& p, bool torus, bool seeded_ties = false);
// The parameters of a grid model, for its registry entry: `before` (e.g. concentration), the
// grid's, then the flit-level ones.
std::vector<HwParam> grid_model_params(std::vector<HwParam> before = {});
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
  static std::vector<HwParam> params() { return grid_model_params(); }
  // Two routers: the typical CUBE-to-CUBE distance of the default placement.
  static NocEstimate estimate(const NocEstimateInput& in);
};

}  // namespace ahbm
