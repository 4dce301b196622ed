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
//
// The second mapping, X-stationary (docs/design/decoder-layer.md §4, THInfer's large-M path):
// the rows of X are split over the PEs that hold a shard (each PE keeps its rows of X and their
// Y in SRAM, X read once from the PE's own slice, where the previous operator left its whole
// rows), W stays where the memory map put it, and each W tile is read once by its holder and
// multicast over the NoC into a DMA slot of every PE with rows (hw/chip/weight_streamer.h); each
// PE computes Y[its rows, all N] and writes it back into its own slice.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hw/common/config/choice.h"
#include "hw/common/config/hw_config.h"
#include "hw/common/base/storage_type.h"
#include "hw/common/model/vector_ops.h"

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

// The vector operators fused into a GEMM (hw/common/model/vector_ops.h says where each runs and why
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

// How a weight GEMM is mapped onto the PEs (above). Names: choice_names(GemmMapping{}).
#define AHBM_GEMM_MAPPINGS(V) V(w_stationary, "w_stationary") V(x_stationary, "x_stationary")
AHBM_CHOICE(GemmMapping, AHBM_GEMM_MAPPINGS)
// Throws InputError "<field> = '<name>' is not a GEMM mapping (allowed: w_stationary, x_stationary)".
GemmMapping gemm_mapping_from_name(const std::string& name, const std::string& field);

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
  // c − 1 PEs with the later K parts send their partial Y blocks over the NoC to the PE with the
  // first one (its owner), which adds them and writes Y (GemmPePlan::owner). Used by
  // gemm_even_shards only (explicit shards with the same columns and different K parts are
  // reduced the same way).
  int k_split = 1;
  // true: every finished Y block is written back to the PE's HBM slice through a DMA slot;
  // false: it leaves to the gather without touching HBM.
  bool write_back = true;
  // Values (row-major, already rounded to `dtype`); both empty = timing only.
  std::vector<float> x, w;
  GemmFusion fused;  // vector operators on X blocks and Y blocks (none by default)
  // The dataflow; every job of one run has the same (check_gemm_jobs).
  GemmMapping mapping = GemmMapping::w_stationary;
  bool x_stationary() const { return mapping == GemmMapping::x_stationary; }
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
//
// X-stationary (gemm_xstat_blocking): the PE holds its X rows whole, Mb × K (not an Mb × Kb
// block per W tile), and they come from its own slice, not through the Q buffer:
//   SRAM  = B·slot + Mb·Nb·4 + Mb·K·b ≤ pe.sram_bytes;  Q buf = 0
// Mb from ⌈M / R⌉ rows per PE (R = PEs with a shard), Kb and Nb from the largest holder's K part
// and columns; one blocking for the whole job, since every receiver takes the same W stream.
struct GemmBlocking {
  int mb = 0, kb = 0, nb = 0;
  uint64_t slot_bytes = 0, sram_bytes = 0, q_bytes = 0;
};
// Throws InputError naming the operator, the capacities and the smallest block's needs when no
// blocking fits.
GemmBlocking gemm_blocking(const HwConfig& cfg, int m, int k_p, int n_p, DType t, bool write_back, const std::string& op);
// The SRAM and Q-buffer bytes a blocking needs (the formula above).
// x_k > 0: the X-stationary form, X held as Mb × x_k rows in SRAM and no Q-buffer block.
GemmBlocking gemm_block_bytes(const HwConfig& cfg, int mb, int kb, int nb, DType t, bool write_back, int x_k = 0);

// X-stationary: rows [begin, begin + count) of M per chip PE (split evenly over the PEs with a
// shard, in chip order; others get none), and the job's blocking.
std::vector<std::pair<int, int>> gemm_xstat_rows(int m, const std::vector<GemmShard>& shards);
GemmBlocking gemm_xstat_blocking(const HwConfig& cfg, const GemmJob& j, const std::vector<GemmShard>& shards);

// X-stationary: the W stream's column groups in order: each distinct column range of the shards
// (by first column) with its holders in K order. Each receiver accumulates a Y block over all of
// a group's holders, so a K-split is summed on the receiver.
struct GemmColumns {
  int n_begin = 0, n_count = 0;
  std::vector<int> holders;  // chip PEs, by k_begin
};
std::vector<GemmColumns> gemm_column_groups(const std::vector<GemmShard>& shards);

// Per chip PE, the shards of a job (its own or the even split over `pes` PEs).
std::vector<GemmShard> gemm_shards_of(const GemmJob& j, int pes);

