#pragma once
// `torus`: a cols x rows 2D torus (k-ary 2-cube; rows = 1 is a ring) of input-queued VC routers,
// dimension-order routing (X, then Y, each the shorter way round), dateline VC classes per
// dimension, wormhole switching with credit-based flow control; tree multicast or source
// replication.
#include "hw/noc/flit_noc.h"

namespace ahbm {

class TorusNoc : public FlitNoc {
 public:
  TorusNoc(sc_core::sc_module_name name, const NocContext& ctx);
  static std::vector<HwParam> params();
  // Two routers, as the mesh's.
  static NocEstimate estimate(const NocEstimateInput& in);
};

}  // namespace ahbm
