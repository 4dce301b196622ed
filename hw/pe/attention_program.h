#pragma once
// The PE's attention program: per Q tile, reads Q from the CUBE's Q buffer (q_in), then per KV
// tile from the DMA's slots runs S = Q K^T (GEMM engine), the online-softmax update (vector unit:
// scale, mask, exp, sums, state rescale) and O += P V (GEMM engine), and finally sends its
// (m, l, o) state to the CUBE reducer (state_out). Each step waits its closed-form cycle count
// (engines.h); values are computed on whole blocks with Eigen when the job carries values. With
// pe.overlap = ping_pong the steps are placed on the two engine timelines (KvBlockPipeline).
// Its process then runs the vector-kernel program (a run holds one kind of job).
#include "hw/common/contract/interfaces.h"
#include "hw/pe/kv_dma.h"
#include "hw/pe/pe_datapath.h"
#include "hw/pe/vector_kernel_program.h"

namespace ahbm {

class AttentionProgram : public sc_core::sc_module {
 public:
  // `local_index`: the PE's place in its CUBE (the reducer's input).
  AttentionProgram(sc_core::sc_module_name name, const PeContext& pe, PeDatapath& datapath, KvDma& dma,
                   VectorKernelProgram& kernels, sc_core::sc_port<QTileSource>& q_in,
                   sc_core::sc_port<StateSink>& state_out, int local_index);

  // Back to no tile computed and starts its process for the run.
  void begin_run();
  size_t tiles_done() const { return tiles_done_; }
  // What compute waits for (the stall watchdog's report).
  const WaitNote& waiting() const { return wait_; }

 private:
  void compute_loop();
  // One run: computes its Q tiles.
  void compute_tiles();
  // The KV blocks Q tile `t` meets (the DMA streams exactly these); counts the skipped ones.
  uint64_t count_blocks(const TileRef& t);
  // pe.overlap = none (or unfused attention): each KV block's steps one after another.
  void compute_blocks(const TileRef& t, int gt, uint64_t blocks, const StatePtr& acc);
  // pe.overlap = ping_pong: the KV blocks of Q tile `t` (global index gt) on the engine timelines.
  void compute_blocks_overlapped(const TileRef& t, int gt, uint64_t blocks, const StatePtr& acc);
  // Counts a block's MACs and issued engine tiles.
  void count_block(const AttentionJob& job, int rows, int n);
  // The values of block `blk` (the b-th of tile t) folded into `acc` (null: timing only).
  void accumulate_block(const StatePtr& acc, const KvDma::Block& blk, const TileRef& t, int gt, uint64_t b);
  void apply_mask(MatrixRM& s, const AttentionJob& job, const TileRef& t, const KvShard& kv, int first) const;
  // Attention fusion off (AttentionJob::scores_in_hbm): a KV block's scores to the slice and back.
  void scores_round_trip(const TileRef& t, int rows, int n);

  const PeContext& pe_;
  PeDatapath& datapath_;
  KvDma& dma_;
  VectorKernelProgram& kernels_;
  sc_core::sc_port<QTileSource>& q_in_;
  sc_core::sc_port<StateSink>& state_out_;
  int local_;
  TileData q_tile_;  // the Q tile being computed
  size_t tiles_done_ = 0;
  WaitNote wait_;
  sc_core::sc_event start_;  // begin_run
};

}  // namespace ahbm
