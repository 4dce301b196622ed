#pragma once
// Closed-form cycle counts of the PE's engines. The PE waits exactly these times; the unit
// tests check the simulated cycles against them.
#include <cstdint>

#include "hw/common/hw_config.h"
#include "hw/common/timing.h"
#include "hw/common/storage_type.h"

namespace ahbm {

// GEMM engine: an (m x k) by (k x n) product is cut into tile_m x tile_n x tile_k tiles (ragged
// edges padded), issued one every issue_interval cycles (fp16/bf16 inputs: mac_multiple_16bit
// times as often, the interval rounded up to whole cycles); the last result lands
// pipeline_latency cycles after the last issue. `t` is the storage type of the job's Q, K, V.
// Counts saturate at UINT64_MAX (timing.h: mul_sat) rather than wrap: a 2^20-row tile of 1x1x1
// engine tiles at the largest issue interval is 2^66 cycles.
inline uint64_t gemm_tiles(const GemmConfig& g, uint64_t m, uint64_t n, uint64_t k) {
  return mul_sat(mul_sat(ceil_div(m, g.tile_m), ceil_div(n, g.tile_n)), ceil_div(k, g.tile_k));
}
inline uint64_t gemm_issue_interval(const GemmConfig& g, DType t) {
  return t == DType::fp32 ? uint64_t(g.issue_interval) : ceil_div(uint64_t(g.issue_interval), uint64_t(g.mac_multiple_16bit));
}
inline uint64_t gemm_cycles(const GemmConfig& g, uint64_t m, uint64_t n, uint64_t k, DType t) {
  if (m == 0 || n == 0 || k == 0) return 0;
  return add_sat(mul_sat(gemm_tiles(g, m, n, k), gemm_issue_interval(g, t)), uint64_t(g.pipeline_latency));
}
// Useful MACs over MACs the issued tiles could have done (padding and pipeline fill excluded
// from the numerator).
inline double gemm_tile_utilization(const GemmConfig& g, uint64_t m, uint64_t n, uint64_t k) {
  const uint64_t t = gemm_tiles(g, m, n, k);
  return t ? double(m) * double(n) * double(k) / (double(t) * g.tile_m * g.tile_n * g.tile_k) : 0.0;
}

// One merge of two (m, l, o) states of `rows` rows on a unit with `lanes` fp32 lanes.
inline uint64_t merge_cycles(int lanes, int ops_per_merge, uint64_t rows, uint64_t d) {
  return ceil_div(mul_sat(mul_sat(rows, d + 2), uint64_t(ops_per_merge)), uint64_t(lanes));
}

// How a CUBE's reducer merges the states of one tile (cube.reducer.order; hw/common/merge_tree.h
// schedules it merge by merge as states arrive).
enum class MergeOrder { serial, tree };
inline MergeOrder merge_order(const ReducerConfig& r) { return r.order == "tree" ? MergeOrder::tree : MergeOrder::serial; }
// Merges on the longest path of `states` states: serial states − 1 (each into the running
// state), tree ⌈log2 states⌉ levels.
inline uint64_t merge_levels(uint64_t states, MergeOrder order) {
  if (states <= 1) return 0;
  if (order == MergeOrder::serial) return states - 1;
  uint64_t levels = 0;
  for (uint64_t n = states; n > 1; n = ceil_div(n, 2)) ++levels;
  return levels;
}
// Cycles to merge `states` states present at once on `units` merge units, `one_merge` cycles
// each: serial (states − 1) × one_merge whatever the units (each merge needs the previous
// result); tree Σ over its levels of ⌈pairs on the level / units⌉ × one_merge (8 states: 7, 4,
// 3 merge times with 1, 2, ≥ 4 units).
inline uint64_t merge_all_cycles(uint64_t states, int units, MergeOrder order, uint64_t one_merge) {
  if (order == MergeOrder::serial) return mul_sat(merge_levels(states, order), one_merge);
  uint64_t rounds = 0;
  for (uint64_t n = states; n > 1; n = ceil_div(n, 2)) rounds += ceil_div(n / 2, uint64_t(units));
  return mul_sat(rounds, one_merge);
}

// Vector unit, one KV tile of the online softmax: ops_per_score passes over the rows x n scores
// (scale, mask, max, exp, sum) and ops_per_merge passes over the rows x (d + 2) state to rescale
// and accumulate it.
inline uint64_t softmax_cycles(const VectorConfig& v, uint64_t rows, uint64_t n, uint64_t d) {
  if (rows == 0 || n == 0) return 0;
  return add_sat(ceil_div(mul_sat(mul_sat(rows, n), uint64_t(v.ops_per_score)), uint64_t(v.lanes)),
                 merge_cycles(v.lanes, v.ops_per_merge, rows, d));
}

// Final o / l.
inline uint64_t normalise_cycles(int lanes, uint64_t rows, uint64_t d) {
  return ceil_div(mul_sat(rows, d), uint64_t(lanes));
}

// O of a tile of `rows` rows as the root CUBE returns it to the host: fp32, the normalised
// result as computed (not rounded to the storage type, so O keeps its float64 agreement).
inline uint64_t o_tile_bytes(uint64_t rows, uint64_t d) { return mul_sat(mul_sat(rows, d), 4); }

// The GEMM and vector work of one KV block of `n` tokens against a `rows`-row Q tile: Q K^T,
// the softmax step, P V, one after another on the PE (hw/pe/pe.cpp, compute_tiles).
inline uint64_t block_cycles(const PeConfig& pe, uint64_t rows, uint64_t n, uint64_t d, DType t) {
  return add_sat(add_sat(gemm_cycles(pe.gemm, rows, n, d, t), softmax_cycles(pe.vector, rows, n, d)),
                 gemm_cycles(pe.gemm, rows, d, n, t));
}

}  // namespace ahbm

// Values of the GEMM engine: fp32 inputs, fp32 accumulation, on whole blocks (Eigen), so the
// numerics cost what a vectorised kernel costs while the timing above still counts engine tiles.
#include "hw/common/attn_state.h"

namespace ahbm {

// C = A * B^T  (A: m x k, B: n x k), the layout of S = Q K^T.
inline void gemm_abt(const ConstMapRM& a, const ConstMapRM& b, MatrixRM& c) { c.noalias() = a * b.transpose(); }
// C = A * B    (A: m x k, B: k x n), the layout of O = P V.
inline void gemm_ab(const MatrixRM& a, const ConstMapRM& b, MatrixRM& c) { c.noalias() = a * b; }

// The vector unit's online-softmax step for one KV tile, then P V on the GEMM engine: the
// (m, l, o) state of a block of scores (rows x n, masked entries already -inf) against its
// V rows (n x d). A row with no visible key stays empty (m = -inf, l = 0, o = 0).
AttnState block_state(const MatrixRM& scores, const ConstMapRM& v);
// The same into `out`, with `scratch` for the temporaries: no heap allocation once the buffers
// have their size, so a PE reuses them for every KV tile. Same arithmetic, same values.
struct BlockScratch {
  MatrixRM p;
  Eigen::VectorXf shift;
};
void block_state_into(const MatrixRM& scores, const ConstMapRM& v, AttnState& out, BlockScratch& scratch);

// Host memory for the arithmetic of one KV tile: K/V widened to fp32 (fp16/bf16 storage), the
// score block, the softmax temporaries and the tile's state. One per simulation, shared by all
// PEs: SystemC runs one process at a time and a PE uses it between two waits, never across one.
struct TileScratch {
  MatrixRM k, v, s;
  BlockScratch block;
  AttnState state;
};

}  // namespace ahbm
