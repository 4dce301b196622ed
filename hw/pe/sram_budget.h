#pragma once
// What one PE keeps in its SRAM while it works on a Q tile; used by the runtime to size Q tiles
// and by the PE to refuse a tiling that cannot fit.
#include <cstdint>
#include <string>

#include "hw/common/config/hw_config.h"

namespace ahbm {

struct SramBudget {
  uint64_t q_tile = 0;      // rows x d x elem
  uint64_t kv_slots = 0;    // buffers x (K + V) tile
  uint64_t scores = 0;      // rows x kv_tile fp32
  uint64_t state = 0;       // rows x (d + 2) fp32
  uint64_t total() const { return q_tile + kv_slots + scores + state; }
  std::string describe() const;
};

SramBudget sram_budget(const PeConfig& pe, uint64_t q_rows, uint64_t head_dim, uint64_t elem_bytes);

}  // namespace ahbm
