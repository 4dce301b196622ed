// The PE's weight-GEMM processes (pe.h): W tiles from the HBM slice through the SRAM slots, the
// GEMM engine on each tile with its X block from the CUBE's Q buffer, Y blocks written back
// through the slot of their last W tile. Closed forms: docs/model.md "Weight GEMMs".
#include <algorithm>

#include "hw/common/model/vector_ops.h"

#include "hw/common/model/engines.h"
#include "hw/common/sim/tlm_payload.h"
#include "hw/pe/pe.h"

namespace ahbm {

namespace {
// [first, first + count) of block i of edge `whole` cut into blocks of `block`.
std::pair<int, int> block_range(int whole, int block, int i) {
  const int first = i * block;
  return {first, std::min(block, whole - first)};
}
}  // namespace

bool Pe::has_gemm_work() const {
  for (const auto& per_pe : sh_.gemm.plans)
    if (per_pe[size_t(chip_pe_)].active() || per_pe[size_t(chip_pe_)].receives()) return true;
  return false;
}

void Pe::gemm_dma_loop() {
  for (;;) {
    sc_core::wait(gemm_dma_start_);  // begin_run of a run with weight GEMMs
    gemm_dma();
  }
}

void Pe::gemm_compute_loop() {
  for (;;) {
    sc_core::wait(gemm_compute_start_);
    gemm_compute();
  }
}

void Pe::gemm_write_loop() {
  for (;;) {
    sc_core::wait(gemm_write_start_);
    gemm_write();
  }
}

sc_core::sc_time Pe::slice_burst(tlm::tlm_command cmd, uint64_t addr, unsigned char* slot, uint64_t bytes, bool values,
                                 int phase, int op_id, int rows, int activity) {
  const bool read = cmd == tlm::TLM_READ_COMMAND;
  const sc_core::sc_time start = sc_core::sc_time_stamp();
  if (read) sh_.trace.set(sig_dma_, 1);  // the DMA signal shows the W reads (Y writes overlap them)
  tlm::tlm_generic_payload tr;
  unsigned char no_bytes;
  set_payload(tr, cmd, addr, values ? slot : scratch(bytes), bytes);
  if (!values) set_timing_only(tr, no_bytes);
  sc_core::sc_time d = sc_core::SC_ZERO_TIME;
  hbm->b_transport(tr, d);
  if (tr.is_response_error())
    SC_REPORT_FATAL("ahbm/pe", (std::string(read ? "W tile outside the weight shard" : "Y block outside the slice") +
                                " in " + name()).c_str());
  sc_core::wait(d);
  if (read) sh_.trace.set(sig_dma_, 0);
  const sc_core::sc_time end = sc_core::sc_time_stamp();
  sh_.spans.record(start, end, dma_component_, activity, phase, op_id, rows, int64_t(bytes));
  dma_busy_ += end - start;
  return end - start;
}

void Pe::gemm_burst(tlm::tlm_command cmd, uint64_t addr, unsigned char* slot, uint64_t bytes, bool values, int j,
                    int phase, int rows, int activity) {
  GemmRun& g = sh_.gemm;
  g.stats[size_t(j)].dma_busy_ns += to_ns(slice_burst(cmd, addr, slot, bytes, values, phase, g.op_ids[size_t(j)], rows, activity));
}

void Pe::gemm_dma() {
  GemmRun& g = sh_.gemm;
  for (size_t j = 0; j < g.jobs.size(); ++j) {
    const GemmJob& job = g.jobs[j];
    const GemmPePlan& pl = g.plans[j][size_t(chip_pe_)];
    // x_stationary: the weight streamer reads the W tiles and multicasts them into the slots.
    if (!pl.active() || job.x_stationary()) continue;
    const uint64_t b = job.elem_bytes(), k_p = uint64_t(pl.shard.k_count);
    const int phase = sh_.spans.intern(job.phase);
    for (int mi = 0; mi < pl.m_blocks(job.m); ++mi)
      for (int ni = 0; ni < pl.n_blocks(); ++ni) {
        const auto [n0, nb] = block_range(pl.shard.n_count, pl.blk.nb, ni);
        for (int ki = 0; ki < pl.k_blocks(); ++ki) {
          const auto [k0, kb] = block_range(pl.shard.k_count, pl.blk.kb, ki);
          const int slot = gemm_free_.pop();
          // N-block ni is K_p × nb, row-major, after the ni full-width N-blocks before it.
          const uint64_t addr = pl.w_base + uint64_t(n0) * k_p * b + uint64_t(k0) * uint64_t(nb) * b;
          const uint64_t bytes = uint64_t(kb) * uint64_t(nb) * b;
          gemm_burst(tlm::TLM_READ_COMMAND, addr, gemm_slots_[size_t(slot)].data(), bytes, job.values(), int(j), phase, kb,
                     g.activity_in);
          g.stats[j].w_bytes_read += bytes;
          gemm_full_.push({int(j), slot, mi, ni, ki});
        }
      }
  }
}

void Pe::gemm_compute() {
  GemmRun& g = sh_.gemm;
  const PeConfig& cfg = sh_.cfg.pe;
  const int x_in = sh_.spans.intern("x_in");
  for (size_t j = 0; j < g.jobs.size(); ++j) {
    const GemmJob& job = g.jobs[j];
    const GemmPePlan& pl = g.plans[j][size_t(chip_pe_)];
    if (job.x_stationary()) {
      gemm_compute_xstat(int(j));
      continue;
    }
    if (!pl.active()) continue;
    const uint64_t b = job.elem_bytes();
    const int phase = sh_.spans.intern(job.phase);
    GemmOpStats& st = g.stats[j];
    auto engine = [&](PeActivity a, int activity, uint64_t cycles, int64_t rows, int64_t bytes) {
      return gemm_engine(a, activity, cycles, int(j), phase, rows, bytes);
    };
    const GemmFusion& fu = job.fused;
    for (int mi = 0; mi < pl.m_blocks(job.m); ++mi) {
      const auto [m0, mb] = block_range(job.m, pl.blk.mb, mi);
      // The M-block's X rows must have been written into the CUBE's Q buffer (gemm_job.h GemmXChunk).
      q_in->wait_x(gemm_x_chunk_of(g.x_chunks, int(j), m0 + mb - 1));
      for (int ni = 0; ni < pl.n_blocks(); ++ni) {
        const auto [n0, nb] = block_range(pl.shard.n_count, pl.blk.nb, ni);
        if (job.values()) gemm_acc_.setZero(mb, nb);
        if (fu.rms_norm) gemm_sumsq_.setZero(mb);
        for (int ki = 0; ki < pl.k_blocks(); ++ki) {
          const auto [k0, kb] = block_range(pl.shard.k_count, pl.blk.kb, ki);
          const GemmTile t = gemm_full_.pop();
          const bool last = ki + 1 == pl.k_blocks();
          // The X block (mb × kb) out of the Q buffer through a read port, then the W tile on
          // the engine; the accumulators drain (pipeline latency) once per Y block.
          const uint64_t x_bytes = uint64_t(mb) * uint64_t(kb) * b;
          engine(PeActivity::q_read, x_in, ceil_div(x_bytes, uint64_t(sh_.cfg.cube.q_buffer.port_bytes_per_cycle)), mb,
                 int64_t(x_bytes));
          // RMSNorm prologue on the X block: the rows' sums of squares, X ⊙ g (vector_ops.h).
          if (fu.rms_norm)
            gemm_vector_op("rms_norm", rms_prologue_cycles(cfg.vector, uint64_t(mb), uint64_t(kb)), int(j), phase, mb,
                           uint64_t(mb) * uint64_t(kb) * VectorOpCost::rms_prologue, st.norm_busy_ns);
          const uint64_t tiles = gemm_tiles(cfg.gemm, uint64_t(mb), uint64_t(nb), uint64_t(kb));
          const uint64_t cycles = tiles * gemm_issue_interval(cfg.gemm, job.dtype) + (last ? cfg.gemm.pipeline_latency : 0);
          const sc_core::sc_time busy = engine(PeActivity::gemm_w, g.op_ids[j], cycles, mb, 0);
          gemm_busy_ += busy;
          st.gemm_busy_ns += to_ns(busy);
          st.x_bytes_read += x_bytes;
          x_bytes_read_ += x_bytes;
          sram_bytes_ += x_bytes + uint64_t(kb) * uint64_t(nb) * b;  // the X block and the W tile
          st.macs += uint64_t(mb) * uint64_t(nb) * uint64_t(kb);
          st.gemm_tiles += tiles;
          macs_ += uint64_t(mb) * uint64_t(nb) * uint64_t(kb);
          gemm_tiles_ += tiles;
          unsigned char* slot = gemm_slots_[size_t(t.slot)].data();
          if (job.values()) {
            // No wait from here to the end of the block: the values are this PE's meanwhile.
            const ConstMapRM x(job.x.data(), job.m, job.k);
            const auto xb = x.block(m0, pl.shard.k_begin + k0, mb, kb);
            if (fu.rms_norm) {
              gemm_x_ = xb;
              rms_prologue_apply(gemm_x_, fu.norm_weight.data() + pl.shard.k_begin + k0, gemm_sumsq_);
            }
            if (fu.rms_norm) gemm_accumulate(gemm_x_, slot, kb, nb, job.dtype);
            else gemm_accumulate(xb, slot, kb, nb, job.dtype);
          }
          if (!last) {
            gemm_free_.push(t.slot);
            continue;
          }
          // A K-split (no fused operators then: check_fusion): a later K part's partial block
          // leaves for its owner; the owner adds the others' into its own.
          if (pl.owner >= 0) {
            gemm_send_partial(int(j), pl, mi, ni, mb, nb);
            gemm_free_.push(t.slot);
            gemm_block_done(int(j), 0);
            continue;
          }
          if (pl.partials > 0) gemm_reduce(int(j), pl, mi, ni, mb, nb, phase);
          if (fu.epilogue())
            gemm_epilogue(job, int(j), m0, mb, pl.shard.n_begin + n0, nb,
                          pl.r_base + (uint64_t(m0) * uint64_t(pl.shard.n_count) + uint64_t(mb) * uint64_t(n0)) * 4, phase);
          if (job.values()) {
            g.y[j].block(m0, pl.shard.n_begin + n0, mb, nb) += gemm_acc_;
            sh_.guard.check(gemm_acc_, component_, -1);
            if (job.write_back) std::copy_n(reinterpret_cast<const unsigned char*>(gemm_acc_.data()), size_t(mb) * size_t(nb) * 4, slot);
          }
          if (job.write_back) {
            gemm_out_.push(t);  // the slot now holds the Y block
          } else {
            gemm_free_.push(t.slot);
            gemm_block_done(int(j), gemm_y_block_bytes(fu, mb, nb));
          }
        }
      }
    }
  }
}

sc_core::sc_time Pe::gemm_engine(PeActivity a, int activity, uint64_t cycles, int j, int phase, int64_t rows, int64_t bytes) {
  const sc_core::sc_time start = sc_core::sc_time_stamp();
  sh_.trace.set(sig_activity_, uint64_t(a));
  sc_core::wait(sh_.cycles(cycles));
  sh_.trace.set(sig_activity_, uint64_t(PeActivity::idle));
  sh_.spans.record(start, sc_core::sc_time_stamp(), component_, activity, phase, sh_.gemm.op_ids[size_t(j)], rows, bytes);
  return sc_core::sc_time_stamp() - start;
}

template <class X>
void Pe::gemm_accumulate(const X& x, const unsigned char* slot, int kb, int nb, DType t) {
  if (t == DType::fp32) {
    const ConstMapRM w(reinterpret_cast<const float*>(slot), kb, nb);
    gemm_acc_.noalias() += x * w;
  } else {
    gemm_w_.resize(kb, nb);
    decode(t, slot, uint64_t(kb) * uint64_t(nb), gemm_w_.data());
    gemm_acc_.noalias() += x * gemm_w_;
  }
}

int Pe::reserve_gemm_slot() { return gemm_free_.pop(); }

void Pe::gemm_tile_arrived(const GemmTileMessage& m, int slot) {
  if (m.data) std::copy(m.data->begin(), m.data->end(), gemm_slots_[size_t(slot)].begin());
  size_t i = 0;
  while (m.dst_pes[i] != chip_pe_) ++i;
  // Compute takes the stream in order: a tile that overtook an earlier one (a faster holder
  // slice) waits in its slot until the earlier ones are in.
  gemm_early_[m.seqs[i]] = {m.job, slot, 0, 0, 0};
  for (auto it = gemm_early_.begin(); it != gemm_early_.end() && it->first == gemm_next_seq_; it = gemm_early_.erase(it)) {
    gemm_full_.push(it->second);
    ++gemm_next_seq_;
  }
}

void Pe::gemm_compute_xstat(int j) {
  GemmRun& g = sh_.gemm;
  const GemmJob& job = g.jobs[size_t(j)];
  const GemmPePlan& pl = g.plans[size_t(j)][size_t(chip_pe_)];
  if (!pl.receives()) return;
  const PeConfig& cfg = sh_.cfg.pe;
  const uint64_t b = job.elem_bytes(), k = uint64_t(job.k);
  const int phase = sh_.spans.intern(job.phase);
  GemmOpStats& st = g.stats[size_t(j)];
  const GemmFusion& fu = job.fused;
  for (int mi = 0; mi < pl.row_blocks(); ++mi) {
    const auto [r0, mb] = block_range(pl.row_count, pl.blk.mb, mi);
    const int m0 = pl.row_begin + r0;
    // The block's rows of X, whole K, from the PE's own slice into SRAM once: they meet every W
    // tile of the stream (timing only: the values come with the job).
    const uint64_t x_bytes = uint64_t(mb) * k * b;
    gemm_burst(tlm::TLM_READ_COMMAND, pl.x_base + uint64_t(r0) * k * b, nullptr, x_bytes, false, j, phase, mb,
               sh_.spans.intern("x_in"));
    st.x_hbm_bytes_read += x_bytes;
    sram_bytes_ += x_bytes;
    // RMSNorm prologue once on the whole rows (not per W tile: the rows stay).
    if (fu.rms_norm) {
      gemm_sumsq_.setZero(mb);
      gemm_vector_op("rms_norm", rms_prologue_cycles(cfg.vector, uint64_t(mb), k), j, phase, mb,
                     uint64_t(mb) * k * VectorOpCost::rms_prologue, st.norm_busy_ns);
    }
    if (job.values()) {
      gemm_x_ = ConstMapRM(job.x.data(), job.m, job.k).block(m0, 0, mb, job.k);
      if (fu.rms_norm) rms_prologue_apply(gemm_x_, fu.norm_weight.data(), gemm_sumsq_);
    }
    // The W stream, in the order the weight streamer sends it: column groups, their N-blocks,
    // each N-block's holders in K order, their K-blocks.
    for (const GemmColumns& c : g.columns[size_t(j)])
      for (int n0 = 0; n0 < c.n_count; n0 += pl.blk.nb) {
        const int nb = std::min(pl.blk.nb, c.n_count - n0), c0 = c.n_begin + n0;
        if (job.values()) gemm_acc_.setZero(mb, nb);
        for (size_t hi = 0; hi < c.holders.size(); ++hi) {
          const GemmShard& hs = g.plans[size_t(j)][size_t(c.holders[hi])].shard;
          for (int k0 = 0; k0 < hs.k_count; k0 += pl.blk.kb) {
            const int kb = std::min(pl.blk.kb, hs.k_count - k0);
            const bool last = hi + 1 == c.holders.size() && k0 + kb == hs.k_count;
            const GemmTile t = gemm_full_.pop();
            const uint64_t tiles = gemm_tiles(cfg.gemm, uint64_t(mb), uint64_t(nb), uint64_t(kb));
            const uint64_t cycles = tiles * gemm_issue_interval(cfg.gemm, job.dtype) + (last ? cfg.gemm.pipeline_latency : 0);
            const sc_core::sc_time busy = gemm_engine(PeActivity::gemm_w, g.op_ids[size_t(j)], cycles, j, phase, mb, 0);
            gemm_busy_ += busy;
            st.gemm_busy_ns += to_ns(busy);
            sram_bytes_ += uint64_t(kb) * uint64_t(nb) * b;  // the W tile
            st.macs += uint64_t(mb) * uint64_t(nb) * uint64_t(kb);
            st.gemm_tiles += tiles;
            macs_ += uint64_t(mb) * uint64_t(nb) * uint64_t(kb);
            gemm_tiles_ += tiles;
            unsigned char* slot = gemm_slots_[size_t(t.slot)].data();
            if (job.values()) gemm_accumulate(gemm_x_.middleCols(hs.k_begin + k0, kb), slot, kb, nb, job.dtype);
            if (!last) {
              gemm_free_.push(t.slot);
              continue;
            }
            if (fu.epilogue())
              gemm_epilogue(job, j, m0, mb, c0, nb, pl.r_base + (uint64_t(r0) * uint64_t(job.n) + uint64_t(mb) * uint64_t(c0)) * 4,
                            phase);
            if (job.values()) {
              g.y[size_t(j)].block(m0, c0, mb, nb) += gemm_acc_;
              sh_.guard.check(gemm_acc_, component_, -1);
              if (job.write_back)
                std::copy_n(reinterpret_cast<const unsigned char*>(gemm_acc_.data()), size_t(mb) * size_t(nb) * 4, slot);
            }
            if (job.write_back) {
              gemm_out_.push({j, t.slot, mi, c0, nb});  // ni: the block's first column, ki: its width
            } else {
              gemm_free_.push(t.slot);
              gemm_block_done(j, gemm_y_block_bytes(fu, mb, nb));  // it leaves the PE
            }
          }
        }
      }
  }
}

void Pe::gemm_write_xstat(int j) {
  GemmRun& g = sh_.gemm;
  const GemmJob& job = g.jobs[size_t(j)];
  const GemmPePlan& pl = g.plans[size_t(j)][size_t(chip_pe_)];
  const int phase = sh_.spans.intern(job.phase);
  for (uint64_t i = gemm_y_blocks(job, pl, g.columns[size_t(j)]); i > 0; --i) {
    const GemmTile t = gemm_out_.pop();
    const auto [r0, mb] = block_range(pl.row_count, pl.blk.mb, t.mi);
    // The M-block's Y rows: mb × N, its column blocks one after another.
    const uint64_t addr = pl.y_base + (uint64_t(r0) * uint64_t(job.n) + uint64_t(mb) * uint64_t(t.ni)) * 4;
    const uint64_t bytes = gemm_y_block_bytes(job.fused, mb, t.ki);
    gemm_burst(tlm::TLM_WRITE_COMMAND, addr, gemm_slots_[size_t(t.slot)].data(), bytes, job.values(), j, phase, mb,
               g.activity_out);
    g.stats[size_t(j)].y_bytes_written += bytes;
    sram_bytes_ += bytes;
    gemm_free_.push(t.slot);
    gemm_block_done(j, 0);
  }
}

sc_core::sc_time Pe::vector_busy_span(int activity, uint64_t cycles, int phase, int op_id, int rows, uint64_t element_ops) {
  const sc_core::sc_time start = sc_core::sc_time_stamp();
  sh_.trace.set(sig_activity_, uint64_t(PeActivity::vector_op));
  sc_core::wait(sh_.cycles(cycles));
  sh_.trace.set(sig_activity_, uint64_t(PeActivity::idle));
  sh_.spans.record(start, sc_core::sc_time_stamp(), component_, activity, phase, op_id, rows, 0);
  const sc_core::sc_time busy = sc_core::sc_time_stamp() - start;
  vector_busy_ += busy;
  vector_ops_ += element_ops;
  return busy;
}

void Pe::gemm_vector_op(const char* name, uint64_t cycles, int j, int phase, int rows, uint64_t element_ops,
                        double& busy_ns) {
  if (cycles == 0) return;
  busy_ns += to_ns(vector_busy_span(sh_.spans.intern(name), cycles, phase, sh_.gemm.op_ids[size_t(j)], rows, element_ops));
  sh_.gemm.stats[size_t(j)].vector_ops += element_ops;
}

void Pe::gemm_epilogue(const GemmJob& job, int j, int m0, int mb, int c0, int nb, uint64_t r_addr, int phase) {
  GemmRun& g = sh_.gemm;
  const GemmFusion& fu = job.fused;
  const VectorConfig& v = sh_.cfg.pe.vector;
  GemmOpStats& st = g.stats[size_t(j)];
  auto vector_op = [&](const char* name, uint64_t cycles, uint64_t element_ops, double& busy_ns) {
    gemm_vector_op(name, cycles, j, phase, mb, element_ops, busy_ns);
  };
  const uint64_t rows = uint64_t(mb), block = uint64_t(mb) * uint64_t(nb);
  if (fu.rms_norm) {
    vector_op("rms_norm", rms_scale_cycles(v, rows, uint64_t(nb)),
              rows * VectorOpCost::rms_row + block * VectorOpCost::rms_scale, st.norm_busy_ns);
    if (job.values()) rms_scale_apply(gemm_acc_, gemm_sumsq_, job.k, fu.rms_eps);
  }
  if (fu.rope()) {
    const uint64_t rotated = uint64_t(std::count_if(fu.rope_col.begin() + c0, fu.rope_col.begin() + c0 + nb, [](int c) { return c >= 0; }));
    vector_op("rope", rope_cycles(v, rows, rotated), rows * rotated * VectorOpCost::rope, st.rope_busy_ns);
    if (job.values()) rope_apply(gemm_acc_, fu.rope_col.data() + c0, fu.positions.data() + m0, fu.head_dim, fu.rope_theta);
  }
  if (fu.gated_act) {
    vector_op("act", gated_act_cycles(v, fu.act, rows, uint64_t(nb)), rows * uint64_t(nb / 2) * uint64_t(gated_act_ops(fu.act)),
              st.act_busy_ns);
    if (job.values()) gated_act_apply(gemm_acc_, fu.act);
  }
  if (fu.residual) {
    // The residual rows' columns of the block, from where the layer input is stored (timing
    // only: the values come with the job), then the add.
    const uint64_t bytes = block * 4;
    gemm_burst(tlm::TLM_READ_COMMAND, r_addr, nullptr, bytes, false, j, phase, mb, sh_.spans.intern("residual_in"));
    st.residual_bytes_read += bytes;
    sram_bytes_ += bytes;
    vector_op("residual", residual_cycles(v, rows, uint64_t(nb)), block * VectorOpCost::residual, st.residual_busy_ns);
    if (job.values()) {
      if (!fu.residual_scale.empty())  // the weighted residual add (an MoE expert's combine)
        gemm_acc_.array().colwise() *= Eigen::Map<const Eigen::ArrayXf>(fu.residual_scale.data() + m0, mb);
      gemm_acc_ += ConstMapRM(fu.residual_values.data(), job.m, job.n).block(m0, c0, mb, nb);
    }
  }
}

void Pe::gemm_write() {
  GemmRun& g = sh_.gemm;
  for (size_t j = 0; j < g.jobs.size(); ++j) {
    const GemmJob& job = g.jobs[j];
    const GemmPePlan& pl = g.plans[j][size_t(chip_pe_)];
    if (job.x_stationary()) {
      if (job.write_back) gemm_write_xstat(int(j));
      continue;
    }
    if (!pl.active() || !job.write_back || pl.owner >= 0) continue;  // a K-split's partials go to the owner
    const int phase = sh_.spans.intern(job.phase);
    for (int mi = 0; mi < pl.m_blocks(job.m); ++mi)
      for (int ni = 0; ni < pl.n_blocks(); ++ni) {
        const GemmTile t = gemm_out_.pop();
        const auto [m0, mb] = block_range(job.m, pl.blk.mb, t.mi);
        const auto [n0, nb] = block_range(pl.shard.n_count, pl.blk.nb, t.ni);
        // Y rows of M-block mi: mb × N_p, its N-blocks one after another.
        const uint64_t addr = pl.y_base + (uint64_t(m0) * uint64_t(pl.shard.n_count) + uint64_t(mb) * uint64_t(n0)) * 4;
        const uint64_t bytes = gemm_y_block_bytes(job.fused, mb, nb);
        gemm_burst(tlm::TLM_WRITE_COMMAND, addr, gemm_slots_[size_t(t.slot)].data(), bytes, job.values(), int(j), phase, mb,
                   g.activity_out);
        g.stats[j].y_bytes_written += bytes;
        sram_bytes_ += bytes;
        gemm_free_.push(t.slot);
        gemm_block_done(int(j), bytes);
      }
  }
}

void Pe::gemm_send_partial(int j, const GemmPePlan& pl, int mi, int ni, int mb, int nb) {
  auto m = std::make_shared<GemmPartialMessage>();
  m->job = j;
  m->owner = pl.owner;
  m->mi = mi;
  m->ni = ni;
  m->k_rank = pl.k_rank;
  if (sh_.gemm.jobs[size_t(j)].values())
    m->values = std::make_shared<std::vector<float>>(gemm_acc_.data(), gemm_acc_.data() + size_t(mb) * size_t(nb));
  // Straight from the accumulators onto the NoC (as a Y block leaves without write-back): the
  // network models the injection; a same-CUBE owner is reached through the CUBE's endpoint too.
  NocPacket p;
  p.src = sh_.pe_endpoint[size_t(chip_pe_)];
  p.dsts = {sh_.pe_endpoint[size_t(pl.owner)]};
  p.bytes = uint64_t(mb) * uint64_t(nb) * 4;
  p.tag = kGemmPartialTag;
  p.payload = std::move(m);
  sh_.gemm.stats[size_t(j)].k_reduce_bytes += p.bytes;
  noc_.send(std::move(p));
}

void Pe::gemm_partial_arrived(std::shared_ptr<const GemmPartialMessage> m) {
  gemm_partials_[{m->job, m->mi, m->ni}].push_back(std::move(m));
  gemm_partial_event_.notify(sc_core::SC_ZERO_TIME);
}

void Pe::gemm_reduce(int j, const GemmPePlan& pl, int mi, int ni, int mb, int nb, int phase) {
  const std::tuple<int, int, int> key{j, mi, ni};
  while (gemm_partials_[key].size() < size_t(pl.partials)) sc_core::wait(gemm_partial_event_);
  std::vector<std::shared_ptr<const GemmPartialMessage>> parts = std::move(gemm_partials_[key]);
  gemm_partials_.erase(key);
  gemm_vector_op("k_reduce", gemm_reduce_cycles(sh_.cfg, mb, nb, pl.partials), j, phase, mb,
                 uint64_t(mb) * uint64_t(nb) * uint64_t(pl.partials), sh_.gemm.stats[size_t(j)].k_reduce_busy_ns);
  if (!sh_.gemm.jobs[size_t(j)].values()) return;
  // In K order, whatever order they arrived in: the same sum for every NoC.
  std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a->k_rank < b->k_rank; });
  for (const auto& part : parts) gemm_acc_ += ConstMapRM(part->values->data(), mb, nb);
}

void Pe::gemm_block_done(int job, uint64_t gather_bytes) {
  ++gemm_blocks_done_;
  GemmOpStats& st = sh_.gemm.stats[size_t(job)];
  st.y_gather_bytes += gather_bytes;
  const double now = to_ns(sc_core::sc_time_stamp() - sh_.epoch);
  st.pe_end_ns[size_t(chip_pe_)] = now;
  st.end_ns = std::max(st.end_ns, now);
  --sh_.gemm.blocks_left;
}

}  // namespace ahbm
