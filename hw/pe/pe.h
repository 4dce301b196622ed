#pragma once
// One processing element next to its HBM slice. Two processes:
//  - DMA: per Q tile the PE takes part in, streams its KV segments (by default its own shard)
//    tile by tile into `buffers` SRAM slots; a slot is refilled as soon as compute releases it,
//    so with 2+ slots transfer overlaps compute (double/triple buffering). A local segment is a
//    pair of TLM-2.0 bursts from the PE's HBM slice (its shard or a replica it holds); a remote
//    one is a request over the NoC answered by the owner's slice (Policy B2). Before a remapped
//    job (B1) it waits for the incoming copies and rebuilds its page table. In a KV-broadcast
//    job (B5) the DMA is idle: the group's KV mover fills the slots.
//  - compute: per Q tile, reads Q from the CUBE's Q buffer (q_in), then per KV tile runs
//    S = Q K^T (GEMM engine), the online-softmax update (vector unit: scale, mask, exp, sums,
//    state rescale) and O += P V (GEMM engine), and finally sends its (m, l, o) state to the
//    CUBE reducer (state_out). Each step waits its closed-form cycle count (engines.h); values are
//    computed on whole blocks with Eigen when the job carries values.
// A run of weight GEMMs (hw/common/contract/gemm_job.h) uses three more processes instead (pe_gemm.cpp):
//  - GEMM DMA: the PE's W tiles (Kb × Nb) from its HBM slice into the `buffers` SRAM slots;
//  - GEMM compute: per W tile, the X block out of the CUBE's Q buffer and the tile on the GEMM
//    engine into the Y block's fp32 accumulators; a finished Y block goes out through the slot of
//    its last W tile (write-back) or straight to the gather;
//  - GEMM write-back: Y blocks from their slots into the HBM slice, freeing the slot.
// A run of unfused vector kernels (hw/common/contract/vector_kernel.h) runs in the compute process
// (pe_vector.cpp): per kernel, after its launch, each row block read from the slice, the operator
// on the vector unit, the result written back.
#include <array>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "hw/common/model/engines.h"
#include "hw/common/contract/interfaces.h"
#include "hw/common/contract/kv_traffic.h"
#include "hw/common/sim/sim_shared.h"
#include "hw/common/observe/stats.h"
#include "hw/noc/noc.h"

namespace ahbm {

// Activity codes of the PE's `activity` signal (docs/waveforms in docs/model.md).
// gemm_w: a weight GEMM's W tile on the GEMM engine (q_read: its X block out of the Q buffer);
// vector_op: a vector operator fused into a weight GEMM (hw/common/model/vector_ops.h).
enum class PeActivity : uint64_t {
  idle = 0, q_read = 1, gemm_qk = 2, softmax = 3, gemm_pv = 4, send_state = 5, gemm_w = 6, vector_op = 7
};

// Counters of a PE (Pe::report_stats); its HBM slice adds its own to the same node.
struct PeStats {
  static constexpr stats::BusyNs gemm_busy{"gemm_busy_ns", "ns", "GEMM engine busy"};
  static constexpr stats::BusyNs vector_busy{"vector_busy_ns", "ns", "vector unit busy"};
  static constexpr stats::BusyNs dma_busy{"dma_busy_ns", "ns", "KV DMA busy"};
  static constexpr stats::Sum<uint64_t> macs{"macs", "MAC", "multiply-accumulates computed"};
  static constexpr stats::Sum<uint64_t> gemm_tiles{"gemm_tiles", "tiles", "GEMM tiles computed"};
  static constexpr stats::Sum<uint64_t> remote_kv_bytes{"remote_kv_bytes", "bytes", "KV read from other PEs (B2)"};
  // KV tiles no row of their Q tile could see, neither read nor computed (pe.dma.masked_tiles = skip)
  static constexpr stats::Sum<uint64_t> kv_tiles_skipped{"kv_tiles_skipped", "tiles", "KV tiles no row of their Q tile could see, neither read nor computed"};
  // and the MACs those tiles would have cost (macs + macs_skipped = 2 x rows x KV tokens x d)
  static constexpr stats::Sum<uint64_t> macs_skipped{"macs_skipped", "MAC", "multiply-accumulates the skipped KV tiles would have cost"};
  // What energy is read from (hw/chip/energy.h): vector-unit element-ops (elements × passes:
  // softmax, state rescale, fused operators), bytes staged through the PE's SRAM (each written
  // once and read once: KV blocks computed, Q tiles and X blocks taken in, W tiles, residual
  // rows, Y blocks written back) and X bytes read out of the CUBE's Q buffer (weight GEMMs; Q
  // tiles are counted by the Q buffer).
  static constexpr stats::Sum<uint64_t> vector_ops{"vector_ops", "element-ops", "vector-unit element-ops (elements x passes)"};
  static constexpr stats::Sum<uint64_t> sram_bytes{"sram_bytes", "bytes", "bytes staged through the PE's SRAM"};
  static constexpr stats::Sum<uint64_t> x_bytes_read{"x_bytes_read", "bytes", "X bytes read out of the CUBE's Q buffer (weight GEMMs)"};
  // Timed paged-KV memory work (pe.dma.kv_writes = timed, AttentionJob::kv_writes): K/V bytes of
  // new tokens written into the slice, and of copy-on-write page copies (read, then written).
  static constexpr stats::Sum<uint64_t> kv_append_bytes{"kv_append_bytes", "bytes", "K/V bytes of new tokens written into the slice"};
  static constexpr stats::Sum<uint64_t> kv_copy_bytes{"kv_copy_bytes", "bytes", "K/V bytes of copy-on-write page copies (read, then written)"};
};

class Pe : public sc_core::sc_module, public KvEndpoint, public StatsProvider {
 public:
  void report_stats(StatsNode& node) const override;
  tlm_utils::simple_initiator_socket<Pe> hbm;   // its HBM slice
  sc_core::sc_port<QTileSource> q_in;           // its CUBE's Q buffer
  sc_core::sc_port<StateSink> state_out;        // its CUBE's reducer
  sc_core::sc_port<KvFabric> kv;                // its group's KV layout and KV traffic

