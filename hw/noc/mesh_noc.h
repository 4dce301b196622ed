#pragma once
// `mesh`: a cols x rows 2D mesh of input-queued VC routers, dimension-order (XY) routing,
// wormhole switching with credit-based flow control; XY tree multicast or source replication.
#include "hw/noc/flit_noc.h"

namespace ahbm {

class MeshNoc : public FlitNoc {
 public:
  MeshNoc(sc_core::sc_module_name name, const NocContext& ctx);
  // Two routers: the typical CUBE-to-CUBE distance of the default placement.
  static NocEstimate estimate(const NocEstimateInput& in);
};

}  // namespace ahbm
