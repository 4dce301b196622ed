// Placement prefix_affinity: slices of num_kv_heads groups, each holding every KV head of its
// workflows once; a workflow is pinned at admission to the least-loaded slice it fits, and the
// slices step at once. Groups past the last whole slice idle (as under spread, where KV head h
// runs on group h mod groups). One slice is the whole chip, as spread.
#include <algorithm>

#include "runtime/serve/topology.h"

namespace ahbm::serve {

namespace {

class PrefixAffinity final : public Topology {
 public:
  TopologyLayout layout(const Workload& w, const HwConfig& hw, const std::string&) const override {
    const int kv_heads = w.scenario.model.num_kv_heads;
    const int slices = std::max(1, hw.groups / kv_heads);
    if (slices == 1) return {{{"chip", hw.groups, "chip"}}, 1, false};
    TopologyLayout l{{}, slices, false};
    for (int i = 0; i < slices; ++i) l.pools.push_back({"slice" + std::to_string(i), kv_heads, "slice"});
    return l;
  }
};

}  // namespace

TopologyEntry prefix_affinity_topology() {
  return {"prefix_affinity", "slices of num_kv_heads groups; each workflow pinned to the least-loaded slice it fits",
          std::make_shared<PrefixAffinity>()};
}

}  // namespace ahbm::serve
