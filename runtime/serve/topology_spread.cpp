// Co-located (placement spread): prefill and decode on every group; the whole chip is one pool.
#include "runtime/serve/topology.h"

namespace ahbm::serve {

namespace {

class Spread final : public Topology {
 public:
  TopologyLayout layout(const Workload&, const HwConfig& hw, const std::string&) const override {
    return {{{"chip", hw.groups, "chip"}}, 1, false};
  }
};

}  // namespace

TopologyEntry spread_topology() {
  return {"spread", "co-located: every workflow's steps on the whole chip (KV head h on group h mod groups)",
          std::make_shared<Spread>()};
}

}  // namespace ahbm::serve