// One PE's part of a run's GEMM job: its shard, its blocking, and where its W shard and Y
// blocks sit in its HBM slice. The slice holds, per job in order, the W shard stored N-block
// by N-block (each K_p × Nb block row-major, so every W tile is one burst), then after the
// W of every job, per job the Y rows (each M-block's Mb × Nb blocks one after another), then per
// job with a residual epilogue its residual rows (M × N_p fp32, laid out like Y).
// X-stationary: the PE's rows (row_begin, row_count) are its part as a receiver; its Y rows
// (row_count × N fp32, each M-block's Mb × Nb blocks one after another in column order) and
// residual rows sit at y_base and r_base; its X rows (row_count × K) at x_base, after every
// job's residual rows. blk is the job's X-stationary blocking on every PE.
// w_stationary K-split: the PEs holding the same columns (gemm_column_groups) form a reduction
// group; its first holder in K order is the owner. The others (owner >= 0) send each finished
// partial Y block to it instead of writing it; the owner waits for the `partials` blocks of the
// same (M-block, N-block), adds them in K order on its vector unit (gemm_reduce_cycles) and
// writes the sum. The group's holders share one blocking (that of its largest K part), so their
// Y blocks line up.
struct GemmPePlan {
  GemmShard shard;
  GemmBlocking blk;
  int owner = -1;    // w_stationary K-split: the chip PE that sums this PE's partial Y blocks
  int partials = 0;  // w_stationary K-split owner: the partial blocks it adds per Y block
  int k_rank = 0;    // w_stationary: the PE's place in its reduction group (K order; owner 0)
  uint64_t w_base = 0, y_base = 0;
  uint64_t r_base = 0;  // the residual rows' shard (GemmFusion::residual), after every job's Y
  uint64_t x_base = 0;  // X-stationary: the PE's X rows
  int row_begin = 0, row_count = 0;  // X-stationary: its rows of M
  bool active() const { return shard.n_count > 0; }
  bool receives() const { return row_count > 0; }
  int row_blocks() const { return receives() ? int(ceil_div_i(row_count, blk.mb)) : 0; }
  int m_blocks(int m) const { return int(ceil_div_i(m, blk.mb)); }
  int n_blocks() const { return int(ceil_div_i(shard.n_count, blk.nb)); }
  int k_blocks() const { return int(ceil_div_i(shard.k_count, blk.kb)); }
  static int64_t ceil_div_i(int64_t a, int64_t b) { return (a + b - 1) / b; }
};
// The Y blocks a PE finishes in job j: w_stationary, its M-blocks × its N-blocks; x_stationary,
// its row blocks × the N-blocks of every column group (`columns`: gemm_column_groups).
uint64_t gemm_y_blocks(const GemmJob& j, const GemmPePlan& pl, const std::vector<GemmColumns>& columns);
// Per job, per chip PE (jobs checked by check_gemm_jobs).
std::vector<std::vector<GemmPePlan>> gemm_pe_plans(const HwConfig& cfg, const std::vector<GemmJob>& jobs);

// Checks a run's GEMM jobs against the hardware (shapes, shard ranges, values' sizes, a
// blocking for every PE's part). Throws InputError naming `where`.
void check_gemm_jobs(const HwConfig& cfg, const std::vector<GemmJob>& jobs, const std::string& where);

// w_stationary X: the jobs' rows travel as attention's Q tiles do (docs/model.md "Weight GEMMs"):
// the host writes them chunk by chunk into the Q source's address window over the host link
// (hw/chip/host.h), the Q source multicasts each chunk over the NoC to the CUBEs with a part of
// its job, and each CUBE's Q buffer writes it through its write port (hw/cube/q_buffer.h); a PE
// starts an M-block once the chunk holding its last row (and every chunk before it) is written
// in its CUBE. A chunk is a run of rows of one job that ends where some PE's M-block ends (so a
// PE waits for whole chunks only) and holds at most ⌊cube.q_buffer.bytes / (K·b)⌋ rows (at
// least one); chunks go in job order, then row order.
struct GemmXChunk {
  int job = 0, row_begin = 0, row_end = 0;
  uint64_t bytes = 0;      // (row_end − row_begin) · K · b
  std::vector<int> cubes;  // chip CUBEs (group · group.cubes + cube) with a PE holding a part of the job
};
std::vector<GemmXChunk> gemm_x_chunks(const HwConfig& cfg, const std::vector<GemmJob>& jobs,
                                      const std::vector<std::vector<GemmPePlan>>& plans);
// The index in `chunks` of job j's chunk that holds row `row`.
size_t gemm_x_chunk_of(const std::vector<GemmXChunk>& chunks, int j, int row);
// The closed form of that path on the ideal NoC without other traffic, in ns from the run's
// start: when row `row` of job j (rows [0, row] all in) is written in every CUBE's Q buffer.
// With chunks c = 0, 1, ... of B_c bytes, L = host.latency_ns, BW = host.bandwidth_gbps and
// λ = the ideal NoC's latency_ns (noc_latency_ns):
//   host(c)  = Σ_{i ≤ c} (L + B_i / BW)          the host writes one chunk at a time, each a
//                                                  blocking write of latency + transfer
//   ready(c) = max(host(c) + λ, ready(c − 1)) + ⌈B_c / write_bytes_per_cycle⌉ cycles
// The simulation equals it to the picosecond when every chunk reaches the same CUBEs (each
// CUBE's write port takes the chunks one after another); tested in test_gemm_x_path.cpp.
double x_ready_ns(const HwConfig& cfg, const std::vector<GemmJob>& jobs, size_t j, int row, double noc_latency_ns);

