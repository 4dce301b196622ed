#pragma once
// What the runtime hands the hardware for one weight GEMM of a decoder layer, Y = X · W
// (X: M × K activations, W: K × N weights), mapped weight-stationary (THInfer's small-M path,
// docs/design/decoder-layer.md §2): W stays in the PEs' HBM slices, split along N (and along K
// when `k_split` > 1); every PE computes its Y[:, N_p] (or a K-partial of it) from its own shard.
//
// Per PE the GEMM is blocked (Mb, Kb, Nb) from the PE SRAM and the CUBE Q buffer
// (gemm_blocking below, the formula of docs/model.md "Weight GEMMs"); W tiles (Kb × Nb) stream
// from the slice through the `pe.dma.buffers` SRAM slots, and a finished Y block (Mb × Nb fp32)
// leaves through a slot too when it is written back, so with write-back the slots are shared by
// input, compute and output (triple buffering with `pe.dma.buffers` = 3).
#include <cstdint>
#include <string>
#include <vector>

#include "hw/common/hw_config.h"
#include "hw/common/storage_type.h"
#include "hw/common/vector_ops.h"

namespace ahbm {

// The part of W one PE holds and computes: columns [n_begin, n_begin + n_count) and rows
// [k_begin, k_begin + k_count). n_count = 0: the PE has no part.
struct GemmShard {
  int n_begin = 0, n_count = 0;
  int k_begin = 0, k_count = 0;
  bool operator==(const GemmShard& o) const {
    return n_begin == o.n_begin && n_count == o.n_count && k_begin == o.k_begin && k_count == o.k_count;
  }
};

// The vector operators fused into a GEMM (hw/common/vector_ops.h says where each runs and why
// there); all off by default. Epilogues run on every finished Y block in the order below.
struct GemmFusion {
  // Prologue: the rows of X are RMS-normed (weight norm_weight, K values; empty in timing-only
  // runs) before they meet W; needs the whole of K on the PE (no K-split).
  bool rms_norm = false;
  double rms_eps = 1e-6;
  std::vector<float> norm_weight;
  // RoPE on the columns with rope_col[c] >= 0 (the column's dimension in its head; interleaved
  // pairs 2j, 2j + 1 adjacent, never split by a shard or block); positions[r] per row of X.
  std::vector<int> rope_col;  // per column of N; empty: no RoPE
  std::vector<int64_t> positions;
  int head_dim = 0;
  double rope_theta = 10000.0;
  // act(Y[:, 2i]) · Y[:, 2i + 1] into column 2i (the job's columns are interleaved gate, up
  // pairs); Y blocks leave with half their columns.
  bool gated_act = false;
  HiddenAct act = HiddenAct::silu;
  // Y += the residual rows' same columns (fp32, M × N; empty in timing-only runs), read from the
  // PE's HBM slice where the layer input is stored sharded like Y.
  bool residual = false;
  std::vector<float> residual_values;
  // Per row of X, the Y row's weight in the residual add: Y·w + residual, one FMA per element
  // (the add's cost; vector_ops.h). An MoE expert's down projection combines its rows into the
  // residual stream with their routing weights this way. Empty: 1 (values only, like the above).
  std::vector<float> residual_scale;
  bool rope() const { return !rope_col.empty(); }
  bool epilogue() const { return rms_norm || rope() || gated_act || residual; }
};

struct GemmJob {
  std::string op = "gemm";       // operator name (spans, counters): q_proj, qkv_proj, down_proj, ...
  std::string phase = "decode";  // the step's phase (spans)
  int m = 1, k = 1, n = 1;       // Y (M × N) = X (M × K) · W (K × N)
  DType dtype = DType::fp16;     // storage type of X and W (HBM, Q buffer, SRAM); Y and the
                                 // accumulators are fp32
  // Per chip PE (g × pes_per_group + p), its shard; empty = gemm_even_shards(all groups' PEs).
  // The runtime fills it from the memory map's placement (runtime/model/layer_plan.h).
  std::vector<GemmShard> shards;
  // c > 1: K is split over c PEs that hold the same columns (for N too narrow for the PEs); the
  // c partial Y blocks are summed in the gather. Used by gemm_even_shards only.
  int k_split = 1;
  // true: every finished Y block is written back to the PE's HBM slice through a DMA slot;
  // false: it leaves to the gather without touching HBM.
  bool write_back = true;
  // Values (row-major, already rounded to `dtype`); both empty = timing only.
  std::vector<float> x, w;
  GemmFusion fused;  // vector operators on X blocks and Y blocks (none by default)
  bool values() const { return !x.empty(); }
  uint64_t elem_bytes() const { return dtype_bytes(dtype); }
};

// The even split over `pes` PEs with K split `k_split` ways: P_N = pes / k_split column shards
// (⌊N/P_N⌋ columns, the first N mod P_N PEs one more), each cut into k_split K parts the same
// way; PE p holds column shard p / k_split, K part p % k_split.
std::vector<GemmShard> gemm_even_shards(int k, int n, int pes, int k_split);

// The blocking of one PE's part (M rows, K_p × N_p of W) and what it occupies.
//   slot  = max(Kb·Nb·b, [write_back] Mb·Nb·4)          one DMA slot: a W tile or a Y block
//   SRAM  = B·slot + Mb·Nb·4 (accumulators) + Mb·Kb·b (the PE's X block)   ≤ pe.sram_bytes
//   Q buf = 2·Mb·Kb·b (X blocks, double-buffered)                           ≤ cube.q_buffer.bytes
// Chosen: Nb = N_p if any (Mb, Kb) fits with it, else the largest multiple of tile_n that does;
// then the largest Mb (M, or a multiple of tile_m below it: W is re-read ⌈M/Mb⌉ times); then the
// largest Kb (K_p, or a multiple of tile_k below it).
struct GemmBlocking {
  int mb = 0, kb = 0, nb = 0;
  uint64_t slot_bytes = 0, sram_bytes = 0, q_bytes = 0;
};
// Throws InputError naming the operator, the capacities and the smallest block's needs when no
// blocking fits.
GemmBlocking gemm_blocking(const HwConfig& cfg, int m, int k_p, int n_p, DType t, bool write_back, const std::string& op);
// The SRAM and Q-buffer bytes a blocking needs (the formula above).
GemmBlocking gemm_block_bytes(const HwConfig& cfg, int mb, int kb, int nb, DType t, bool write_back);

// Per chip PE, the shards of a job (its own or the even split over `pes` PEs).
std::vector<GemmShard> gemm_shards_of(const GemmJob& j, int pes);

// One PE's part of a run's GEMM job: its shard, its blocking, and where its W shard and Y
// blocks sit in its HBM slice. The slice holds, per job in order, the W shard stored N-block
// by N-block (each K_p × Nb block row-major, so every W tile is one burst), then after the
// W of every job, per job the Y rows (each M-block's Mb × Nb blocks one after another), then per
// job with a residual epilogue its residual rows (M × N_p fp32, laid out like Y).
struct GemmPePlan {
  GemmShard shard;
  GemmBlocking blk;
  uint64_t w_base = 0, y_base = 0;
  uint64_t r_base = 0;  // the residual rows' shard (GemmFusion::residual), after every job's Y
  bool active() const { return shard.n_count > 0; }
  int m_blocks(int m) const { return int(ceil_div_i(m, blk.mb)); }
  int n_blocks() const { return int(ceil_div_i(shard.n_count, blk.nb)); }
  int k_blocks() const { return int(ceil_div_i(shard.k_count, blk.kb)); }
  static int64_t ceil_div_i(int64_t a, int64_t b) { return (a + b - 1) / b; }
};
// Per job, per chip PE (jobs checked by check_gemm_jobs).
std::vector<std::vector<GemmPePlan>> gemm_pe_plans(const HwConfig& cfg, const std::vector<GemmJob>& jobs);

// Checks a run's GEMM jobs against the hardware (shapes, shard ranges, values' sizes, a
// blocking for every PE's part). Throws InputError naming `where`.
void check_gemm_jobs(const HwConfig& cfg, const std::vector<GemmJob>& jobs, const std::string& where);

// Where X of the run's GEMM jobs is, in ns from the run's start: the host streams the jobs' X
// rows in job order over the host link (host.latency_ns, then host.bandwidth_gbps); a row is
// usable in every CUBE's Q buffer once it has crossed the link and been written at
// cube.q_buffer.write_bytes_per_cycle (a multicast: one copy per CUBE, every CUBE at once).
// x_ready_ns(cfg, jobs, j, r): row r of job j (rows [0, r] all in).
double x_ready_ns(const HwConfig& cfg, const std::vector<GemmJob>& jobs, size_t j, int row);

// Counters of one GEMM operator over the PEs that ran it (SimResult::gemms).
struct GemmOpStats {
  std::string op;
  double end_ns = 0;             // its last PE finished (last Y block written or gathered)
  std::vector<double> pe_end_ns;  // per chip PE with a part (0 for PEs without one)
  uint64_t w_bytes_read = 0;      // W tiles from HBM
  uint64_t y_bytes_written = 0;   // Y blocks to HBM (write_back)
  uint64_t x_bytes_read = 0;      // X blocks out of the Q buffers
  uint64_t macs = 0;              // useful MACs (M · N_p · K_p summed)
  uint64_t gemm_tiles = 0;        // engine tiles issued
  double gemm_busy_ns = 0;        // GEMM engines, summed over PEs
  double dma_busy_ns = 0;         // W reads and Y writes, summed over PEs
  // The fused vector operators (GemmFusion), summed over PEs: vector-unit busy time per
  // operator, element-ops issued (elements × passes), residual bytes read from HBM.
  double norm_busy_ns = 0, rope_busy_ns = 0, act_busy_ns = 0, residual_busy_ns = 0;
  uint64_t vector_ops = 0;
  uint64_t residual_bytes_read = 0;
  double vector_busy_ns() const { return norm_busy_ns + rope_busy_ns + act_busy_ns + residual_busy_ns; }
};
// Bytes of a finished Y block of mb × nb leaving the PE (half the columns after a gated
// activation: the up columns are consumed).
inline uint64_t gemm_y_block_bytes(const GemmFusion& f, int mb, int nb) {
  return uint64_t(mb) * uint64_t(f.gated_act ? nb / 2 : nb) * 4;
}

}  // namespace ahbm
