#pragma once
// `ring`: a bidirectional ring of input-queued VC routers, shortest-direction routing, wormhole
// switching with credit-based flow control. A dateline on each direction (the wrap-around
// channel) moves packets to the upper half of the VCs, which breaks the cyclic channel
// dependency of a ring; hence an even VC count.
#include "hw/noc/flit_noc.h"

namespace ahbm {

class RingNoc : public FlitNoc {
 public:
  RingNoc(sc_core::sc_module_name name, const NocContext& ctx);
  // Two routers: the typical CUBE-to-CUBE distance of the default placement.
  static NocEstimate estimate(const NocEstimateInput& in);
};

}  // namespace ahbm
