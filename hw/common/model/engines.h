#pragma once
// Closed-form cycle counts of the PE's engines. The PE waits exactly these times; the unit
// tests check the simulated cycles against them.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "hw/common/config/hw_config.h"
#include "hw/common/model/resource_times.h"
#include "hw/common/base/timing.h"
#include "hw/common/base/storage_type.h"

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
// The padded engine tiles alone (pe.gemm.narrow_m = "pad").
inline uint64_t gemm_array_cycles(const GemmConfig& g, uint64_t m, uint64_t n, uint64_t k, DType t) {
  if (m == 0 || n == 0 || k == 0) return 0;
  return add_sat(mul_sat(gemm_tiles(g, m, n, k), gemm_issue_interval(g, t)), uint64_t(g.pipeline_latency));
}
// The narrow path (pe.gemm.narrow_m = "gemv"): row by row, each row's n x k MACs at
// gemv_macs_per_cycle (fp16/bf16: times mac_multiple_16bit), then the same pipeline latency, so
// the cycles scale with the rows instead of padding them to tile_m.
inline uint64_t gemv_cycles(const GemmConfig& g, uint64_t m, uint64_t n, uint64_t k, DType t) {
  if (m == 0 || n == 0 || k == 0) return 0;
  const uint64_t rate = mul_sat(uint64_t(g.gemv_macs_per_cycle), t == DType::fp32 ? 1 : uint64_t(g.mac_multiple_16bit));
  return add_sat(mul_sat(m, ceil_div(mul_sat(n, k), rate)), uint64_t(g.pipeline_latency));
}
// Whether a product runs on the narrow path: narrow_m = "gemv", fewer rows than an engine tile,
// and fewer cycles there than padded (the PE knows the rows when it issues the product).
inline bool gemm_uses_gemv(const GemmConfig& g, uint64_t m, uint64_t n, uint64_t k, DType t) {
  return g.gemv() && m < uint64_t(g.tile_m) && gemv_cycles(g, m, n, k, t) < gemm_array_cycles(g, m, n, k, t);
}
inline uint64_t gemm_cycles(const GemmConfig& g, uint64_t m, uint64_t n, uint64_t k, DType t) {
  return gemm_uses_gemv(g, m, n, k, t) ? gemv_cycles(g, m, n, k, t) : gemm_array_cycles(g, m, n, k, t);
}
// Engine tiles the product issues on the array (none on the narrow path).
inline uint64_t gemm_issued_tiles(const GemmConfig& g, uint64_t m, uint64_t n, uint64_t k, DType t) {
  return gemm_uses_gemv(g, m, n, k, t) ? 0 : gemm_tiles(g, m, n, k);
}
// Useful MACs over MACs the issued tiles could have done (padding and pipeline fill excluded
// from the numerator).
inline double gemm_tile_utilization(const GemmConfig& g, uint64_t m, uint64_t n, uint64_t k) {
  const uint64_t t = gemm_tiles(g, m, n, k);
  return t ? double(m) * double(n) * double(k) / (double(t) * g.tile_m * g.tile_n * g.tile_k) : 0.0;
}

// Element-ops (elements × passes) of one merge of two (m, l, o) states of `rows` rows: what
// the vector unit's energy is counted in (hw/chip/energy.h).
inline uint64_t merge_ops(int ops_per_merge, uint64_t rows, uint64_t d) {
  return mul_sat(mul_sat(rows, d + 2), uint64_t(ops_per_merge));
}
// One merge of two (m, l, o) states of `rows` rows on a unit with `lanes` fp32 lanes.
inline uint64_t merge_cycles(int lanes, int ops_per_merge, uint64_t rows, uint64_t d) {
  return ceil_div(merge_ops(ops_per_merge, rows, d), uint64_t(lanes));
}

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
inline uint64_t score_ops(const VectorConfig& v, uint64_t rows, uint64_t n) {
  return mul_sat(mul_sat(rows, n), uint64_t(v.ops_per_score));
}
inline uint64_t softmax_cycles(const VectorConfig& v, uint64_t rows, uint64_t n, uint64_t d) {
  if (rows == 0 || n == 0) return 0;
  return add_sat(ceil_div(score_ops(v, rows, n), uint64_t(v.lanes)), merge_cycles(v.lanes, v.ops_per_merge, rows, d));
}
// Its element-ops: the score passes plus one state merge.
inline uint64_t softmax_ops(const VectorConfig& v, uint64_t rows, uint64_t n, uint64_t d) {
  if (rows == 0 || n == 0) return 0;
  return add_sat(score_ops(v, rows, n), merge_ops(v.ops_per_merge, rows, d));
}

// Final o / l: one element-op per element of o.
inline uint64_t normalise_ops(uint64_t rows, uint64_t d) { return mul_sat(rows, d); }
inline uint64_t normalise_cycles(int lanes, uint64_t rows, uint64_t d) {
  return ceil_div(normalise_ops(rows, d), uint64_t(lanes));
}

