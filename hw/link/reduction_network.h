#pragma once
// Inter-CUBE reduction of one KV-head group. The CUBEs form a tree rooted at CUBE 0, shaped by
// the link topology:
//   chain: c -> c-1            (3 sequential hops for 4 CUBEs)
//   ring:  bidirectional ring, each CUBE forwards towards CUBE 0 the short way round
//   tree:  binary tree: c -> c - lowbit(c)   (log2 levels; 1->0, 3->2, 2->0 for 4 CUBEs)
// A Q tile that only some CUBEs work on (QTile::pes) reduces over those CUBEs only: the same
// topology laid over the participants in ascending order, rooted at the lowest one.
// Every CUBE waits for its own state and its children's, merges them (one merge per extra
// state, booked on the node's merge units: the link port's own unit, or the CUBE reducer's
// units under cube.reducer.inter_cube = shared), and sends the result up its link
// (serialisation at the link bandwidth plus latency).
// The root normalises and returns O to the host over the NoC. Values are merged own-state
// first, then children in index order, independent of arrival times. Each CUBE's reducer
// sends its state into the CUBE's node through `node_in[cube]`.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hw/common/contract/interfaces.h"
#include "hw/common/sim/sim_shared.h"
#include "hw/common/observe/stats.h"
#include "hw/noc/noc.h"

namespace ahbm {

// parent[c] for each CUBE (-1 for the root, CUBE 0).
std::vector<int> reduction_parents(ReductionTopology topology, int cubes);

// Counters of the inter-CUBE links (ReductionNetwork::report_stats): one element of the list
// `links` per link, named cube<from>_to_cube<to>.
struct LinkStats {
  static constexpr const char* list = "links";
  static constexpr stats::Label<uint64_t> from{"from", "", "child CUBE"};
  static constexpr stats::Label<uint64_t> to{"to", "", "parent CUBE"};
  static constexpr stats::BusyNs busy{"busy_ns", "ns", "link busy"};
  static constexpr stats::Sum<uint64_t> bytes{"bytes", "bytes", "state bytes sent child to parent"};
  // In the group's node: element-ops of the inter-CUBE merges and the root's normalisation
  // (on the CUBE reducers' units or their link-port units: hw/chip/energy.h charges them as reducer work).
  static constexpr stats::Sum<uint64_t> vector_ops{"xcube_vector_ops", "element-ops", "vector element-ops of the inter-CUBE merges"};
};

class ReductionNetwork : public sc_core::sc_module, public StatsProvider {
 public:
  // Adds the list of links to the group's node.
  void report_stats(StatsNode& group_node) const override;
  // The network of KV-head group `group`'s `cubes` CUBEs (NoC endpoints `cube_endpoints`), returning O to
  // `host_endpoint`. Its links are named after the group that holds it; the merges of node c
  // are recorded on component `node_components[c]` (CUBE c's reducer, where they run).
  ReductionNetwork(sc_core::sc_module_name name, SimShared& sh, int group, int cubes, Noc& noc,
                   std::vector<int> cube_endpoints, int host_endpoint, const std::vector<std::string>& node_components);
  // One input per CUBE: the CUBE's own merged state for a tile.
  std::vector<std::unique_ptr<sc_core::sc_export<StateSink>>> node_in;
  const std::vector<int>& parents() const { return parents_; }
  const std::vector<sc_core::sc_time>& link_busy() const { return link_busy_; }
  // The merge units node `cube` merges arriving states and normalises on: its own unit by
  // default (cube.reducer.inter_cube = own_unit); Group hands it the CUBE reducer's units when
  // they are shared, so those merges contend with the intra-CUBE ones.
  void use_merge_units(int cube, ServerPool& units) { node_units_[size_t(cube)] = &units; }

  // Back to the state of a new module for the next run (the chip is reused: simulate.h).
  void begin_run();

 private:
  struct Arrival {
    int from, tile;
    StatePtr state;
  };
  // CUBE `cube`'s own state enters its node.
  struct NodeInput : StateSink {
    NodeInput(ReductionNetwork& n, int c) : net(n), cube(c) {}
    void send_state(int, int tile, StatePtr state, int) override { net.inbox_[size_t(cube)]->push({cube, tile, std::move(state)}); }
    ReductionNetwork& net;
    int cube;
  };
  struct TileTree {
    std::vector<int> members;                 // participating CUBEs, ascending
    std::vector<int> parent;                  // per CUBE, -1 for the root and non-members
    std::vector<std::vector<int>> children;   // per CUBE
  };
  TileTree tree_of(const TileRef& t) const;
  void node_loop(int cube);
  std::string describe_wait() const;  // for the stall watchdog

  SimShared& sh_;
  Noc& noc_;
  std::vector<int> cube_endpoints_;
  int host_endpoint_;
  std::vector<int> parents_;
  std::vector<std::unique_ptr<TimedQueue<Arrival>>> inbox_;
  std::vector<std::unique_ptr<NodeInput>> inputs_;
  std::vector<std::map<int, std::map<int, StatePtr>>> pending_;  // per CUBE: tile -> from -> state
  std::vector<ServerPool> uplink_;  // link c -> parent[c]
  std::vector<ServerPool> own_units_;        // per CUBE: the link port's merge unit
  std::vector<ServerPool*> node_units_;      // per CUBE: where its merges are booked
  // Books `duration` on node `cube`'s merge units from now, waits until it ends; its start.
  sc_core::sc_time run_on_units(int cube, const sc_core::sc_time& duration);
  std::vector<sc_core::sc_time> link_busy_;
  std::vector<uint64_t> link_bytes_;  // per child CUBE: bytes sent up its link
  uint64_t vector_ops_ = 0;           // inter-CUBE merges and normalisation, element-ops
  std::vector<int> link_component_, node_component_, sig_link_busy_;
};

}  // namespace ahbm
