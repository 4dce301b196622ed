#include "hw/pe/pe_timing.h"

namespace ahbm {

PeTiming::PeTiming(const HwConfig& cfg)
    : clock(cfg.clock_ghz),
      gemm(cfg.pe.gemm),
      vector(cfg.pe.vector),
      kv_tile_tokens(cfg.pe.dma.kv_tile_tokens),
      slots(cfg.pe.dma.buffers),
      ping_pong(cfg.pe.ping_pong()),
      skip_masked(cfg.pe.dma.masked_tiles == MaskedTilePolicy::skip),
      kv_writes_timed(cfg.pe.dma.kv_writes == KvWritePolicy::timed),
      request_bytes(uint64_t(cfg.remote.request_bytes)),
      page_tokens(uint64_t(cfg.remote.page_tokens)),
      page_rebuild_cycles(uint64_t(cfg.remote.page_rebuild_cycles)),
      q_port_bytes_per_cycle(uint64_t(cfg.cube.q_buffer.port_bytes_per_cycle)),
      slice_bytes(cfg.pe.hbm.capacity_bytes),
      nan_state_pe(cfg.fault.nan_state_pe) {}

}  // namespace ahbm
