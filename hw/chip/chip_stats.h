#pragma once
// The layout of a chip's statistics tree (Chip::report_stats) and the typed keys its readers
// use. The root holds the list `groups` (one element per active KV-head group, named
// group<g>: its label, KV mover counters, the list `cubes` and the list `links`) and the NoC
// (child `noc`) and the host link (child `host`). Each CUBE element holds its counters, its Q buffer and reducer, and the list
// `pes` (PE and HBM slice counters in one node per PE).
#include "hw/chip/host.h"
#include "hw/common/observe/stats.h"
#include "hw/cube/cube.h"
#include "hw/group/group.h"
#include "hw/group/kv_mover.h"
#include "hw/link/reduction_network.h"
#include "hw/noc/noc.h"
#include "hw/pe/hbm_slice.h"
#include "hw/pe/pe.h"

namespace ahbm {

struct ChipStats {
  static constexpr const char* groups = "groups";         // list, elements group<g>
  static constexpr const char* noc = "noc";               // child: the NoC model's counters
  static constexpr const char* host = "host";             // child: the host link's counters (HostStats)
  // A group element (Group::report_stats, GroupStats): its index, its list of CUBEs.
  static constexpr stats::Label<int64_t> group = GroupStats::group;
  static constexpr const char* cubes = GroupStats::cubes;
};

// Calls f(group index, PE node) for every PE of a chip tree: group by group, CUBE by CUBE.
template <class F>
void for_each_pe(const StatsNode& chip, F&& f) {
  for (const StatsNode& g : chip.at(ChipStats::groups).children()) {
    const int group = int(g.get(ChipStats::group));
    for (const StatsNode& c : g.at(ChipStats::cubes).children())
      for (const StatsNode& pe : c.at(CubeStats::pes).children()) f(group, pe);
  }
}

}  // namespace ahbm
