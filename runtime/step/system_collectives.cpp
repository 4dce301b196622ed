#include "runtime/step/system_collectives.h"

namespace ahbm {

SystemCollectives::SystemCollectives(const HwConfig& hw, const std::string& hw_file, const Parallelism& split,
                                     const NocRegistry* registry, CollectiveAlgo all_reduce)
    : spec_(SystemNetworkSpec::from_config(hw, hw_file)), split_(split),
      registry_(registry ? *registry : system_network_registry()), all_reduce_(all_reduce) {}

std::vector<int> SystemCollectives::group(int stage) const {
  std::vector<int> chips(size_t(split_.tp));
  for (int r = 0; r < split_.tp; ++r) chips[size_t(r)] = stage * split_.tp + r;
  return chips;
}

double SystemCollectives::ns(CollectiveKind kind, uint64_t bytes, int stage) {
  const auto key = std::make_tuple(kind, stage, bytes);
  auto it = timed_.find(key);
  if (it != timed_.end()) return it->second;
  CollectiveSpec c;
  c.kind = kind;
  c.algo = kind == CollectiveKind::all_reduce ? all_reduce_ : collective_algorithms(kind).front();
  c.ranks = group(stage);
  c.bytes = bytes;
  const CollectiveRun run = run_collectives(registry_, spec_, {c});
  return timed_.emplace(key, run.results.at(0).time_ns()).first->second;
}

double SystemCollectives::stage_send_ns(int stage, uint64_t bytes) {
  const auto key = std::make_pair(stage, bytes);
  auto it = sends_.find(key);
  if (it != sends_.end()) return it->second;
  // Every rank's rows go to its counterpart at once: the sends share the links they have in common.
  std::vector<CollectiveSpec> sends;
  const std::vector<int> from = group(stage), to = group(stage + 1);
  for (size_t r = 0; r < from.size(); ++r) {
    CollectiveSpec c;
    c.kind = CollectiveKind::p2p;
    c.algo = collective_algorithms(c.kind).front();
    c.ranks = {from[r], to[r]};
    c.bytes = bytes;
    sends.push_back(c);
  }
  const CollectiveRun run = run_collectives(registry_, spec_, sends);
  return sends_.emplace(key, run.end_ns).first->second;
}

SplitCollectives SystemCollectives::bind() {
  SplitCollectives c;
  c.split = split_;
  c.all_reduce_ns = [this](int stage, uint64_t bytes) { return ns(CollectiveKind::all_reduce, bytes, stage); };
  c.all_gather_ns = [this](int stage, uint64_t bytes) { return ns(CollectiveKind::all_gather, bytes, stage); };
  c.send_ns = [this](int stage, uint64_t bytes) { return stage_send_ns(stage, bytes); };
  c.network = {{"model", spec_.model}, {"params", spec_.params}, {"chips", spec_.chips},
               {"ranks", group(0)}, {"all_reduce", collective_name(all_reduce_)}};
  return c;
}

}  // namespace ahbm
