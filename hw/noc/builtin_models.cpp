// The one list of NoC models built into ahbm-sim. Adding a model: its own source file in this
// folder plus one line here.
#include "hw/noc/cmesh_noc.h"
#include "hw/noc/crossbar_noc.h"
#include "hw/noc/flatfly_noc.h"
#include "hw/noc/ideal_noc.h"
#include "hw/noc/mesh_noc.h"
#include "hw/noc/ring_noc.h"
#include "hw/noc/torus_noc.h"

namespace ahbm {

void register_builtin_noc_models(NocRegistry& r) {
  r.add(noc_model<IdealNoc>("ideal", "fixed latency (params.latency_ns, default 10), unlimited bandwidth"));
  r.add(noc_model<CrossbarNoc>("crossbar", "one switch, per-output serialisation at the flit width, round-robin input arbitration"));
  r.add(noc_model<MeshNoc>("mesh", "2D mesh, XY (or O1TURN, Valiant, min-adaptive) routing, VC routers, wormhole, credit flow control, tree/source multicast"));
  r.add(noc_model<CMeshNoc>("cmesh", "concentrated 2D mesh (params.concentration endpoints per router, default 4), routing and routers as the mesh's"));
  r.add(noc_model<FlatFlyNoc>("flatfly", "2D flattened butterfly (every router linked to its whole row and column), routing and routers as the mesh's"));
  r.add(noc_model<TorusNoc>("torus", "2D torus (k-ary 2-cube), XY (or O1TURN, Valiant) routing the shorter way, dateline VCs per dimension, wormhole"));
  r.add(noc_model<RingNoc>("ring", "bidirectional ring, shortest direction, dateline VCs, wormhole, credit flow control"));
}

}  // namespace ahbm
