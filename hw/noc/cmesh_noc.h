#pragma once
// `cmesh`: a concentrated mesh (BookSim's cmesh): a cols x rows 2D mesh whose every router
// serves `concentration` endpoints, each with its own injection and ejection port; routing,
// multicast and router micro-architecture as the mesh's.
#include "hw/noc/flit_noc.h"

namespace ahbm {

// The router of endpoint i by default: with a square concentration c = s x s (BookSim's
// CMesh::NodeToRouter) the endpoints form a (cols * s) x (rows * s) grid, row-major, and each
// s x s block shares a router; otherwise endpoints i*c .. i*c + c - 1 share router i. Endpoints
// beyond c x routers wrap around.
int cmesh_router(int endpoint, int concentration, int cols, int rows);

class CMeshNoc : public FlitNoc {
 public:
  CMeshNoc(sc_core::sc_module_name name, const NocContext& ctx);
  static std::vector<HwParam> params();
  // Two routers, as the mesh's.
  static NocEstimate estimate(const NocEstimateInput& in);
};

}  // namespace ahbm