// O of a tile of `rows` rows as the root CUBE returns it to the host: fp32, the normalised
// result as computed (not rounded to the storage type, so O keeps its float64 agreement).
inline uint64_t o_tile_bytes(uint64_t rows, uint64_t d) { return mul_sat(mul_sat(rows, d), 4); }

// The work of one KV block of `n` tokens against a `rows`-row Q tile, in cycles: S = Q K^T on
// the GEMM engine, the online-softmax step on the vector unit (scores and the rescale of the
// running state), O += P V on the GEMM engine.
struct BlockWork {
  uint64_t qk = 0, softmax = 0, pv = 0;
};
inline BlockWork block_work(const GemmConfig& g, const VectorConfig& v, uint64_t rows, uint64_t n, uint64_t d, DType t) {
  return {gemm_cycles(g, rows, n, d, t), softmax_cycles(v, rows, n, d), gemm_cycles(g, rows, d, n, t)};
}
inline BlockWork block_work(const PeConfig& pe, uint64_t rows, uint64_t n, uint64_t d, DType t) {
  return block_work(pe.gemm, pe.vector, rows, n, d, t);
}

// What one KV block's work counts (the PE's counters; hw/chip/energy.h prices them): the MACs of
// Q K^T and P V, the vector unit's element-ops (softmax_ops), and the block's K and V staged
// through the PE's SRAM (written once, read once). The cost model's energy estimate adds the
// same counts (runtime/policy/cost_model.cpp).
struct BlockCounts {
  uint64_t macs = 0, vector_ops = 0, sram_bytes = 0;
  BlockCounts& operator+=(const BlockCounts& o) {
    macs = add_sat(macs, o.macs), vector_ops = add_sat(vector_ops, o.vector_ops), sram_bytes = add_sat(sram_bytes, o.sram_bytes);
    return *this;
  }
};
inline BlockCounts block_counts(const VectorConfig& v, uint64_t rows, uint64_t n, uint64_t d, uint64_t elem_bytes) {
  return {mul_sat(mul_sat(mul_sat(2, rows), n), d), softmax_ops(v, rows, n, d), mul_sat(mul_sat(mul_sat(2, n), d), elem_bytes)};
}

// Steady-state cycles per KV block with every block's KV in SRAM (pe.overlap):
//  - none: qk + softmax + pv, one after another;
//  - ping_pong (FlashAttention-3): the GEMM engine runs Q K^T of block b+1 while the vector unit
//    does the softmax of block b, then P V of b. The softmax of b+1 rescales the O accumulator,
//    so it waits for P V of b: per block pv + max(qk, softmax), min(qk, softmax) hidden.
inline uint64_t block_period_cycles(const PeConfig& pe, const BlockWork& w) {
  if (!pe.ping_pong()) return add_sat(add_sat(w.qk, w.softmax), w.pv);
  return add_sat(w.pv, std::max(w.qk, w.softmax));
}
// A whole Q tile of `blocks` equal KV blocks, every block's KV in SRAM when asked (compute-bound):
//  none: B (qk + softmax + pv);
//  ping_pong, B >= 2: qk + max(qk, softmax) + (B - 2)(pv + max(qk, softmax)) + pv + softmax + pv,
//  i.e. (B - 1) min(qk, softmax) less than none. KvBlockPipeline below places exactly this
//  schedule (testbench/unit/test_engine_overlap.cpp checks both and the simulated PE).
inline uint64_t qtile_cycles(const PeConfig& pe, const BlockWork& w, uint64_t blocks) {
  if (blocks == 0) return 0;
  const uint64_t one = add_sat(add_sat(w.qk, w.softmax), w.pv);
  if (!pe.ping_pong() || blocks == 1) return mul_sat(blocks, one);
  // QK_0, then QK_1 beside SM_0; P V of block b starts once QK_{b+1} and SM_b are done; the last
  // block's P V follows its softmax, which follows the previous P V.
  const uint64_t first_pv = add_sat(w.qk, std::max(w.qk, w.softmax));
  return add_sat(add_sat(first_pv, mul_sat(blocks - 2, block_period_cycles(pe, w))), add_sat(add_sat(w.pv, w.softmax), w.pv));
}

// A busy-cycle lower bound of one PE's engines over `n` KV tokens against `rows` rows as one block
// (hw/chip/simulate.cpp: how long a run lasts at least). With overlap the engines work side by
// side, so the larger of the two engines' work.
inline uint64_t block_cycles(const PeConfig& pe, uint64_t rows, uint64_t n, uint64_t d, DType t) {
  const BlockWork w = block_work(pe, rows, n, d, t);
  if (pe.ping_pong()) return std::max(add_sat(w.qk, w.pv), w.softmax);
  return add_sat(add_sat(w.qk, w.softmax), w.pv);
}

