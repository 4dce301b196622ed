#pragma once
// Turns a scenario into the hardware job of one fan-out step (Policy A: replicated Q,
// stationary sequence-sharded KV): stacks every agent's new query rows into Q_combined, shards
// the shared prefix contiguously across the PEs of the KV-head group, and cuts the rows into Q
// tiles that fit the CUBE Q buffer and the PE SRAM.
#include <vector>

#include "hw/chip/job.h"
#include "hw/common/hw_config.h"
#include "runtime/scenario.h"

namespace ahbm {

struct Plan {
  AttentionJob job;
  // The KV sequence in global order (what the reference and the tensor dump use).
  std::vector<float> k_all, v_all;  // tokens x head_dim (empty in timing-only runs)
  std::vector<KvInfo> kv_info;
  std::vector<int> kv_pe;           // owning PE of each global token
};

// Largest Q tile (a multiple of the GEMM tile_m, or all rows) that fits the Q buffer and SRAM.
// Returns 0 when not even one GEMM tile of rows fits.
int auto_q_tile_rows(const HwConfig& hw, int rows, int head_dim);
std::vector<QTile> cut_q_tiles(int rows, int tile_rows);
// Balanced contiguous shards: the first (tokens % pes) PEs hold one token more.
std::vector<int> contiguous_shard_sizes(int tokens, int pes);

Plan plan_fanout(const Scenario& sc, const HwConfig& hw, uint64_t seed, bool values);

}  // namespace ahbm