// w_stationary K-split reduction: the owner's vector unit adds `partials` partial Y blocks of
// mb × nb fp32 into its own, one add per element and partial.
uint64_t gemm_reduce_cycles(const VectorConfig& v, int mb, int nb, int partials);
uint64_t gemm_reduce_cycles(const HwConfig& cfg, int mb, int nb, int partials);

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
  // What crosses the interconnect, for comparing the mappings (docs/models.md "X-stationary"):
  // X into the CUBEs over the host link (w_stationary: M·K·b, the x_ready_ns stream), W tiles
  // multicast over the NoC (x_stationary: bytes per packet, one packet per tile and pass) and
  // the Y blocks the gather collects into whole rows (w_stationary). x_stationary reads its X
  // rows from the PE's own slice instead (x_hbm_bytes_read).
  uint64_t x_link_bytes = 0, w_multicast_bytes = 0, y_gather_bytes = 0;
  // w_stationary K-split: the partial Y blocks sent to their owners over the NoC, and the owners'
  // vector-unit time adding them (summed over PEs; its element-ops are in vector_ops).
  uint64_t k_reduce_bytes = 0;
  double k_reduce_busy_ns = 0;
  // w_stationary: the X chunks' bytes × the CUBEs each reached (the multicast into the Q buffers).
  uint64_t x_noc_delivered_bytes = 0;
  uint64_t x_hbm_bytes_read = 0;
  uint64_t w_noc_delivered_bytes = 0;  // the W packets' bytes × the CUBEs each reached (energy)
  // The weight streamer (x_stationary): W tiles it sent (one NoC packet each, per pass) and the
  // time it stood waiting for every receiver to free a DMA slot, i.e. how long `pe.dma.buffers`
  // held the stream back (receivers slower than the stream: compute-bound).
  uint64_t w_tiles_streamed = 0;
  double w_slot_wait_ns = 0;
  // An unfused vector kernel (hw/common/contract/vector_kernel.h) in the same counters: its input rows
  // read from the slices (its output rows are y_bytes_written).
  uint64_t kernel_bytes_read = 0;
  // When the host has launched the operator's kernel, after the run's start (a weight GEMM run:
  // one launch; vector kernels: one after another); nothing of it starts on the chip earlier.
  double launch_ns = 0;
  uint64_t moved_bytes() const { return x_link_bytes + w_multicast_bytes + y_gather_bytes + k_reduce_bytes; }
  double vector_busy_ns() const { return norm_busy_ns + rope_busy_ns + act_busy_ns + residual_busy_ns + k_reduce_busy_ns; }
};
// Bytes of a finished Y block of mb × nb leaving the PE (half the columns after a gated
// activation: the up columns are consumed).
inline uint64_t gemm_y_block_bytes(const GemmFusion& f, int mb, int nb) {
  return uint64_t(mb) * uint64_t(f.gated_act ? nb / 2 : nb) * 4;
}

// An X-stationary W tile on the NoC (hw/chip/weight_streamer.h): NocPacket::tag = kGemmTag, the
// payload this; the CUBEs of its receivers hand it to them (Pe::gemm_tile_arrived, GemmProgram::tile_arrived).
constexpr int kGemmTag = -2;
struct GemmTileMessage {
  int job = 0, holder = 0;         // the job, the chip PE whose slice it was read from
  int kb = 0, nb = 0;              // its shape
  std::vector<int> dst_pes;        // receiving chip PEs
  std::vector<int> slots;          // the SRAM slot reserved in each
  // Per receiver, the tile's place in the stream it receives (0, 1, ...): tiles read from
  // different holders' slices can arrive out of order, and a receiver takes them in order.
  std::vector<uint64_t> seqs;
  std::shared_ptr<const std::vector<unsigned char>> data;  // stored bytes (null: timing only)
};

// A w_stationary X chunk on the NoC (hw/chip/q_source.h): NocPacket::tag = kGemmXTag, the
// payload this; each CUBE writes it into its Q buffer.
constexpr int kGemmXTag = -3;
struct GemmXMessage {
  int chunk = 0;  // index in GemmRun::x_chunks
};

// A w_stationary K-split's partial Y block on its way to its owner (hw/pe/gemm_program.cpp):
// NocPacket::tag = kGemmPartialTag, the payload this; the owner's CUBE hands it to the owner.
constexpr int kGemmPartialTag = -4;
struct GemmPartialMessage {
  int job = 0, owner = 0;  // the chip PE that adds it
  int mi = 0, ni = 0;      // its Y block
  int k_rank = 0;          // the sender's place in the reduction group
  std::shared_ptr<const std::vector<float>> values;  // mb × nb row-major (null: timing only)
};

}  // namespace ahbm
