#pragma once
// `flatfly`: a 2D flattened butterfly (Kim, Balfour and Dally, MICRO 2007; BookSim's flatfly):
// cols x rows routers, each linked directly to every other router of its row and of its column,
// `concentration` endpoints per router. Dimension-order routing takes at most one hop per
// dimension (X, then Y), so a route crosses at most 3 routers and the channel dependencies
// (X channels before Y channels) are acyclic; O1TURN, Valiant and min_adapt as on the mesh.
#include "hw/noc/flit_noc.h"

namespace ahbm {

class FlatFlyNoc : public FlitNoc {
 public:
  FlatFlyNoc(sc_core::sc_module_name name, const NocContext& ctx);
  static std::vector<HwParam> params();
  // Two routers, as the mesh's.
  static NocEstimate estimate(const NocEstimateInput& in);
};

}  // namespace ahbm