  // PE `pe_in_group` of KV-head group `group` (CUBE-major), `local_index` in its CUBE. Remote
  // KV reads (Policy B2) go out on `noc`.
  Pe(sc_core::sc_module_name name, SimShared& sh, Noc& noc, int group, int pe_in_group, int local_index);

  // Back to the state of a new PE and starts the run's tiles (SimShared::begin_run has been
  // called; the chip is reused: simulate.h).
  void begin_run();
  // KvEndpoint: KV delivered by the CUBE's NoC handler (never waits); the KV mover reserves a
  // slot for a broadcast block (blocks until one is free).
  void remote_response(KvMessagePtr m) override;
  void remap_arrived(const KvMessage& m) override;
  void broadcast_arrived(const KvMessage& m, int slot) override;
  int reserve_slot() override { return free_slots_.pop(); }
  // X-stationary weight GEMMs: the weight streamer reserves one of the GEMM slots (blocks until
  // one is free) and the PE's CUBE hands it the W tile sent into it (never waits).
  int reserve_gemm_slot();
  void gemm_tile_arrived(const GemmTileMessage& m, int slot);
  // W-stationary K-split: a partial Y block for this PE, the owner (from its CUBE; never waits).
  void gemm_partial_arrived(std::shared_ptr<const GemmPartialMessage> m);
  // Tiles (global indices) this PE takes part in, in send order.
  const std::vector<int>& my_tiles() const { return my_tiles_; }

  // Busy time of the engines (for utilisation statistics).
  const sc_core::sc_time& gemm_busy() const { return gemm_busy_; }
  const sc_core::sc_time& vector_busy() const { return vector_busy_; }
  const sc_core::sc_time& dma_busy() const { return dma_busy_; }
  uint64_t macs() const { return macs_; }
  uint64_t macs_skipped() const { return macs_skipped_; }  // of the fully masked KV tiles left out
  uint64_t gemm_tiles_issued() const { return gemm_tiles_; }
  uint64_t remote_bytes() const { return remote_bytes_; }

