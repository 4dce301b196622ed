#pragma once
// The collectives a parallel split of a model needs, timed on the hardware config's system
// network (hw/system/collectives.h, docs/system.md): each collective of a given kind, stage and
// size runs once on an idle network, in a simulation of its own, and its time is kept (the chips
// of a split run the same collectives every layer of every step, so a run asks for few sizes).
#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "hw/system/collectives.h"
#include "hw/system/system_network.h"
#include "runtime/model/parallel.h"
#include "runtime/step/model_steps.h"

namespace ahbm {

class SystemCollectives {
 public:
  // The chips of `split` on the system network of `hw` (chip = stage x tp + rank, parallel.h).
  // `registry`: the system networks by name (null: the built-in ones, system_network_registry()).
  // The all-reduce's algorithm is the split's (model.parallel.all_reduce).
  SystemCollectives(const HwConfig& hw, const std::string& hw_file, const Parallelism& split,
                    const NocRegistry* registry = nullptr);
  // Time of one collective of `bytes` (as collective_closed_form.h defines S) over the TP group
  // of pipeline stage `stage`.
  double ns(CollectiveKind kind, uint64_t bytes, int stage = 0);
  // Time for every rank of `stage` to send `bytes` to the same rank of stage + 1, all at once.
  double stage_send_ns(int stage, uint64_t bytes);
  // What the collective (p2p: the stage's sends) of `bytes` puts on the network, once timed.
  const NetworkUse& use(CollectiveKind kind, int stage, uint64_t bytes);
  // The functions a split model's steps call (model_steps.h), bound to this object.
  SplitCollectives bind();

 private:
  struct Timed {
    double ns = 0;
    NetworkUse use;
  };
  using Key = std::tuple<CollectiveKind, int, uint64_t>;  // kind (p2p: a stage's sends), stage, bytes
  const Timed& timed(CollectiveKind kind, int stage, uint64_t bytes);
  std::vector<int> group(int stage) const;  // the chips of a stage's TP group
  SystemNetworkSpec spec_;
  Parallelism split_;
  NocRegistry registry_;
  std::map<Key, Timed> timed_;
};

}  // namespace ahbm
