#include "runtime/step/system_collectives.h"

#include "hw/system/packet_noc.h"

namespace ahbm {

namespace {

// The links' bytes and busy time and the link energy a run's network reported (PacketNoc's
// statistics; a network model that reports none of them: nothing).
NetworkUse network_use(const StatsNode& net) {
  using S = PacketNocStats;
  NetworkUse u;
  if (net.has(S::energy_pj)) u.energy_pj = net.get(S::energy_pj);
  if (const StatsNode* links = net.find(S::links))
    for (const StatsNode& l : links->children()) {
      NetworkUse::Link& to = u.links[l.name()];
      if (l.has(S::bytes)) to.bytes = l.get(S::bytes);
      if (l.has(S::busy_ns)) to.busy_ns = l.get(S::busy_ns);
    }
  return u;
}

}  // namespace

SystemCollectives::SystemCollectives(const HwConfig& hw, const std::string& hw_file, const Parallelism& split,
                                     const NocRegistry* registry)
    : spec_(SystemNetworkSpec::from_config(hw, hw_file)), split_(split),
      registry_(registry ? *registry : system_network_registry()) {}

std::vector<int> SystemCollectives::group(int stage) const {
  std::vector<int> chips(size_t(split_.tp));
  for (int r = 0; r < split_.tp; ++r) chips[size_t(r)] = stage * split_.tp + r;
  return chips;
}

const SystemCollectives::Timed& SystemCollectives::timed(CollectiveKind kind, int stage, uint64_t bytes) {
  const Key key{kind, stage, bytes};
  auto it = timed_.find(key);
  if (it != timed_.end()) return it->second;
  std::vector<CollectiveSpec> specs;
  if (kind == CollectiveKind::p2p) {
    // Every rank's rows go to its counterpart at once: the sends share the links they have in common.
    const std::vector<int> from = group(stage), to = group(stage + 1);
    for (size_t r = 0; r < from.size(); ++r) {
      CollectiveSpec c;
      c.kind = kind;
      c.algo = collective_algorithms(kind).front();
      c.ranks = {from[r], to[r]};
      c.bytes = bytes;
      specs.push_back(c);
    }
  } else {
    CollectiveSpec c;
    c.kind = kind;
    c.algo = kind == CollectiveKind::all_reduce ? split_.all_reduce : collective_algorithms(kind).front();
    c.ranks = group(stage);
    c.bytes = bytes;
    specs.push_back(c);
  }
  const CollectiveRun run = run_collectives(registry_, spec_, specs);
  Timed t;
  // One collective: its own time; the sends: until the last has arrived (all start at 0).
  t.ns = kind == CollectiveKind::p2p ? run.end_ns : run.results.at(0).time_ns();
  t.use = network_use(run.network_stats);
  return timed_.emplace(key, std::move(t)).first->second;
}

double SystemCollectives::ns(CollectiveKind kind, uint64_t bytes, int stage) { return timed(kind, stage, bytes).ns; }

double SystemCollectives::stage_send_ns(int stage, uint64_t bytes) { return timed(CollectiveKind::p2p, stage, bytes).ns; }

const NetworkUse& SystemCollectives::use(CollectiveKind kind, int stage, uint64_t bytes) {
  return timed(kind, stage, bytes).use;
}

SplitCollectives SystemCollectives::bind() {
  SplitCollectives c;
  c.split = split_;
  c.all_reduce_ns = [this](int stage, uint64_t bytes) { return ns(CollectiveKind::all_reduce, bytes, stage); };
  c.all_gather_ns = [this](int stage, uint64_t bytes) { return ns(CollectiveKind::all_gather, bytes, stage); };
  c.send_ns = [this](int stage, uint64_t bytes) { return stage_send_ns(stage, bytes); };
  c.all_to_all_ns = [this](int stage, uint64_t bytes) { return ns(CollectiveKind::all_to_all, bytes, stage); };
  c.use = [this](CollectiveKind kind, int stage, uint64_t bytes) -> const NetworkUse& { return use(kind, stage, bytes); };
  c.network = {{"model", spec_.model}, {"params", spec_.params}, {"chips", spec_.chips},
               {"ranks", group(0)}, {"all_reduce", collective_name(split_.all_reduce)}};
  return c;
}

}  // namespace ahbm
