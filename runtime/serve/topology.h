#pragma once
// Serve topologies (docs/serving.md): how the chip's KV-head groups are laid out in pools, each a
// chip of its own groups that runs steps one after another (its own KV pages and step runner),
// the pools running at once on one clock. co-located (placement spread): the whole chip, one
// pool. prefix_affinity: slices of num_kv_heads groups, each workflow pinned to one. pbd: the
// prefill pools, then the decode pools, with a buffer and KV transfers between them. One small
// class per topology, each in its own file (topology_<name>.cpp), registered by one line in
// builtin_topologies(); the workload names one by scheduler.placement, or pbd by its
// scheduler.pbd block.
#include <memory>
#include <string>
#include <vector>

#include "hw/common/config/hw_config.h"
#include "runtime/serve/registry.h"
#include "runtime/serve/workload.h"

namespace ahbm::serve {

struct PoolPlan {
  std::string name;  // chip | slice0, slice1, ... | prefill[N] | decode[N]
  int groups = 0;
  // The whole model's copy it holds (chip, slice, prefill, decode): pools naming the same copy
  // share its plan and its count of the operators; planned where the first of them is laid out.
  std::string model;
};

struct TopologyLayout {
  std::vector<PoolPlan> pools;
  int entry_pools = 0;     // pools [0, entry_pools) take new workflows
  bool pipelined = false;  // P-B-D: the entry pools prefill, the rest decode, a buffer between
};

class Topology {
 public:
  static constexpr const char* kKind = "topology";
  virtual ~Topology() = default;
  // The pools on `hw`'s groups for workload `w`; a layout that does not fit the chip is an
  // InputError naming the fields (`hw_file`'s and the workload's), their values and what fits.
  virtual TopologyLayout layout(const Workload& w, const HwConfig& hw, const std::string& hw_file) const = 0;
};

using TopologyEntry = PolicyEntry<Topology>;
using TopologyRegistry = Registry<TopologyEntry>;

// spread (co-located), prefix_affinity (slices), pbd.
TopologyRegistry builtin_topologies();

// The topology `w` names: "pbd" with a scheduler.pbd block, else its scheduler.placement.
std::string topology_name(const Workload& w);

}  // namespace ahbm::serve
