#pragma once
// What the parts of one PE share (hw/pe/pe.h): the activity codes of its waveform, its counters,
// its names in the outputs, and the context each part is built with.
#include <string>
#include <vector>

#include "hw/common/observe/stats.h"
#include "hw/common/sim/sim_shared.h"
#include "hw/pe/pe_timing.h"

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

// The values behind PeStats, one run's worth: a plain struct, so a new run resets it by value
// and a new counter cannot be forgotten in the reset.
struct PeCounters {
  sc_core::sc_time gemm_busy, vector_busy, dma_busy;
  uint64_t macs = 0, gemm_tiles = 0, remote_bytes = 0, kv_tiles_skipped = 0, macs_skipped = 0;
  uint64_t vector_ops = 0, sram_bytes = 0, x_bytes_read = 0;
  uint64_t kv_append_bytes = 0, kv_copy_bytes = 0;
};

// What a PE is called in the outputs: its component and its DMA's in the span recorder, its
// signals in the trace. Made once by the Pe, in the order the outputs number them.
struct PeIds {
  int component = 0, dma_component = 0;
  int sig_activity = 0, sig_dma = 0;
  int sig_vector = -1;  // vector_busy: with pe.overlap = ping_pong only
};

// What every part of one PE is built with: the run's shared state (the run context and the job
// table), the PE's resolved config, names and counters, where it sits, and the Q tiles it takes
// part in this run (in send order; set by Pe::begin_run).
struct PeContext {
  RunContext& run;
  JobTable& table;
  const PeTiming& timing;
  const PeIds& ids;
  PeCounters& counters;
  int group, pe, chip_pe;  // its KV-head group, its index in the group (CUBE-major) and on the chip
  std::string name;        // the Pe's SystemC name (error messages)
  const std::vector<int>& my_tiles;
};

}  // namespace ahbm
