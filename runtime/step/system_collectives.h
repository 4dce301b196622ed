#pragma once
// The collectives a parallel split of a model needs, timed on the hardware config's system
// network (hw/system/collectives.h, docs/system.md): each collective of a given kind and size
// runs once on an idle network, in a simulation of its own, and its time is kept (the ranks of a
// split run the same collectives every layer of every step, so a run asks for few sizes).
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "hw/system/collectives.h"
#include "hw/system/system_network.h"
#include "runtime/step/model_steps.h"

namespace ahbm {

class SystemCollectives {
 public:
  // `ranks`: the chips of the group, in rank order. `registry`: the system networks by name.
  SystemCollectives(const HwConfig& hw, const std::string& hw_file, std::vector<int> ranks, NocRegistry registry,
                    CollectiveAlgo all_reduce = CollectiveAlgo::ring);
  // Time of one collective of `bytes` (as collective_closed_form.h defines S) over the ranks.
  double ns(CollectiveKind kind, uint64_t bytes);
  // The functions tensor parallelism's steps call (model_steps.h), bound to this object.
  TpCollectives tensor_parallel();
  // The network and algorithm, and every collective timed so far (summary.json).
  Json json() const;

 private:
  SystemNetworkSpec spec_;
  std::vector<int> ranks_;
  NocRegistry registry_;
  CollectiveAlgo all_reduce_;
  std::map<std::pair<CollectiveKind, uint64_t>, double> timed_;
};

}  // namespace ahbm
