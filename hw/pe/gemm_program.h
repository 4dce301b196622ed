#pragma once
// The PE's weight-GEMM program (hw/common/contract/gemm_job.h), three processes:
//  - GEMM DMA: the PE's W tiles (Kb × Nb) from its HBM slice into the SRAM slots;
//  - GEMM compute: per W tile, the X block out of the CUBE's Q buffer and the tile on the GEMM
//    engine into the Y block's fp32 accumulators; a finished Y block goes out through the slot of
//    its last W tile (write-back) or straight to the gather;
//  - GEMM write-back: Y blocks from their slots into the HBM slice, freeing the slot.
// x_stationary jobs take their W tiles from the weight streamer instead of the GEMM DMA; a
// w_stationary K-split sends partial Y blocks to their owner over the NoC. Closed forms:
// docs/model.md "Weight GEMMs".
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "hw/common/contract/interfaces.h"
#include "hw/common/contract/kv_traffic.h"
#include "hw/noc/noc.h"
#include "hw/pe/kv_dma.h"
#include "hw/pe/pe_datapath.h"

namespace ahbm {

class GemmProgram : public sc_core::sc_module {
 public:
  // `q_in`: the CUBE's Q buffer, which holds X; K-split partials go out on `noc`.
  GemmProgram(sc_core::sc_module_name name, const PeContext& pe, PeDatapath& datapath, KvDma& dma,
              sc_core::sc_port<QTileSource>& q_in, Noc& noc);

  // Back to no GEMM state; with GEMM work for this PE, sizes the slots and starts the processes.
  void begin_run();
  // X-stationary: the weight streamer reserves one of the slots (blocks until one is free) and
  // the PE's CUBE hands it the W tile sent into it (never waits).
  int reserve_slot() { return free_.pop(); }
  void tile_arrived(const GemmTileMessage& m, int slot);
  // W-stationary K-split: a partial Y block for this PE, the owner (from its CUBE; never waits).
  void partial_arrived(std::shared_ptr<const GemmPartialMessage> m);
  // "finished i of n Y blocks of its weight GEMMs", or "" when none is outstanding.
  std::string describe_wait() const;

 private:
  // A W tile in slot `slot` of job `job`, or (write-back) the Y block it became.
  struct Tile {
    int job, slot, mi, ni, ki;
  };
  bool has_work() const;
  void dma_loop();
  void dma();
  void compute_loop();
  void compute();
  void write_loop();
  void write();
  // w_stationary job j: the PE's W shard against the X blocks out of the Q buffer (`x_in`: the
  // span name of an X block's read).
  void compute_wstat(int j, int x_in);
  // A w_stationary Y block (mi, ni) after its last W tile in `t`: to the owner, reduced, the
  // epilogue, then written back or gathered.
  void finish_wstat_block(int j, const Tile& t, int mi, int ni, int mb, int n0, int nb, int phase);
  // x_stationary job j: the PE's row blocks against the streamed W tiles; their write-backs.
  void compute_xstat(int j);
  void write_xstat(int j);
  // A W tile (kb × nb against mb rows) on the GEMM engine: the wait, its span and the counters.
  void w_tile_on_engine(int j, int phase, int mb, int nb, int kb, bool last);
  // A finished Y block's values (mb × nb at (m0, c0) of Y) into the job's Y; into the slot when
  // it is written back.
  void store_block(int j, int m0, int c0, int mb, int nb, unsigned char* slot);
  // acc_ += x · the W tile in `slot` (kb × nb, stored as `t`).
  template <class X>
  void accumulate(const X& x, const unsigned char* slot, int kb, int nb, DType t);
  // One burst between a slot and the slice (a W tile in, a Y block out) as job j's DMA time.
  void burst(tlm::tlm_command cmd, uint64_t addr, unsigned char* slot, uint64_t bytes, bool values, int j, int phase,
             int rows, int activity);
  // The vector unit busy `cycles` on fused operator `name` of job j (span, VCD, counters).
  void vector_op(const char* name, uint64_t cycles, int j, int phase, int rows, uint64_t element_ops, double& busy_ns);
  // The fused epilogues of a finished Y block (rows [m0, m0 + mb)).
  // Columns [c0, c0 + nb) of Y; the residual rows' block at r_addr of the slice.
  void epilogue(const GemmJob& job, int j, int m0, int mb, int c0, int nb, uint64_t r_addr, int phase);
  // A Y block is done (written back or gathered): counts it and the operator's end on this PE,
  // and the bytes the gather collects of it (w_stationary: its Y shard block).
  void block_done(int job, uint64_t gather_bytes);
  // W-stationary K-split (gemm_job.h GemmPePlan::owner): a partial Y block (acc_, mb × nb)
  // leaves for its owner; the owner waits for the partials of its block (mi, ni) and adds them.
  void send_partial(int j, const GemmPePlan& pl, int mi, int ni, int mb, int nb);
  void reduce(int j, const GemmPePlan& pl, int mi, int ni, int mb, int nb, int phase);

  const PeContext& pe_;
  PeDatapath& datapath_;
  KvDma& dma_;
  sc_core::sc_port<QTileSource>& q_in_;
  Noc& noc_;
  // The slots' bytes (a W tile or a Y block each), free slots, loaded W tiles, finished Y blocks
  // waiting for write-back.
  std::vector<std::vector<unsigned char>> slots_;
  TimedQueue<int> free_;
  TimedQueue<Tile> full_;
  TimedQueue<Tile> out_;
  // x_stationary: the next streamed tile this PE takes, and tiles that arrived before it (by
  // their place in the stream; tile_arrived).
  uint64_t next_seq_ = 0;
  std::map<uint64_t, Tile> early_;
  uint64_t blocks_done_ = 0, blocks_total_ = 0;
  // W-stationary K-split owner: the partial Y blocks arrived, by (job, M-block, N-block).
  std::map<std::tuple<int, int, int>, std::vector<std::shared_ptr<const GemmPartialMessage>>> partials_;
  sc_core::sc_event partial_event_;
  MatrixRM acc_, w_;  // the Y block's accumulators; a W tile widened to fp32
  MatrixRM x_;        // an X block after the RMSNorm prologue
  Eigen::VectorXf sumsq_;  // the Y block's rows' sums of squares (RMSNorm)
  sc_core::sc_event dma_start_, compute_start_, write_start_;
};

}  // namespace ahbm
