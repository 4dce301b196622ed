#pragma once
// `crossbar`: one switch with an input port and an output port per endpoint. Each output
// serialises the flits sent to it at one flit per cycle (the link width); inputs competing for an
// output are arbitrated round-robin. Tree multicast replicates a flit to several outputs in the
// switch; source replication sends one copy per destination through the source's input link.
#include "hw/noc/flit_noc.h"

namespace ahbm {

class CrossbarNoc : public FlitNoc {
 public:
  CrossbarNoc(sc_core::sc_module_name name, const NocContext& ctx);
  static std::vector<HwParam> params();
  // One router between any two endpoints.
  static NocEstimate estimate(const NocEstimateInput& in);
};

}  // namespace ahbm
