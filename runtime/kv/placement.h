#pragma once
// Where KV pages live (note §2.4, §3.1). The shared prefix is sequence-sharded across the PEs
// of a KV-head group: `contiguous` gives each PE one run of consecutive pages (balanced, the
// first pages % pes PEs one page more), `interleaved` deals page i to PE i % pes. Pages created
// after the fork (branch-private and the main agent's continuation) go to the PE with the
// fewest pages in use that still has room, ties broken round-robin after the previous pick, so
// private pages spread evenly and the busiest PE (the critical path of every step) stays low.
#include <string>
#include <vector>

#include "runtime/kv/page_manager.h"

namespace ahbm {

enum class PrefixPlacement { contiguous, interleaved };

const char* placement_name(PrefixPlacement p);
const std::vector<std::string>& prefix_placement_names();

// PE of page `index` of a prefix of `pages` pages.
int prefix_page_pe(PrefixPlacement p, int index, int pages, int pes);

// The prefix rule as a PlacePage: the sequence's table size is the page's index.
PlacePage prefix_placer(PrefixPlacement p, int pages);

// Least-loaded PE with room (round-robin among ties). Keeps its cursor between calls.
class BalancedPlacer {
 public:
  int operator()(const KvPageManager& kv, SeqId seq);
 private:
  int cursor_ = 0;
};

}  // namespace ahbm
