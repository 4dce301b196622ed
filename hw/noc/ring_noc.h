#pragma once
// `ring`: a bidirectional ring of input-queued VC routers, shortest-direction routing, wormhole
// switching with credit-based flow control. A dateline on each direction (the wrap-around
// channel) moves packets to the upper half of the VCs, which breaks the cyclic channel
// dependency of a ring; hence an even VC count.
#include "hw/noc/flit_noc.h"

namespace ahbm {

// The ring's own parameters (flit_params.h has the flit-level ones it shares).
#define AHBM_PARAMS_NOC_RING(X)                                                                                 \
  X(int, nodes, 0, between(0, 1024), "routers", "ring nodes; 0 = one per endpoint (at least 2)",               \
    "one router per endpoint")                                                                                  \
  X(Json, placement, Json::object(), checked_by("endpoint name -> node index"), "object",                       \
    "where endpoints sit; those it does not name keep the default", "endpoint i on node i")
struct RingParams {
  AHBM_PARAMS_NOC_RING(AHBM_HW_MEMBER)
};

class RingNoc : public FlitNoc {
 public:
  RingNoc(sc_core::sc_module_name name, const NocContext& ctx);
  static std::vector<HwParam> params();
  // Two routers: the typical CUBE-to-CUBE distance of the default placement.
  static NocEstimate estimate(const NocEstimateInput& in);
};

}  // namespace ahbm
