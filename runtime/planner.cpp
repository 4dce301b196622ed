#include "runtime/planner.h"

#include <cmath>

#include "hw/common/error.h"
#include "hw/pe/sram_budget.h"
#include "runtime/tensor_gen.h"

namespace ahbm {

int auto_q_tile_rows(const HwConfig& hw, int rows, int head_dim) {
  auto fits = [&](int r) {
    return sram_budget(hw.pe, uint64_t(r), uint64_t(head_dim), 4).total() <= hw.pe.sram_bytes &&
           uint64_t(r) * uint64_t(head_dim) * 4 <= hw.cube.q_buffer.bytes;
  };
  if (fits(rows)) return rows;
  const int step = hw.pe.gemm.tile_m;
  for (int r = (rows / step) * step; r >= step; r -= step)
    if (fits(r)) return r;
  return 0;
}

std::vector<QTile> cut_q_tiles(int rows, int tile_rows) {
  std::vector<QTile> tiles;
  for (int b = 0; b < rows; b += tile_rows) tiles.push_back({b, std::min(rows, b + tile_rows)});
  return tiles;
}

std::vector<int> contiguous_shard_sizes(int tokens, int pes) {
  std::vector<int> sizes(size_t(pes), tokens / pes);
  for (int p = 0; p < tokens % pes; ++p) ++sizes[size_t(p)];
  return sizes;
}

Plan plan_fanout(const Scenario& sc, const HwConfig& hw, uint64_t seed, bool values) {
  Plan plan;
  AttentionJob& job = plan.job;
  const int d = sc.model.head_dim;
  job.phase = "fanout";
  job.group = 0;
  job.head_dim = d;
  job.scale = float(1.0 / std::sqrt(double(d)));
  job.values = values;

  // Q_combined: agent after agent, each agent's new tokens at positions after the prefix.
  for (size_t a = 0; a < sc.agents.size(); ++a) {
    job.agents.push_back(sc.agents[a].name);
    for (int i = 0; i < sc.agents[a].new_tokens; ++i) {
      const int32_t pos = sc.shared_prefix_tokens + i;
      job.rows.push_back({int(a), pos});
      if (values) {
        job.q.resize(job.q.size() + size_t(d));
        tensor_row(seed, TensorKind::q, int64_t(a), pos, d, job.q.data() + job.q.size() - size_t(d));
      }
    }
  }

  // Shared prefix: sequence-sharded, contiguous, across the group's PEs.
  const int pes = hw.pes_per_group();
  const std::vector<int> sizes = contiguous_shard_sizes(sc.shared_prefix_tokens, pes);
  job.shards.resize(size_t(pes));
  int32_t pos = 0;
  for (int p = 0; p < pes; ++p) {
    KvShard& s = job.shards[size_t(p)];
    s.tokens = sizes[size_t(p)];
    for (int t = 0; t < s.tokens; ++t, ++pos) {
      const KvInfo info{kSharedOwner, pos};
      s.info.push_back(info);
      plan.kv_info.push_back(info);
      plan.kv_pe.push_back(p);
      if (values) {
        s.k.resize(s.k.size() + size_t(d));
        s.v.resize(s.v.size() + size_t(d));
        tensor_row(seed, TensorKind::k, kSharedOwner, pos, d, s.k.data() + s.k.size() - size_t(d));
        tensor_row(seed, TensorKind::v, kSharedOwner, pos, d, s.v.data() + s.v.size() - size_t(d));
        plan.k_all.insert(plan.k_all.end(), s.k.end() - d, s.k.end());
        plan.v_all.insert(plan.v_all.end(), s.v.end() - d, s.v.end());
      }
    }
  }

  const int rows = job.row_count();
  int tile_rows = hw.q_tile_rows;
  if (tile_rows == 0) {
    tile_rows = auto_q_tile_rows(hw, rows, d);
    if (tile_rows == 0)
      throw InputError("no Q tile fits: even " + std::to_string(hw.pe.gemm.tile_m) +
                       " rows (pe.gemm.tile_m) exceed pe.sram_bytes = " + std::to_string(hw.pe.sram_bytes) +
                       " or cube.q_buffer.bytes = " + std::to_string(hw.cube.q_buffer.bytes) + " (" +
                       sram_budget(hw.pe, uint64_t(hw.pe.gemm.tile_m), uint64_t(d), 4).describe() + ")");
  }
  job.tiles = cut_q_tiles(rows, std::min(tile_rows, rows));
  return plan;
}

}  // namespace ahbm
