#include "hw/pe/gemm_program.h"

#include <algorithm>

#include "hw/common/model/vector_ops.h"

namespace ahbm {

namespace {
// [first, first + count) of block i of edge `whole` cut into blocks of `block`.
std::pair<int, int> block_range(int whole, int block, int i) {
  const int first = i * block;
  return {first, std::min(block, whole - first)};
}
}  // namespace

GemmProgram::GemmProgram(sc_core::sc_module_name name, const PeContext& pe, PeDatapath& datapath, KvDma& dma,
                         sc_core::sc_port<QTileSource>& q_in, Noc& noc)
    : sc_core::sc_module(name), pe_(pe), datapath_(datapath), dma_(dma), q_in_(q_in), noc_(noc) {
  SC_HAS_PROCESS(GemmProgram);
  SC_THREAD(dma_loop);
  SC_THREAD(compute_loop);
  SC_THREAD(write_loop);
}

void GemmProgram::begin_run() {
  // A run of weight GEMMs (none in a run of attention jobs: those runs schedule nothing more).
  free_.clear();
  full_.clear();
  out_.clear();
  next_seq_ = 0;
  early_.clear();
  partials_.clear();
  blocks_done_ = blocks_total_ = 0;
  if (!has_work()) return;
  const GemmRun& g = pe_.table.gemm;
  uint64_t slot_bytes = 0;
  for (size_t j = 0; j < g.jobs.size(); ++j) {
    const GemmPePlan& pl = g.plans[j][size_t(pe_.chip_pe)];
    if (!pl.active() && !pl.receives()) continue;
    slot_bytes = std::max(slot_bytes, pl.blk.slot_bytes);
    blocks_total_ += gemm_y_blocks(g.jobs[j], pl, g.columns[j]);
  }
  slots_.resize(size_t(pe_.timing.slots));
  for (int s = 0; s < pe_.timing.slots; ++s) {
    if (slots_[size_t(s)].size() < slot_bytes) slots_[size_t(s)].resize(slot_bytes);
    free_.push(s);
  }
  RunContext::start(dma_start_);
  RunContext::start(compute_start_);
  RunContext::start(write_start_);
}

std::string GemmProgram::describe_wait() const {
  if (blocks_done_ >= blocks_total_) return "";
  return "finished " + std::to_string(blocks_done_) + " of " + std::to_string(blocks_total_) +
         " Y blocks of its weight GEMMs";
}

bool GemmProgram::has_work() const {
  for (const auto& per_pe : pe_.table.gemm.plans)
    if (per_pe[size_t(pe_.chip_pe)].active() || per_pe[size_t(pe_.chip_pe)].receives()) return true;
  return false;
}

void GemmProgram::dma_loop() {
  for (;;) {
    sc_core::wait(dma_start_);  // begin_run of a run with weight GEMMs
    dma();
  }
}

void GemmProgram::compute_loop() {
  for (;;) {
    sc_core::wait(compute_start_);
    compute();
  }
}

void GemmProgram::write_loop() {
  for (;;) {
    sc_core::wait(write_start_);
    write();
  }
}

void GemmProgram::burst(tlm::tlm_command cmd, uint64_t addr, unsigned char* slot, uint64_t bytes, bool values, int j,
                        int phase, int rows, int activity) {
  GemmRun& g = pe_.table.gemm;
  g.stats[size_t(j)].dma_busy_ns +=
      to_ns(dma_.slice_burst(cmd, addr, slot, bytes, values, phase, g.op_ids[size_t(j)], rows, activity));
}

void GemmProgram::dma() {
  GemmRun& g = pe_.table.gemm;
  for (size_t j = 0; j < g.jobs.size(); ++j) {
    const GemmJob& job = g.jobs[j];
    const GemmPePlan& pl = g.plans[j][size_t(pe_.chip_pe)];
    // x_stationary: the weight streamer reads the W tiles and multicasts them into the slots.
    if (!pl.active() || job.x_stationary()) continue;
    pe_.run.wait_launched(g.stats[j].launch_ns);  // W is read for a launched kernel only
    const uint64_t b = job.elem_bytes(), k_p = uint64_t(pl.shard.k_count);
    const int phase = pe_.run.spans.intern(job.phase);
    for (int mi = 0; mi < pl.m_blocks(job.m); ++mi)
      for (int ni = 0; ni < pl.n_blocks(); ++ni) {
        const auto [n0, nb] = block_range(pl.shard.n_count, pl.blk.nb, ni);
        for (int ki = 0; ki < pl.k_blocks(); ++ki) {
          const auto [k0, kb] = block_range(pl.shard.k_count, pl.blk.kb, ki);
          const int slot = free_.pop();
          // N-block ni is K_p × nb, row-major, after the ni full-width N-blocks before it.
          const uint64_t addr = pl.w_base + uint64_t(n0) * k_p * b + uint64_t(k0) * uint64_t(nb) * b;
          const uint64_t bytes = uint64_t(kb) * uint64_t(nb) * b;
          burst(tlm::TLM_READ_COMMAND, addr, slots_[size_t(slot)].data(), bytes, job.values(), int(j), phase, kb,
                g.activity_in);
          g.stats[j].w_bytes_read += bytes;
          full_.push({int(j), slot, mi, ni, ki});
        }
      }
  }
}

void GemmProgram::compute() {
  const GemmRun& g = pe_.table.gemm;
  // Interned before any job's phase, as the span recorder numbers names in first-use order.
  const int x_in = pe_.run.spans.intern("x_in");
  for (size_t j = 0; j < g.jobs.size(); ++j) {
    pe_.run.wait_launched(g.stats[j].launch_ns);
    if (g.jobs[j].x_stationary()) compute_xstat(int(j));
    else if (g.plans[j][size_t(pe_.chip_pe)].active()) compute_wstat(int(j), x_in);
  }
}

void GemmProgram::w_tile_on_engine(int j, int phase, int mb, int nb, int kb, bool last) {
  GemmRun& g = pe_.table.gemm;
  const GemmJob& job = g.jobs[size_t(j)];
  const GemmConfig& engine = pe_.timing.gemm;
  GemmOpStats& st = g.stats[size_t(j)];
  PeCounters& c = pe_.counters;
  const uint64_t tiles = gemm_tiles(engine, uint64_t(mb), uint64_t(nb), uint64_t(kb));
  const uint64_t cycles = tiles * gemm_issue_interval(engine, job.dtype) + (last ? engine.pipeline_latency : 0);
  const sc_core::sc_time busy =
      datapath_.gemm(PeActivity::gemm_w, g.op_ids[size_t(j)], cycles, phase, g.op_ids[size_t(j)], mb, 0);
  c.gemm_busy += busy;
  st.gemm_busy_ns += to_ns(busy);
  c.sram_bytes += uint64_t(kb) * uint64_t(nb) * job.elem_bytes();  // the W tile
  st.macs += uint64_t(mb) * uint64_t(nb) * uint64_t(kb);
  st.gemm_tiles += tiles;
  c.macs += uint64_t(mb) * uint64_t(nb) * uint64_t(kb);
  c.gemm_tiles += tiles;
}

void GemmProgram::store_block(int j, int m0, int c0, int mb, int nb, unsigned char* slot) {
  GemmRun& g = pe_.table.gemm;
  const GemmJob& job = g.jobs[size_t(j)];
  if (!job.values()) return;
  g.y[size_t(j)].block(m0, c0, mb, nb) += acc_;
  pe_.run.guard.check(acc_, pe_.ids.component, -1);
  if (job.write_back) std::copy_n(reinterpret_cast<const unsigned char*>(acc_.data()), size_t(mb) * size_t(nb) * 4, slot);
}

void GemmProgram::compute_wstat(int j, int x_in) {
  GemmRun& g = pe_.table.gemm;
  const GemmJob& job = g.jobs[size_t(j)];
  const GemmPePlan& pl = g.plans[size_t(j)][size_t(pe_.chip_pe)];
  const uint64_t b = job.elem_bytes();
  const int phase = pe_.run.spans.intern(job.phase);
  GemmOpStats& st = g.stats[size_t(j)];
  const GemmFusion& fu = job.fused;
  for (int mi = 0; mi < pl.m_blocks(job.m); ++mi) {
    const auto [m0, mb] = block_range(job.m, pl.blk.mb, mi);
    // The M-block's X rows must have been written into the CUBE's Q buffer (gemm_job.h GemmXChunk).
    q_in_->wait_x(gemm_x_chunk_of(g.x_chunks, j, m0 + mb - 1));
    for (int ni = 0; ni < pl.n_blocks(); ++ni) {
      const auto [n0, nb] = block_range(pl.shard.n_count, pl.blk.nb, ni);
      if (job.values()) acc_.setZero(mb, nb);
      if (fu.rms_norm) sumsq_.setZero(mb);
      for (int ki = 0; ki < pl.k_blocks(); ++ki) {
        const auto [k0, kb] = block_range(pl.shard.k_count, pl.blk.kb, ki);
        const Tile t = full_.pop();
        const bool last = ki + 1 == pl.k_blocks();
        // The X block (mb × kb) out of the Q buffer through a read port, then the W tile on
        // the engine; the accumulators drain (pipeline latency) once per Y block.
        const uint64_t x_bytes = uint64_t(mb) * uint64_t(kb) * b;
        datapath_.gemm(PeActivity::q_read, x_in, ceil_div(x_bytes, pe_.timing.q_port_bytes_per_cycle), phase,
                       g.op_ids[size_t(j)], mb, int64_t(x_bytes));
        // RMSNorm prologue on the X block: the rows' sums of squares, X ⊙ g (vector_ops.h).
        if (fu.rms_norm)
          vector_op("rms_norm", rms_prologue_cycles(pe_.timing.vector, uint64_t(mb), uint64_t(kb)), j, phase, mb,
                    uint64_t(mb) * uint64_t(kb) * VectorOpCost::rms_prologue, st.norm_busy_ns);
        w_tile_on_engine(j, phase, mb, nb, kb, last);
        st.x_bytes_read += x_bytes;
        pe_.counters.x_bytes_read += x_bytes;
        pe_.counters.sram_bytes += x_bytes;  // the X block
        unsigned char* slot = slots_[size_t(t.slot)].data();
        if (job.values()) {
          // No wait from here to the end of the block: the values are this PE's meanwhile.
          const ConstMapRM x(job.x.data(), job.m, job.k);
          const auto xb = x.block(m0, pl.shard.k_begin + k0, mb, kb);
          if (fu.rms_norm) {
            x_ = xb;
            rms_prologue_apply(x_, fu.norm_weight.data() + pl.shard.k_begin + k0, sumsq_);
          }
          if (fu.rms_norm) accumulate(x_, slot, kb, nb, job.dtype);
          else accumulate(xb, slot, kb, nb, job.dtype);
        }
        if (!last) {
          free_.push(t.slot);
          continue;
        }
        finish_wstat_block(j, t, mi, ni, mb, n0, nb, phase);
      }
    }
  }
}

void GemmProgram::finish_wstat_block(int j, const Tile& t, int mi, int ni, int mb, int n0, int nb, int phase) {
  const GemmJob& job = pe_.table.gemm.jobs[size_t(j)];
  const GemmPePlan& pl = pe_.table.gemm.plans[size_t(j)][size_t(pe_.chip_pe)];
  const int m0 = mi * pl.blk.mb;
  // A K-split (no fused operators then: check_fusion): a later K part's partial block leaves for
  // its owner; the owner adds the others' into its own.
  if (pl.owner >= 0) {
    send_partial(j, pl, mi, ni, mb, nb);
    free_.push(t.slot);
    block_done(j, 0);
    return;
  }
  if (pl.partials > 0) reduce(j, pl, mi, ni, mb, nb, phase);
  if (job.fused.epilogue())
    epilogue(job, j, m0, mb, pl.shard.n_begin + n0, nb,
             pl.r_base + (uint64_t(m0) * uint64_t(pl.shard.n_count) + uint64_t(mb) * uint64_t(n0)) * 4, phase);
  store_block(j, m0, pl.shard.n_begin + n0, mb, nb, slots_[size_t(t.slot)].data());
  if (job.write_back) {
    out_.push(t);  // the slot now holds the Y block
  } else {
    free_.push(t.slot);
    block_done(j, gemm_y_block_bytes(job.fused, mb, nb));
  }
}

template <class X>
void GemmProgram::accumulate(const X& x, const unsigned char* slot, int kb, int nb, DType t) {
  if (t == DType::fp32) {
    const ConstMapRM w(reinterpret_cast<const float*>(slot), kb, nb);
    acc_.noalias() += x * w;
  } else {
    w_.resize(kb, nb);
    decode(t, slot, uint64_t(kb) * uint64_t(nb), w_.data());
    acc_.noalias() += x * w_;
  }
}

void GemmProgram::tile_arrived(const GemmTileMessage& m, int slot) {
  if (m.data) std::copy(m.data->begin(), m.data->end(), slots_[size_t(slot)].begin());
  size_t i = 0;
  while (m.dst_pes[i] != pe_.chip_pe) ++i;
  // Compute takes the stream in order: a tile that overtook an earlier one (a faster holder
  // slice) waits in its slot until the earlier ones are in.
  early_[m.seqs[i]] = {m.job, slot, 0, 0, 0};
  for (auto it = early_.begin(); it != early_.end() && it->first == next_seq_; it = early_.erase(it)) {
    full_.push(it->second);
    ++next_seq_;
  }
}

void GemmProgram::compute_xstat(int j) {
  GemmRun& g = pe_.table.gemm;
  const GemmJob& job = g.jobs[size_t(j)];
  const GemmPePlan& pl = g.plans[size_t(j)][size_t(pe_.chip_pe)];
  if (!pl.receives()) return;
  const uint64_t b = job.elem_bytes(), k = uint64_t(job.k);
  const int phase = pe_.run.spans.intern(job.phase);
  GemmOpStats& st = g.stats[size_t(j)];
  const GemmFusion& fu = job.fused;
  for (int mi = 0; mi < pl.row_blocks(); ++mi) {
    const auto [r0, mb] = block_range(pl.row_count, pl.blk.mb, mi);
    const int m0 = pl.row_begin + r0;
    // The block's rows of X, whole K, from the PE's own slice into SRAM once: they meet every W
    // tile of the stream (timing only: the values come with the job).
    const uint64_t x_bytes = uint64_t(mb) * k * b;
    burst(tlm::TLM_READ_COMMAND, pl.x_base + uint64_t(r0) * k * b, nullptr, x_bytes, false, j, phase, mb,
          pe_.run.spans.intern("x_in"));
    st.x_hbm_bytes_read += x_bytes;
    pe_.counters.sram_bytes += x_bytes;
    // RMSNorm prologue once on the whole rows (not per W tile: the rows stay).
    if (fu.rms_norm) {
      sumsq_.setZero(mb);
      vector_op("rms_norm", rms_prologue_cycles(pe_.timing.vector, uint64_t(mb), k), j, phase, mb,
                uint64_t(mb) * k * VectorOpCost::rms_prologue, st.norm_busy_ns);
    }
    if (job.values()) {
      x_ = ConstMapRM(job.x.data(), job.m, job.k).block(m0, 0, mb, job.k);
      if (fu.rms_norm) rms_prologue_apply(x_, fu.norm_weight.data(), sumsq_);
    }
    // The W stream, in the order the weight streamer sends it: column groups, their N-blocks,
    // each N-block's holders in K order, their K-blocks.
    for (const GemmColumns& c : g.columns[size_t(j)])
      for (int n0 = 0; n0 < c.n_count; n0 += pl.blk.nb) {
        const int nb = std::min(pl.blk.nb, c.n_count - n0), c0 = c.n_begin + n0;
        if (job.values()) acc_.setZero(mb, nb);
        for (size_t hi = 0; hi < c.holders.size(); ++hi) {
          const GemmShard& hs = g.plans[size_t(j)][size_t(c.holders[hi])].shard;
          for (int k0 = 0; k0 < hs.k_count; k0 += pl.blk.kb) {
            const int kb = std::min(pl.blk.kb, hs.k_count - k0);
            const bool last = hi + 1 == c.holders.size() && k0 + kb == hs.k_count;
            const Tile t = full_.pop();
            w_tile_on_engine(j, phase, mb, nb, kb, last);
            unsigned char* slot = slots_[size_t(t.slot)].data();
            if (job.values()) accumulate(x_.middleCols(hs.k_begin + k0, kb), slot, kb, nb, job.dtype);
            if (!last) {
              free_.push(t.slot);
              continue;
            }
            if (fu.epilogue())
              epilogue(job, j, m0, mb, c0, nb, pl.r_base + (uint64_t(r0) * uint64_t(job.n) + uint64_t(mb) * uint64_t(c0)) * 4,
                       phase);
            store_block(j, m0, c0, mb, nb, slot);
            if (job.write_back) {
              out_.push({j, t.slot, mi, c0, nb});  // ni: the block's first column, ki: its width
            } else {
              free_.push(t.slot);
              block_done(j, gemm_y_block_bytes(fu, mb, nb));  // it leaves the PE
            }
          }
        }
      }
  }
}

void GemmProgram::write_xstat(int j) {
  GemmRun& g = pe_.table.gemm;
  const GemmJob& job = g.jobs[size_t(j)];
  const GemmPePlan& pl = g.plans[size_t(j)][size_t(pe_.chip_pe)];
  const int phase = pe_.run.spans.intern(job.phase);
  for (uint64_t i = gemm_y_blocks(job, pl, g.columns[size_t(j)]); i > 0; --i) {
    const Tile t = out_.pop();
    const auto [r0, mb] = block_range(pl.row_count, pl.blk.mb, t.mi);
    // The M-block's Y rows: mb × N, its column blocks one after another.
    const uint64_t addr = pl.y_base + (uint64_t(r0) * uint64_t(job.n) + uint64_t(mb) * uint64_t(t.ni)) * 4;
    const uint64_t bytes = gemm_y_block_bytes(job.fused, mb, t.ki);
    burst(tlm::TLM_WRITE_COMMAND, addr, slots_[size_t(t.slot)].data(), bytes, job.values(), j, phase, mb, g.activity_out);
    g.stats[size_t(j)].y_bytes_written += bytes;
    pe_.counters.sram_bytes += bytes;
    free_.push(t.slot);
    block_done(j, 0);
  }
}

void GemmProgram::vector_op(const char* name, uint64_t cycles, int j, int phase, int rows, uint64_t element_ops,
                            double& busy_ns) {
  if (cycles == 0) return;
  GemmRun& g = pe_.table.gemm;
  busy_ns += to_ns(datapath_.vector_op(pe_.run.spans.intern(name), cycles, phase, g.op_ids[size_t(j)], rows, element_ops));
  g.stats[size_t(j)].vector_ops += element_ops;
}

void GemmProgram::epilogue(const GemmJob& job, int j, int m0, int mb, int c0, int nb, uint64_t r_addr, int phase) {
  const GemmFusion& fu = job.fused;
  const VectorConfig& v = pe_.timing.vector;
  GemmOpStats& st = pe_.table.gemm.stats[size_t(j)];
  auto op = [&](const char* name, uint64_t cycles, uint64_t element_ops, double& busy_ns) {
    vector_op(name, cycles, j, phase, mb, element_ops, busy_ns);
  };
  const uint64_t rows = uint64_t(mb), block = uint64_t(mb) * uint64_t(nb);
  if (fu.rms_norm) {
    op("rms_norm", rms_scale_cycles(v, rows, uint64_t(nb)), rows * VectorOpCost::rms_row + block * VectorOpCost::rms_scale,
       st.norm_busy_ns);
    if (job.values()) rms_scale_apply(acc_, sumsq_, job.k, fu.rms_eps);
  }
  if (fu.rope()) {
    const uint64_t rotated = uint64_t(std::count_if(fu.rope_col.begin() + c0, fu.rope_col.begin() + c0 + nb, [](int c) { return c >= 0; }));
    op("rope", rope_cycles(v, rows, rotated), rows * rotated * VectorOpCost::rope, st.rope_busy_ns);
    if (job.values()) rope_apply(acc_, fu.rope_col.data() + c0, fu.positions.data() + m0, fu.head_dim, fu.rope_theta);
  }
  if (fu.gated_act) {
    op("act", gated_act_cycles(v, fu.act, rows, uint64_t(nb)), rows * uint64_t(nb / 2) * uint64_t(gated_act_ops(fu.act)),
       st.act_busy_ns);
    if (job.values()) gated_act_apply(acc_, fu.act);
  }
  if (fu.residual) {
    // The residual rows' columns of the block, from where the layer input is stored (timing
    // only: the values come with the job), then the add.
    const uint64_t bytes = block * 4;
    burst(tlm::TLM_READ_COMMAND, r_addr, nullptr, bytes, false, j, phase, mb, pe_.run.spans.intern("residual_in"));
    st.residual_bytes_read += bytes;
    pe_.counters.sram_bytes += bytes;
    op("residual", residual_cycles(v, rows, uint64_t(nb)), block * VectorOpCost::residual, st.residual_busy_ns);
    if (job.values()) {
      if (!fu.residual_scale.empty())  // the weighted residual add (an MoE expert's combine)
        acc_.array().colwise() *= Eigen::Map<const Eigen::ArrayXf>(fu.residual_scale.data() + m0, mb);
      acc_ += ConstMapRM(fu.residual_values.data(), job.m, job.n).block(m0, c0, mb, nb);
    }
  }
}

void GemmProgram::write() {
  GemmRun& g = pe_.table.gemm;
  for (size_t j = 0; j < g.jobs.size(); ++j) {
    const GemmJob& job = g.jobs[j];
    const GemmPePlan& pl = g.plans[j][size_t(pe_.chip_pe)];
    if (job.x_stationary()) {
      if (job.write_back) write_xstat(int(j));
      continue;
    }
    if (!pl.active() || !job.write_back || pl.owner >= 0) continue;  // a K-split's partials go to the owner
    const int phase = pe_.run.spans.intern(job.phase);
    for (int mi = 0; mi < pl.m_blocks(job.m); ++mi)
      for (int ni = 0; ni < pl.n_blocks(); ++ni) {
        const Tile t = out_.pop();
        const auto [m0, mb] = block_range(job.m, pl.blk.mb, t.mi);
        const auto [n0, nb] = block_range(pl.shard.n_count, pl.blk.nb, t.ni);
        // Y rows of M-block mi: mb × N_p, its N-blocks one after another.
        const uint64_t addr = pl.y_base + (uint64_t(m0) * uint64_t(pl.shard.n_count) + uint64_t(mb) * uint64_t(n0)) * 4;
        const uint64_t bytes = gemm_y_block_bytes(job.fused, mb, nb);
        burst(tlm::TLM_WRITE_COMMAND, addr, slots_[size_t(t.slot)].data(), bytes, job.values(), int(j), phase, mb,
              g.activity_out);
        g.stats[j].y_bytes_written += bytes;
        pe_.counters.sram_bytes += bytes;
        free_.push(t.slot);
        block_done(int(j), bytes);
      }
  }
}

void GemmProgram::send_partial(int j, const GemmPePlan& pl, int mi, int ni, int mb, int nb) {
  GemmRun& g = pe_.table.gemm;
  auto m = std::make_shared<GemmPartialMessage>();
  m->job = j;
  m->owner = pl.owner;
  m->mi = mi;
  m->ni = ni;
  m->k_rank = pl.k_rank;
  if (g.jobs[size_t(j)].values())
    m->values = std::make_shared<std::vector<float>>(acc_.data(), acc_.data() + size_t(mb) * size_t(nb));
  // Straight from the accumulators onto the NoC (as a Y block leaves without write-back): the
  // network models the injection; a same-CUBE owner is reached through the CUBE's endpoint too.
  NocPacket p;
  p.src = pe_.table.pe_endpoint[size_t(pe_.chip_pe)];
  p.dsts = {pe_.table.pe_endpoint[size_t(pl.owner)]};
  p.bytes = uint64_t(mb) * uint64_t(nb) * 4;
  p.tag = kGemmPartialTag;
  p.payload = std::move(m);
  g.stats[size_t(j)].k_reduce_bytes += p.bytes;
  noc_.send(std::move(p));
}

void GemmProgram::partial_arrived(std::shared_ptr<const GemmPartialMessage> m) {
  partials_[{m->job, m->mi, m->ni}].push_back(std::move(m));
  partial_event_.notify(sc_core::SC_ZERO_TIME);
}

void GemmProgram::reduce(int j, const GemmPePlan& pl, int mi, int ni, int mb, int nb, int phase) {
  GemmRun& g = pe_.table.gemm;
  const std::tuple<int, int, int> key{j, mi, ni};
  while (partials_[key].size() < size_t(pl.partials)) sc_core::wait(partial_event_);
  std::vector<std::shared_ptr<const GemmPartialMessage>> parts = std::move(partials_[key]);
  partials_.erase(key);
  vector_op("k_reduce", gemm_reduce_cycles(pe_.timing.vector, mb, nb, pl.partials), j, phase, mb,
            uint64_t(mb) * uint64_t(nb) * uint64_t(pl.partials), g.stats[size_t(j)].k_reduce_busy_ns);
  if (!g.jobs[size_t(j)].values()) return;
  // In K order, whatever order they arrived in: the same sum for every NoC.
  std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a->k_rank < b->k_rank; });
  for (const auto& part : parts) acc_ += ConstMapRM(part->values->data(), mb, nb);
}

void GemmProgram::block_done(int job, uint64_t gather_bytes) {
  GemmRun& g = pe_.table.gemm;
  ++blocks_done_;
  GemmOpStats& st = g.stats[size_t(job)];
  st.y_gather_bytes += gather_bytes;
  const double now = to_ns(sc_core::sc_time_stamp() - pe_.run.epoch);
  st.pe_end_ns[size_t(pe_.chip_pe)] = now;
  st.end_ns = std::max(st.end_ns, now);
  --g.blocks_left;
}

}  // namespace ahbm