// The GEMM engine and vector unit of one PE as two timelines, one Q tile at a time: the PE
// (hw/pe/attention_program.cpp) and the cost model (runtime/policy/cost_model.cpp) place every KV block's
// work with it, so both follow one schedule. `Time` is sc_time (the PE) or double ns (the
// cost model); durations are given in it.
//  - none: Q K^T, softmax, P V of a block one after another, the next block after them.
//  - ping_pong: a block's P V stays pending until the next block comes: if its KV is in SRAM by
//    the time the pending softmax ends (lookahead_deadline), the GEMM engine runs the next
//    Q K^T first and the pending P V after it (FlashAttention-3's order); if not, the pending
//    P V runs first (flush), so a late block never holds the engine or the pending block's SRAM
//    slot. The softmax of a block also waits for the previous P V (it rescales O).
enum class EngineOp { gemm_qk, softmax, gemm_pv };
template <class Time>
class KvBlockPipeline {
 public:
  struct Durations {
    Time qk, softmax, pv;
  };
  // An op placed on its engine; `tag` is the caller's name of the block (the PE: its SRAM slot).
  struct Placed {
    EngineOp op;
    int tag;
    Time start, end;
  };
  explicit KvBlockPipeline(bool ping_pong) : ping_pong_(ping_pong) {}

  // A new Q tile whose Q is in hand at `ready`; the previous tile was flushed.
  void begin(const Time& ready) {
    gemm_ = vector_ = pv_done_ = end_ = ready;
    pending_ = false;
  }
  bool pending() const { return pending_; }
  // With a pending P V: a block whose KV is in SRAM by then has its Q K^T issued first.
  const Time& lookahead_deadline() const { return softmax_end_; }

  // Places block `tag`, its KV in SRAM at `arrival`; hands what it placed to `out`, in each
  // engine's order (a pending P V of the previous block may come with it). `out` is a
  // std::vector<Placed> (appended to) or a callable (op, tag, start, end): the cost model's,
  // which needs only when each SRAM slot is released, and not a record per op.
  template <class Out>
  void add(int tag, const Time& arrival, const Durations& d, Out& out) {
    if (pending_ && arrival > softmax_end_) flush(out);
    const Time qk_start = later(gemm_, arrival);
    gemm_ = qk_start + d.qk;
    emit(out, EngineOp::gemm_qk, tag, qk_start, gemm_);
    if (!ping_pong_) {
      place_softmax(tag, d.softmax, out);
      place_pv(tag, d.pv, out);
      return;
    }
    if (pending_) flush(out);
    place_softmax(tag, d.softmax, out);
    pending_ = true;
    pending_tag_ = tag;
    pending_pv_ = d.pv;
  }
  // Places the pending P V (the tile's last block, or no next block in time).
  template <class Out>
  void flush(Out& out) {
    if (!pending_) return;
    pending_ = false;
    place_pv(pending_tag_, pending_pv_, out);
  }
  // When everything placed so far ends.
  const Time& end() const { return end_; }

 private:
  static Time later(const Time& a, const Time& b) { return a < b ? b : a; }
  static void emit(std::vector<Placed>& out, EngineOp op, int tag, const Time& start, const Time& end) {
    out.push_back({op, tag, start, end});
  }
  template <class F>
  static void emit(F& out, EngineOp op, int tag, const Time& start, const Time& end) {
    out(op, tag, start, end);
  }
  template <class Out>
  void place_softmax(int tag, const Time& dur, Out& out) {
    // After its Q K^T and the previous P V (the rescale of O): gemm_ is the end of one of them
    // and after the other (none: its Q K^T, the previous P V before it; ping_pong: the P V
    // that followed its Q K^T, or its Q K^T that followed a flushed P V).
    const Time start = later(later(gemm_, vector_), pv_done_);
    vector_ = start + dur;
    softmax_end_ = vector_;
    end_ = later(end_, vector_);
    emit(out, EngineOp::softmax, tag, start, vector_);
  }
  template <class Out>
  void place_pv(int tag, const Time& dur, Out& out) {
    const Time start = later(gemm_, softmax_end_);  // its own softmax: the last one placed
    gemm_ = pv_done_ = start + dur;
    end_ = later(end_, gemm_);
    emit(out, EngineOp::gemm_pv, tag, start, gemm_);
  }

  bool ping_pong_;
  Time gemm_{}, vector_{}, pv_done_{}, end_{};
  bool pending_ = false;
  int pending_tag_ = 0;
  Time pending_pv_{}, softmax_end_{};  // P V of the pending block; end of the last softmax placed
};

}  // namespace ahbm

// Values of the GEMM engine: fp32 inputs, fp32 accumulation, on whole blocks (Eigen), so the
// numerics cost what a vectorised kernel costs while the timing above still counts engine tiles.
#include "hw/common/model/attn_state.h"

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

// One transfer over the host link (host <-> chip, either direction; the link is full duplex):
// host.latency_ns, then the bytes at host.bandwidth_gbps. The cost model's Q upload and serve's
// KV swaps are timed by it (the SystemC host waits the same sum as an sc_time, hw/chip/q_source.cpp).
inline double host_link_ns(const HostConfig& h, uint64_t bytes) { return host_upload<double>(h, bytes); }

}  // namespace ahbm
