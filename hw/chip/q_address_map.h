#pragma once
// The Q source's address window: the run's Q tiles in send order, each tile's rows in its job's
// storage type, back to back from byte 0, then the X chunks of its w_stationary weight GEMMs
// (SimShared::gemm.x_chunks; a run has one or the other): entry tiles.size() + c is chunk c.
// The host writes entry `gt` as one transaction of bytes(gt) bytes at address(gt); the Q source
// decodes the address back to the entry.
#include <cstdint>
#include <vector>

#include "hw/common/sim/sim_shared.h"

namespace ahbm {

class QAddressMap {
 public:
  // For the run's tiles (SimShared::begin_run has been called).
  void build(const SimShared& sh);
  uint64_t address(int tile) const { return start_[size_t(tile)]; }
  uint64_t bytes(int tile) const { return start_[size_t(tile) + 1] - start_[size_t(tile)]; }
  // The tile whose first byte is `addr`, or -1.
  int tile_at(uint64_t addr) const;
  // The window's last byte address (0 when there are no tiles).
  uint64_t last() const { return start_.back() ? start_.back() - 1 : 0; }

 private:
  std::vector<uint64_t> start_{0};  // per tile, then the end
};

}  // namespace ahbm
