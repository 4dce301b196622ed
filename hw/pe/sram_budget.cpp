#include "hw/pe/sram_budget.h"

namespace ahbm {

SramBudget sram_budget(const PeConfig& pe, uint64_t q_rows, uint64_t d, uint64_t elem) {
  SramBudget b;
  b.q_tile = q_rows * d * elem;
  b.kv_slots = uint64_t(pe.dma.buffers) * 2 * uint64_t(pe.dma.kv_tile_tokens) * d * elem;
  b.scores = q_rows * uint64_t(pe.dma.kv_tile_tokens) * 4;
  b.state = q_rows * (d + 2) * 4;
  return b;
}

std::string SramBudget::describe() const {
  return "Q tile " + std::to_string(q_tile) + " B + KV slots " + std::to_string(kv_slots) + " B + scores " +
         std::to_string(scores) + " B + softmax state " + std::to_string(state) + " B = " +
         std::to_string(total()) + " B";
}

}  // namespace ahbm
