#include "hw/chip/q_address_map.h"

#include <algorithm>

namespace ahbm {

void QAddressMap::build(const SimShared& sh) {
  start_.assign(1, 0);
  for (const TileRef& t : sh.tiles) {
    const AttentionJob& job = sh.jobs[size_t(t.job)];
    start_.push_back(start_.back() + q_tile_bytes(job, t.rows()));
  }
  for (const GemmXChunk& c : sh.gemm.x_chunks) start_.push_back(start_.back() + c.bytes);
}

int QAddressMap::tile_at(uint64_t addr) const {
  const auto it = std::lower_bound(start_.begin(), start_.end() - 1, addr);
  return it != start_.end() - 1 && *it == addr ? int(it - start_.begin()) : -1;
}

}  // namespace ahbm
