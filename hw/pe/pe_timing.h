#pragma once
// The PE's configuration, resolved once from the HwConfig when the PE is built (as DRAMSys's
// McConfig is from its JSON): the cycle as a Clock of sc_time, the engines' closed-form
// parameters, the counts and choices the PE's parts act on. The parts (hw/pe/pe.h) read this and
// never a cfg path, so what each depends on is a field here.
#include <cstdint>

#include "hw/common/base/timing.h"
#include "hw/common/config/hw_config.h"
#include "hw/common/model/engines.h"

namespace ahbm {

struct PeTiming {
  explicit PeTiming(const HwConfig& cfg);

  Clock clock;                 // the chip clock: every engine step is a whole number of its cycles
  GemmConfig gemm;             // the GEMM engine (engines.h closed forms)
  VectorConfig vector;         // the vector unit
  int kv_tile_tokens;          // pe.dma.kv_tile_tokens: tokens of one KV block in a slot
  int slots;                   // pe.dma.buffers: SRAM slots (KV blocks, or W tiles / Y blocks)
  bool ping_pong;              // pe.overlap = ping_pong: the engines as two timelines
  bool skip_masked;            // pe.dma.masked_tiles = skip: KV tiles no row sees are left out
  bool kv_writes_timed;        // pe.dma.kv_writes = timed: a job's KV writes are bursts
  uint64_t request_bytes;      // remote.request_bytes: a remote-read request on the NoC
  uint64_t page_tokens;        // remote.page_tokens: tokens per page-table entry (B1 rebuild)
  uint64_t page_rebuild_cycles;  // remote.page_rebuild_cycles: per page of a remapped replica
  uint64_t q_port_bytes_per_cycle;  // cube.q_buffer.port_bytes_per_cycle: an X block's read
  uint64_t slice_bytes;        // pe.hbm.capacity_bytes: unfused scores live at the slice's top
  int nan_state_pe;            // fault.nan_state_pe (tests): the PE whose state gets a NaN

  sc_core::sc_time cycles(uint64_t n) const { return clock.cycles(n); }
  // One KV block's engine work (engines.h block_work).
  BlockWork block(uint64_t rows, uint64_t n, uint64_t d, DType t) const {
    return block_work(gemm, vector, rows, n, d, t);
  }
};

}  // namespace ahbm
