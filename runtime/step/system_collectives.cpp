#include "runtime/step/system_collectives.h"

namespace ahbm {

SystemCollectives::SystemCollectives(const HwConfig& hw, const std::string& hw_file, std::vector<int> ranks,
                                     NocRegistry registry, CollectiveAlgo all_reduce)
    : spec_(SystemNetworkSpec::from_config(hw, hw_file)), ranks_(std::move(ranks)), registry_(std::move(registry)),
      all_reduce_(all_reduce) {}

double SystemCollectives::ns(CollectiveKind kind, uint64_t bytes) {
  const auto key = std::make_pair(kind, bytes);
  auto it = timed_.find(key);
  if (it != timed_.end()) return it->second;
  CollectiveSpec c;
  c.kind = kind;
  c.algo = kind == CollectiveKind::all_reduce ? all_reduce_ : collective_algorithms(kind).front();
  c.ranks = ranks_;
  c.bytes = bytes;
  const CollectiveRun run = run_collectives(registry_, spec_, {c});
  const double t = run.results.at(0).time_ns();
  return timed_.emplace(key, t).first->second;
}

TpCollectives SystemCollectives::tensor_parallel() {
  TpCollectives tp;
  tp.tp = int(ranks_.size());
  tp.all_reduce_ns = [this](uint64_t bytes) { return ns(CollectiveKind::all_reduce, bytes); };
  tp.all_gather_ns = [this](uint64_t bytes) { return ns(CollectiveKind::all_gather, bytes); };
  tp.network = {{"model", spec_.model}, {"params", spec_.params}, {"chips", spec_.chips}, {"ranks", ranks_},
                {"all_reduce", collective_name(all_reduce_)}};
  return tp;
}

Json SystemCollectives::json() const {
  Json timed = Json::array();
  for (const auto& [key, t] : timed_)
    timed.push_back({{"collective", collective_name(key.first)}, {"bytes", key.second}, {"time_ns", t}});
  return {{"model", spec_.model}, {"params", spec_.params}, {"chips", spec_.chips}, {"ranks", ranks_},
          {"all_reduce", collective_name(all_reduce_)}, {"timed", timed}};
}

}  // namespace ahbm
