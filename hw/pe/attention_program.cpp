#include "hw/pe/attention_program.h"

#include <algorithm>
#include <limits>
#include <optional>

namespace ahbm {

AttentionProgram::AttentionProgram(sc_core::sc_module_name name, const PeContext& pe, PeDatapath& datapath, KvDma& dma,
                                   VectorKernelProgram& kernels, sc_core::sc_port<QTileSource>& q_in,
                                   sc_core::sc_port<StateSink>& state_out, int local_index)
    : sc_core::sc_module(name),
      pe_(pe),
      datapath_(datapath),
      dma_(dma),
      kernels_(kernels),
      q_in_(q_in),
      state_out_(state_out),
      local_(local_index) {
  SC_HAS_PROCESS(AttentionProgram);
  SC_THREAD(compute_loop);
}

void AttentionProgram::begin_run() {
  tiles_done_ = 0;
  wait_.clear();
  RunContext::start(start_);
}

namespace {
// A KV tile as fp32: fp32 storage is used in place; fp16/bf16 is widened into `scratch`.
ConstMapRM widen(DType t, const unsigned char* bytes, int n, int d, MatrixRM& scratch) {
  if (t == DType::fp32) return ConstMapRM(reinterpret_cast<const float*>(bytes), n, d);
  scratch.resize(n, d);
  decode(t, bytes, uint64_t(n) * uint64_t(d), scratch.data());
  return ConstMapRM(scratch.data(), n, d);
}
}  // namespace

void AttentionProgram::apply_mask(MatrixRM& s, const AttentionJob& job, const TileRef& t, const KvShard& kv,
                                  int first) const {
  // Fast path: shared keys all at or before every row's position need no mask.
  int32_t min_row_pos = std::numeric_limits<int32_t>::max();
  for (int r = t.row_begin; r < t.row_end; ++r) min_row_pos = std::min(min_row_pos, job.rows[size_t(r)].pos);
  bool all_visible = true;
  for (int c = 0; c < s.cols() && all_visible; ++c) {
    const KvInfo& k = kv.info[size_t(first + c)];
    all_visible = k.owner == kSharedOwner && k.pos <= min_row_pos;
  }
  if (all_visible) return;
  const float neg_inf = -std::numeric_limits<float>::infinity();
  for (int r = 0; r < s.rows(); ++r)
    for (int c = 0; c < s.cols(); ++c)
      if (!visible(job.rows[size_t(t.row_begin + r)], kv.info[size_t(first + c)])) s(r, c) = neg_inf;
}

void AttentionProgram::count_block(const AttentionJob& job, int rows, int n) {
  const GemmConfig& g = pe_.timing.gemm;
  PeCounters& c = pe_.counters;
  const uint64_t d = uint64_t(job.head_dim);
  const BlockCounts b = block_counts(pe_.timing.vector, uint64_t(rows), uint64_t(n), d, dtype_bytes(job.dtype));
  c.macs += b.macs;
  c.vector_ops += b.vector_ops;
  c.sram_bytes += b.sram_bytes;
  c.gemm_tiles += gemm_issued_tiles(g, uint64_t(rows), uint64_t(n), d, job.dtype) +
                  gemm_issued_tiles(g, uint64_t(rows), d, uint64_t(n), job.dtype);
}

void AttentionProgram::accumulate_block(const StatePtr& acc, const KvDma::Block& blk, const TileRef& t, int gt,
                                        uint64_t b) {
  if (!acc) return;
  const AttentionJob& job = pe_.table.jobs[size_t(t.job)];
  const int rows = t.rows(), d = job.head_dim, n = blk.n;
  // No wait from here to the end of the block: the shared scratch is this PE's meanwhile.
  TileScratch& x = pe_.run.scratch;
  const KvDma::Slot& slot = dma_.slot(blk.slot);
  const ConstMapRM k = widen(job.dtype, slot.k, n, d, x.k);
  const ConstMapRM v = widen(job.dtype, slot.v, n, d, x.v);
  gemm_abt(ConstMapRM(q_tile_->data(), rows, d), k, x.s);
  x.s *= job.scale;
  apply_mask(x.s, job, t, job.shards[size_t(blk.src_pe)], blk.first);
  block_state_into(x.s, v, x.state, x.block);
  merge_into(*acc, x.state);
  if (b == 0 && pe_.timing.nan_state_pe == pe_.pe)  // FAULT INJECTION (tests): a NaN the guard must find
    acc->o(0, 0) = std::numeric_limits<float>::quiet_NaN();
  pe_.run.guard.check(*acc, pe_.ids.component, gt);
}

void AttentionProgram::compute_blocks_overlapped(const TileRef& t, int gt, uint64_t blocks, const StatePtr& acc) {
  // pe.overlap = ping_pong: the engines are two timelines (engines.h KvBlockPipeline). Each KV
  // block's work is placed on them when the block is in SRAM, its spans and signal changes
  // recorded at the placed times, and its slot freed when its P V ends; the process waits only
  // for KV blocks (until the pending softmax ends, then the pending P V goes first) and for the
  // engines to finish before the state leaves. Values are computed when the block is taken:
  // the order of the merges, hence O, is that of `none`.
  const AttentionJob& job = pe_.table.jobs[size_t(t.job)];
  const int rows = t.rows(), d = job.head_dim;
  using Pipeline = KvBlockPipeline<sc_core::sc_time>;
  Pipeline engines(true);
  engines.begin(sc_core::sc_time_stamp());
  std::vector<Pipeline::Placed> placed;
  auto record = [&] {
    for (const Pipeline::Placed& op : placed) {
      if (op.op == EngineOp::gemm_pv) dma_.release(op.tag, op.end - sc_core::sc_time_stamp());
      datapath_.place(op, t);
    }
    placed.clear();
  };
  for (uint64_t b = 0; b < blocks; ++b) {
    wait_.set("a KV tile from its DMA", gt);
    std::optional<KvDma::Block> blk;
    if (engines.pending()) blk = dma_.take_by(engines.lookahead_deadline());
    if (!blk) {
      engines.flush(placed);  // no next block in time: the pending P V goes first
      record();
      blk = dma_.take();
    }
    wait_.clear();
    const BlockWork w = pe_.timing.block(uint64_t(rows), uint64_t(blk->n), uint64_t(d), job.dtype);
    const PeTiming& tm = pe_.timing;
    engines.add(blk->slot, sc_core::sc_time_stamp(), {tm.cycles(w.qk), tm.cycles(w.softmax), tm.cycles(w.pv)}, placed);
    record();
    count_block(job, rows, blk->n);
    accumulate_block(acc, *blk, t, gt, b);
  }
  engines.flush(placed);
  record();
  if (engines.end() > sc_core::sc_time_stamp()) sc_core::wait(engines.end() - sc_core::sc_time_stamp());
}

void AttentionProgram::compute_blocks(const TileRef& t, int gt, uint64_t blocks, const StatePtr& acc) {
  const AttentionJob& job = pe_.table.jobs[size_t(t.job)];
  const PeTiming& tm = pe_.timing;
  PeCounters& c = pe_.counters;
  const int rows = t.rows(), d = job.head_dim;
  for (uint64_t b = 0; b < blocks; ++b) {
    wait_.set("a KV tile from its DMA", gt);
    const KvDma::Block blk = dma_.take();
    wait_.clear();
    const int n = blk.n;
    datapath_.busy(PeActivity::gemm_qk, "gemm_qk", gemm_cycles(tm.gemm, rows, n, d, job.dtype), t, 0, &c.gemm_busy);
    if (job.scores_in_hbm) scores_round_trip(t, rows, n);
    datapath_.busy(PeActivity::softmax, "softmax", softmax_cycles(tm.vector, rows, n, d), t, 0, &c.vector_busy);
    datapath_.busy(PeActivity::gemm_pv, "gemm_pv", gemm_cycles(tm.gemm, rows, d, n, job.dtype), t, 0, &c.gemm_busy);
    count_block(job, rows, n);
    accumulate_block(acc, blk, t, gt, b);
    dma_.release(blk.slot);
  }
}

void AttentionProgram::scores_round_trip(const TileRef& t, int rows, int n) {
  // The Q·Kᵀ kernel writes S (rows × n fp32) out, the softmax·V kernel reads it back: timing-only
  // bursts (the values stay in the datapath, fp32 either way) in a scratch region at the top of
  // the slice, above what the runtime places there (KV and weights fill it from the bottom).
  SpanRecorder& spans = pe_.run.spans;
  const uint64_t bytes = uint64_t(rows) * uint64_t(n) * 4, addr = pe_.timing.slice_bytes - bytes;
  dma_.slice_burst(tlm::TLM_WRITE_COMMAND, addr, nullptr, bytes, false, t.phase_id, t.agent_id, rows, spans.intern("scores_out"));
  dma_.slice_burst(tlm::TLM_READ_COMMAND, addr, nullptr, bytes, false, t.phase_id, t.agent_id, rows, spans.intern("scores_in"));
}

void AttentionProgram::compute_loop() {
  for (;;) {
    sc_core::wait(start_);  // begin_run
    compute_tiles();
    kernels_.run();
  }
}

uint64_t AttentionProgram::count_blocks(const TileRef& t) {
  const AttentionJob& job = pe_.table.jobs[size_t(t.job)];
  const int kv_tile = pe_.timing.kv_tile_tokens;
  // KV tiles this Q tile meets: every owner's whole shard when broadcast, else its segments.
  uint64_t blocks = 0;
  if (job.kv_broadcast) {
    for (const KvShard& s : job.shards) blocks += ceil_div(uint64_t(s.tokens), uint64_t(kv_tile));
    return blocks;
  }
  // The DMA streams exactly these (KvDma::dma_tiles); the skipped ones are counted here.
  uint64_t all = 0, all_tokens = 0, tokens = 0;
  for (const KvSegment& s : pe_segments(job, pe_.pe)) {
    all += ceil_div(uint64_t(s.count), uint64_t(kv_tile));
    all_tokens += uint64_t(s.count);
  }
  const std::vector<KvBlock> streamed =
      pe_kv_blocks(job, pe_.pe, job.tiles[size_t(t.index)], kv_tile, pe_.timing.skip_masked);
  for (const KvBlock& b : streamed) tokens += uint64_t(b.n);
  blocks = streamed.size();
  pe_.counters.kv_tiles_skipped += all - blocks;
  pe_.counters.macs_skipped += 2 * uint64_t(t.rows()) * (all_tokens - tokens) * uint64_t(job.head_dim);
  return blocks;
}

void AttentionProgram::compute_tiles() {
  for (int gt : pe_.my_tiles) {
    const TileRef& t = pe_.table.tiles[size_t(gt)];
    const AttentionJob& job = pe_.table.jobs[size_t(t.job)];
    const int rows = t.rows(), d = job.head_dim;
    const uint64_t blocks = count_blocks(t);

    datapath_.show(PeActivity::q_read);
    wait_.set("its Q tile in the CUBE Q buffer", gt);
    q_tile_ = q_in_->read_q(gt, pe_.ids.component);
    pe_.counters.sram_bytes += uint64_t(rows) * uint64_t(d) * dtype_bytes(job.dtype);
    wait_.clear();
    datapath_.show(PeActivity::idle);

    StatePtr acc = job.values ? std::make_shared<AttnState>(AttnState::empty(rows, d)) : nullptr;
    // Unfused attention's two kernels alternate per KV block through HBM: no ping-pong overlap.
    if (pe_.timing.ping_pong && !job.scores_in_hbm) compute_blocks_overlapped(t, gt, blocks, acc);
    else compute_blocks(t, gt, blocks, acc);
    datapath_.show(PeActivity::send_state);
    state_out_->send_state(local_, gt, std::move(acc), pe_.ids.component);
    q_tile_.reset();
    datapath_.show(PeActivity::idle);
    ++tiles_done_;
  }
}

}  // namespace ahbm
