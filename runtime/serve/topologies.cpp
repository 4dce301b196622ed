// The built-in topologies: each defined in its own file (topology_<name>.cpp); one line here
// declares its entry (extern: defined in that file) and registers it, in the order names() lists.
#include "runtime/serve/topology.h"

namespace ahbm::serve {

TopologyRegistry builtin_topologies() {
  TopologyRegistry r;
  extern TopologyEntry spread_topology(); r.add(spread_topology());
  extern TopologyEntry prefix_affinity_topology(); r.add(prefix_affinity_topology());
  extern TopologyEntry pbd_topology(); r.add(pbd_topology());
  return r;
}

std::string topology_name(const Workload& w) { return w.scheduler.pbd ? "pbd" : w.scheduler.placement; }

}  // namespace ahbm::serve
