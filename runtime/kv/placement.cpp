#include "runtime/kv/placement.h"

#include <algorithm>

namespace ahbm {

const char* placement_name(PrefixPlacement p) { return p == PrefixPlacement::interleaved ? "interleaved" : "contiguous"; }

const std::vector<std::string>& prefix_placement_names() {
  static const std::vector<std::string> names = {"contiguous", "interleaved"};
  return names;
}

int prefix_page_pe(PrefixPlacement p, int index, int pages, int pes) {
  if (p == PrefixPlacement::interleaved) return index % pes;
  // Contiguous and balanced: the first (pages % pes) PEs hold base + 1 pages.
  const int base = pages / pes, extra = pages % pes;
  const int big = extra * (base + 1);
  if (index < big) return index / (base + 1);
  // Pages past the planned prefix (none in practice) stay on the last PE rather than overflow.
  return base == 0 ? pes - 1 : std::min(pes - 1, extra + (index - big) / base);
}

PlacePage prefix_placer(PrefixPlacement p, int pages) {
  return [p, pages](const KvPageManager& kv, SeqId seq) {
    return prefix_page_pe(p, int(kv.table(seq).size()), pages, kv.pes());
  };
}

int BalancedPlacer::operator()(const KvPageManager& kv, SeqId) {
  int best = -1;
  for (int i = 0; i < kv.pes(); ++i) {
    const int pe = (cursor_ + i) % kv.pes();
    if (!kv.has_room(pe)) continue;
    if (best < 0 || kv.in_use(pe) < kv.in_use(best)) best = pe;
  }
  if (best < 0) best = cursor_;  // every pool is full: allocate() reports it
  cursor_ = (best + 1) % kv.pes();
  return best;
}

}  // namespace ahbm
