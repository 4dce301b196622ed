#pragma once
// Inter-CUBE reduction of one KV-head group. The CUBEs form a tree rooted at CUBE 0, shaped by
// the link topology:
//   chain: c -> c-1            (3 sequential hops for 4 CUBEs)
//   ring:  bidirectional ring, each CUBE forwards towards CUBE 0 the short way round
//   tree:  binary tree: c -> c - lowbit(c)   (log2 levels; 1->0, 3->2, 2->0 for 4 CUBEs)
// A Q tile that only some CUBEs work on (QTile::pes) reduces over those CUBEs only: the same
// topology laid over the participants in ascending order, rooted at the lowest one.
// Every CUBE waits for its own state and its children's, merges them (one merge per extra
// state), and sends the result up its link (serialisation at the link bandwidth plus latency).
// The root normalises and returns O to the host over the NoC. Values are merged own-state
// first, then children in index order, independent of arrival times.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hw/common/sim_shared.h"
#include "hw/cube/cube_reducer.h"
#include "hw/noc/noc.h"

namespace ahbm {

// parent[c] for each CUBE (-1 for the root, CUBE 0).
std::vector<int> reduction_parents(const std::string& topology, int cubes);

class ReductionNetwork : public sc_core::sc_module {
 public:
  ReductionNetwork(sc_core::sc_module_name name, SimShared& sh, const std::string& path, int group, int cubes,
                   Noc& noc, std::vector<int> cube_endpoints, int host_endpoint);
  // A state for `tile` arriving at CUBE `to` from CUBE `from` (from == to: the CUBE's own).
  void submit(int to, int from, int tile, StatePtr state);
  const std::vector<int>& parents() const { return parents_; }
  const std::vector<sc_core::sc_time>& link_busy() const { return link_busy_; }

  // Back to the state of a new module for the next run (the chip is reused: simulate.h).
  void begin_run();

 private:
  struct Arrival {
    int from, tile;
    StatePtr state;
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
  std::string path_;
  int group_;
  Noc& noc_;
  std::vector<int> cube_endpoints_;
  int host_endpoint_;
  std::vector<int> parents_;
  std::vector<std::unique_ptr<TimedQueue<Arrival>>> inbox_;
  std::vector<std::map<int, std::map<int, StatePtr>>> pending_;  // per CUBE: tile -> from -> state
  std::vector<ServerPool> uplink_;  // link c -> parent[c]
  std::vector<sc_core::sc_time> link_busy_;
  std::vector<int> link_component_, node_component_, sig_link_busy_;
};

}  // namespace ahbm
