#pragma once
// One processing element next to its HBM slice: the one module its CUBE sees (its ports, its
// KvEndpoint, begin_run and report_stats), a container of parts, each a child module built with
// the PE's resolved config (pe_timing.h) and only the shared state it needs (pe_context.h):
//  - datapath (pe_datapath.h): the GEMM engine and vector unit, their signals, spans, counters;
//  - dma (kv_dma.h): the SRAM slots, KV streaming from the slice (DMI, remote reads, B1 remap
//    copies, B5 broadcast blocks), a job's KV writes, and every other burst to the slice;
//  - attention (attention_program.h): the compute process of attention Q tiles;
//  - vector_kernels (vector_kernel_program.h): unfused vector kernels, run by the attention
//    program's process after its tiles;
//  - gemm (gemm_program.h): the three processes of a run of weight GEMMs.
// The processes are created in the order dma, compute, GEMM DMA, GEMM compute, GEMM write-back
// and begin_run starts them in that order: SystemC runs ready processes in that order, so it
// fixes the order of same-time events in every output.
#include <string>
#include <vector>

#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "hw/common/contract/interfaces.h"
#include "hw/common/contract/kv_traffic.h"
#include "hw/common/observe/stats.h"
#include "hw/common/sim/sim_shared.h"
#include "hw/noc/noc.h"
#include "hw/pe/attention_program.h"
#include "hw/pe/gemm_program.h"
#include "hw/pe/kv_dma.h"
#include "hw/pe/pe_datapath.h"
#include "hw/pe/pe_timing.h"
#include "hw/pe/vector_kernel_program.h"

namespace ahbm {

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
  void remote_response(KvMessagePtr m) override { dma_.remote_response(std::move(m)); }
  void remap_arrived(const KvMessage& m) override { dma_.remap_arrived(m); }
  void broadcast_arrived(const KvMessage& m, int slot) override { dma_.broadcast_arrived(m, slot); }
  int reserve_slot() override { return dma_.reserve_slot(); }
  // X-stationary weight GEMMs: the weight streamer reserves one of the GEMM slots (blocks until
  // one is free) and the PE's CUBE hands it the W tile sent into it (never waits).
  int reserve_gemm_slot() { return gemm_.reserve_slot(); }
  void gemm_tile_arrived(const GemmTileMessage& m, int slot) { gemm_.tile_arrived(m, slot); }
  // W-stationary K-split: a partial Y block for this PE, the owner (from its CUBE; never waits).
  void gemm_partial_arrived(std::shared_ptr<const GemmPartialMessage> m) { gemm_.partial_arrived(std::move(m)); }
  // Tiles (global indices) this PE takes part in, in send order.
  const std::vector<int>& my_tiles() const { return my_tiles_; }

  // Busy time of the engines (for utilisation statistics).
  const sc_core::sc_time& gemm_busy() const { return datapath_.counters().gemm_busy; }
  const sc_core::sc_time& vector_busy() const { return datapath_.counters().vector_busy; }
  const sc_core::sc_time& dma_busy() const { return datapath_.counters().dma_busy; }
  uint64_t macs() const { return datapath_.counters().macs; }
  uint64_t macs_skipped() const { return datapath_.counters().macs_skipped; }  // of the fully masked KV tiles left out
  uint64_t gemm_tiles_issued() const { return datapath_.counters().gemm_tiles; }
  uint64_t remote_bytes() const { return datapath_.counters().remote_bytes; }

 private:
  // The slice re-mapped [first, last] (the socket's backward path): the DMA drops its grants.
  void invalidate_dmi(sc_dt::uint64 first, sc_dt::uint64 last) { dma_.invalidate_dmi(first, last); }
  std::string describe_wait() const;  // for the stall watchdog

  RunContext& run_;
  JobTable& table_;
  int group_, pe_;
  const PeTiming timing_;
  const PeIds ids_;
  std::vector<int> my_tiles_;
  // The parts, in the order their processes must be created (see above).
  PeDatapath datapath_;
  const PeContext ctx_;
  KvDma dma_;
  VectorKernelProgram kernels_;
  AttentionProgram attention_;
  GemmProgram gemm_;
};

}  // namespace ahbm