 private:
  struct Block {
    int slot, src_pe, first, n;
  };
  void dma_loop();
  // One run: streams the KV tiles of its Q tiles into the SRAM slots.
  void dma_tiles();
  void compute_loop();
  // One run: computes its Q tiles.
  void compute_tiles();
  // pe.overlap = ping_pong: the KV blocks of Q tile `t` (global index gt) on the engine timelines.
  void compute_blocks_overlapped(const TileRef& t, int gt, uint64_t blocks, const StatePtr& acc);
  // Counts a block's MACs and issued engine tiles.
  void count_block(const AttentionJob& job, int rows, int n);
  // The values of block `blk` (the b-th of tile t) folded into `acc` (null: timing only).
  void accumulate_block(const StatePtr& acc, const Block& blk, const TileRef& t, int gt, uint64_t b);
  // `t` as the trace's ns from the run's epoch (a placed op's times are in the future).
  uint64_t trace_ns(const sc_core::sc_time& t) const;
  // Weight GEMMs (pe_gemm.cpp): one run's W tiles, their GEMMs, the Y write-backs.
  struct GemmTile {
    int job, slot, mi, ni, ki;
  };
  void gemm_dma_loop();
  void gemm_dma();
  void gemm_compute_loop();
  void gemm_compute();
  void gemm_write_loop();
  void gemm_write();
  // x_stationary job j: the PE's row blocks against the streamed W tiles; their write-backs.
  void gemm_compute_xstat(int j);
  void gemm_write_xstat(int j);
  // The GEMM engine (or a Q-buffer read) busy `cycles` as activity `a`, a span `activity` of job j.
  sc_core::sc_time gemm_engine(PeActivity a, int activity, uint64_t cycles, int j, int phase, int64_t rows, int64_t bytes);
  // gemm_acc_ += x · the W tile in `slot` (kb × nb, stored as `t`).
  template <class X>
  void gemm_accumulate(const X& x, const unsigned char* slot, int kb, int nb, DType t);
  // One burst between a GEMM slot and the slice (a W tile in, a Y block out; timing only
  // without values), with its span, the DMA signal and busy time.
  // values = false: a timing-only payload (no bytes move); activity: the span's name.
  void gemm_burst(tlm::tlm_command cmd, uint64_t addr, unsigned char* slot, uint64_t bytes, bool values, int j,
                  int phase, int rows, int activity);
  // The vector unit busy `cycles` on fused operator `name` of job j (span, VCD, counters).
  void gemm_vector_op(const char* name, uint64_t cycles, int j, int phase, int rows, uint64_t element_ops,
                      double& busy_ns);
  // The fused epilogues of a finished Y block (rows [m0, m0 + mb)).
  // Columns [c0, c0 + nb) of Y; the residual rows' block at r_addr of the slice.
  void gemm_epilogue(const GemmJob& job, int j, int m0, int mb, int c0, int nb, uint64_t r_addr, int phase);
  // A Y block is done (written back or gathered): counts it and the operator's end on this PE,
  // and the bytes the gather collects of it (w_stationary: its Y shard block).
  void gemm_block_done(int job, uint64_t gather_bytes);
  // W-stationary K-split (gemm_job.h GemmPePlan::owner): a partial Y block (gemm_acc_, mb × nb)
  // leaves for its owner; the owner waits for the partials of its block (mi, ni) and adds them.
  void gemm_send_partial(int j, const GemmPePlan& pl, int mi, int ni, int mb, int nb);
  void gemm_reduce(int j, const GemmPePlan& pl, int mi, int ni, int mb, int nb, int phase);
  bool has_gemm_work() const;
  // The burst and vector-unit steps both runs share (span, signals, busy time; returns the busy
  // time): gemm_burst and gemm_vector_op add their job's counters to them.
  sc_core::sc_time slice_burst(tlm::tlm_command cmd, uint64_t addr, unsigned char* slot, uint64_t bytes, bool values,
                               int phase, int op_id, int rows, int activity);
  sc_core::sc_time vector_busy_span(int activity, uint64_t cycles, int phase, int op_id, int rows, uint64_t element_ops);
  // Unfused vector kernels (pe_vector.cpp), in the compute process after its tiles.
  void vector_kernels();
  // Attention fusion off (AttentionJob::scores_in_hbm): a KV block's scores to the slice and back.
  void scores_round_trip(const TileRef& t, int rows, int n);
  void wait_for_remap(const TileRef& t);
  // A remote read (Policy B2, or a copy-on-write source on another PE): a request for `count`
  // tokens from `first` of PE `src_pe`'s held tokens of job j over the NoC to its CUBE, whose
  // server reads them from its slice; returns the response (data null when `timing_only`).
  KvMessagePtr remote_read(int j, int src_pe, int first, int count, bool timing_only);
  // Job j's KV writes (AttentionJob::kv_writes) for this PE, after its kernel launch: each copy
  // read (from this slice, or over the NoC from another PE's) and every run written, as
  // timing-only bursts (the values were placed before the run). Once per job per run.
  void write_kv(int j);
  // Two timing-only bursts (the K rows and the V rows of `bytes` each) issued together at
  // `k_addr` and `v_addr`; waits until both are done.
  void kv_burst_pair(tlm::tlm_command cmd, uint64_t k_addr, uint64_t v_addr, uint64_t bytes);
  // Waits `cycles`, records the span and moves the activity signal.
  void busy(PeActivity a, const char* name, uint64_t cycles, const TileRef& t, int64_t bytes,
            sc_core::sc_time* account);
  // The span recorder's id of activity `a` named `name` (one name per activity), interned on
  // its first use as before, then kept: a long run records millions of spans, and a name lookup
  // per span was ~2% of a timing-only run.
  int activity_id(PeActivity a, const char* name) {
    int& id = activity_ids_[size_t(a)];
    if (id < 0) id = sh_.spans.intern(name);
    return id;
  }
  void apply_mask(MatrixRM& s, const AttentionJob& job, const TileRef& t, const KvShard& sh, int first) const;
  void fill_slot(int slot, const std::vector<unsigned char>* data, int n, const AttentionJob& job);
  // A read-only pointer to the `len` bytes at `addr` of the slice, when a DMI grant (cached, or
  // asked for now) covers all of them; else null.
  const unsigned char* direct_read(uint64_t addr, uint64_t len);
  // The slice re-mapped [first, last]: drops the cached grants that overlap it.
  void invalidate_dmi(sc_dt::uint64 first, sc_dt::uint64 last);
  // A buffer of at least `bytes` for timing-only transfers (never read).
  unsigned char* scratch(uint64_t bytes);
  std::string describe_wait() const;  // for the stall watchdog

  SimShared& sh_;
  Noc& noc_;
  int group_, pe_, local_;
  int chip_pe_;  // group × pes_per_group + pe_
  int component_, dma_component_;
  std::array<int, 8> activity_ids_{-1, -1, -1, -1, -1, -1, -1, -1};  // by PeActivity (activity_id)
  int sig_activity_, sig_dma_;
  int sig_vector_ = -1;  // vector_busy: with pe.overlap = ping_pong only
  TileData q_in_tile_;    // the Q tile being computed
  std::vector<int> my_tiles_;
  // Each slot: K tile then V tile, kv_tile_tokens x d, in the job's storage type (raw bytes as
  // DMA, a remote read or a broadcast delivered them); compute widens a tile to fp32 when it uses
  // it. A local burst whose K and V each lie in one stored extent of the slice is read through
  // TLM DMI (the burst's timing still goes over b_transport), so `k` and `v` point into the
  // slice; otherwise the bytes are copied into `owned` (K then V), sized on first use. Null:
  // timing only.
  struct Slot {
    const unsigned char* k = nullptr;
    const unsigned char* v = nullptr;
    std::vector<unsigned char> owned;
  };
  // Points the slot at its own buffer (allocated on first use) and returns it for filling.
  unsigned char* own_slot(int slot, const AttentionJob& job);
  std::vector<Slot> slots_;
  std::vector<tlm::tlm_dmi> dmi_;          // DMI grants of the slice, until invalidated
  std::vector<unsigned char> scratch_;     // data buffer of timing-only transfers
  TimedQueue<int> free_slots_;
  TimedQueue<Block> full_slots_;
  TimedQueue<KvMessagePtr> responses_;
  std::map<int, uint64_t> remap_expected_, remap_received_;  // per job, bytes
  sc_core::sc_time remap_done_at_;
  sc_core::sc_event remap_progress_;
  sc_core::sc_time gemm_busy_, vector_busy_, dma_busy_;
  uint64_t macs_ = 0, gemm_tiles_ = 0, remote_bytes_ = 0, kv_tiles_skipped_ = 0, macs_skipped_ = 0;
  uint64_t vector_ops_ = 0, sram_bytes_ = 0, x_bytes_read_ = 0;
  uint64_t kv_append_bytes_ = 0, kv_copy_bytes_ = 0;
  std::vector<bool> kv_written_;  // per job of the run: its KV writes are done (write_kv)
  bool skip_masked() const { return sh_.cfg.pe.dma.masked_tiles == MaskedTilePolicy::skip; }
  size_t tiles_done_ = 0;
  WaitNote compute_wait_, dma_wait_;
  sc_core::sc_event dma_start_, compute_start_;  // begin_run
  // Weight GEMMs: the slots' bytes (a W tile or a Y block each), free slots, loaded W tiles,
  // finished Y blocks waiting for write-back.
  std::vector<std::vector<unsigned char>> gemm_slots_;
  TimedQueue<int> gemm_free_;
  TimedQueue<GemmTile> gemm_full_;
  TimedQueue<GemmTile> gemm_out_;
  // x_stationary: the next streamed tile this PE takes, and tiles that arrived before it (by
  // their place in the stream; Pe::gemm_tile_arrived).
  uint64_t gemm_next_seq_ = 0;
  std::map<uint64_t, GemmTile> gemm_early_;
  uint64_t gemm_blocks_done_ = 0, gemm_blocks_total_ = 0;
  // W-stationary K-split owner: the partial Y blocks arrived, by (job, M-block, N-block).
  std::map<std::tuple<int, int, int>, std::vector<std::shared_ptr<const GemmPartialMessage>>> gemm_partials_;
  sc_core::sc_event gemm_partial_event_;
  MatrixRM gemm_acc_, gemm_w_;  // the Y block's accumulators; a W tile widened to fp32
  MatrixRM gemm_x_;             // an X block after the RMSNorm prologue
  Eigen::VectorXf gemm_sumsq_;  // the Y block's rows' sums of squares (RMSNorm)
  sc_core::sc_event gemm_dma_start_, gemm_compute_start_, gemm_write_start_;
  MatrixRM kernel_block_;           // a kernel's row block (values)
};

}  // namespace ahbm
