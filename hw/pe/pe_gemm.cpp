// The PE's weight-GEMM processes (pe.h): W tiles from the HBM slice through the SRAM slots, the
// GEMM engine on each tile with its X block from the CUBE's Q buffer, Y blocks written back
// through the slot of their last W tile. Closed forms: docs/model.md "Weight GEMMs".
#include <algorithm>

#include "hw/common/engines.h"
#include "hw/common/tlm_payload.h"
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
    if (per_pe[size_t(chip_pe_)].active()) return true;
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

void Pe::gemm_burst(tlm::tlm_command cmd, uint64_t addr, unsigned char* slot, uint64_t bytes, const GemmJob& job,
                    int j, int phase, int rows) {
  GemmRun& g = sh_.gemm;
  const bool read = cmd == tlm::TLM_READ_COMMAND;
  const sc_core::sc_time start = sc_core::sc_time_stamp();
  if (read) sh_.trace.set(sig_dma_, 1);  // the DMA signal shows the W reads (Y writes overlap them)
  tlm::tlm_generic_payload tr;
  unsigned char no_bytes;
  set_payload(tr, cmd, addr, job.values() ? slot : scratch(bytes), bytes);
  if (!job.values()) set_timing_only(tr, no_bytes);
  sc_core::sc_time d = sc_core::SC_ZERO_TIME;
  hbm->b_transport(tr, d);
  if (tr.is_response_error())
    SC_REPORT_FATAL("ahbm/pe", (std::string(read ? "W tile outside the weight shard" : "Y block outside the slice") +
                                " in " + name()).c_str());
  sc_core::wait(d);
  if (read) sh_.trace.set(sig_dma_, 0);
  const sc_core::sc_time end = sc_core::sc_time_stamp();
  sh_.spans.record(start, end, dma_component_, read ? g.activity_in : g.activity_out, phase, g.op_ids[size_t(j)], rows,
                   int64_t(bytes));
  g.stats[size_t(j)].dma_busy_ns += to_ns(end - start);
  dma_busy_ += end - start;
}

void Pe::gemm_dma() {
  GemmRun& g = sh_.gemm;
  for (size_t j = 0; j < g.jobs.size(); ++j) {
    const GemmJob& job = g.jobs[j];
    const GemmPePlan& pl = g.plans[j][size_t(chip_pe_)];
    if (!pl.active()) continue;
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
          gemm_burst(tlm::TLM_READ_COMMAND, addr, gemm_slots_[size_t(slot)].data(), bytes, job, int(j), phase, kb);
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
    if (!pl.active()) continue;
    const uint64_t b = job.elem_bytes();
    const int phase = sh_.spans.intern(job.phase);
    GemmOpStats& st = g.stats[j];
    // The engine waits `cycles` on activity `a`, recorded as a span `activity` of this PE.
    auto engine = [&](PeActivity a, int activity, uint64_t cycles, int64_t rows, int64_t bytes) {
      const sc_core::sc_time start = sc_core::sc_time_stamp();
      sh_.trace.set(sig_activity_, uint64_t(a));
      sc_core::wait(sh_.cycles(cycles));
      sh_.trace.set(sig_activity_, uint64_t(PeActivity::idle));
      sh_.spans.record(start, sc_core::sc_time_stamp(), component_, activity, phase, g.op_ids[j], rows, bytes);
      return sc_core::sc_time_stamp() - start;
    };
    for (int mi = 0; mi < pl.m_blocks(job.m); ++mi) {
      const auto [m0, mb] = block_range(job.m, pl.blk.mb, mi);
      // The M-block's X rows must have reached the CUBE's Q buffer (gemm_job.h x_ready_ns).
      const sc_core::sc_time ready =
          sh_.epoch + sc_core::sc_time(x_ready_ns(sh_.cfg, g.jobs, j, m0 + mb - 1), sc_core::SC_NS);
      if (ready > sc_core::sc_time_stamp()) sc_core::wait(ready - sc_core::sc_time_stamp());
      for (int ni = 0; ni < pl.n_blocks(); ++ni) {
        const auto [n0, nb] = block_range(pl.shard.n_count, pl.blk.nb, ni);
        if (job.values()) gemm_acc_.setZero(mb, nb);
        for (int ki = 0; ki < pl.k_blocks(); ++ki) {
          const auto [k0, kb] = block_range(pl.shard.k_count, pl.blk.kb, ki);
          const GemmTile t = gemm_full_.pop();
          const bool last = ki + 1 == pl.k_blocks();
          // The X block (mb × kb) out of the Q buffer through a read port, then the W tile on
          // the engine; the accumulators drain (pipeline latency) once per Y block.
          const uint64_t x_bytes = uint64_t(mb) * uint64_t(kb) * b;
          engine(PeActivity::q_read, x_in, ceil_div(x_bytes, uint64_t(sh_.cfg.cube.q_buffer.port_bytes_per_cycle)), mb,
                 int64_t(x_bytes));
          const uint64_t tiles = gemm_tiles(cfg.gemm, uint64_t(mb), uint64_t(nb), uint64_t(kb));
          const uint64_t cycles = tiles * gemm_issue_interval(cfg.gemm, job.dtype) + (last ? cfg.gemm.pipeline_latency : 0);
          const sc_core::sc_time busy = engine(PeActivity::gemm_w, g.op_ids[j], cycles, mb, 0);
          gemm_busy_ += busy;
          st.gemm_busy_ns += to_ns(busy);
          st.x_bytes_read += x_bytes;
          st.macs += uint64_t(mb) * uint64_t(nb) * uint64_t(kb);
          st.gemm_tiles += tiles;
          macs_ += uint64_t(mb) * uint64_t(nb) * uint64_t(kb);
          gemm_tiles_ += tiles;
          unsigned char* slot = gemm_slots_[size_t(t.slot)].data();
          if (job.values()) {
            // No wait from here to the end of the block: the values are this PE's meanwhile.
            const ConstMapRM x(job.x.data(), job.m, job.k);
            if (job.dtype == DType::fp32) {
              gemm_acc_.noalias() += x.block(m0, pl.shard.k_begin + k0, mb, kb) * ConstMapRM(reinterpret_cast<const float*>(slot), kb, nb);
            } else {
              gemm_w_.resize(kb, nb);
              decode(job.dtype, slot, uint64_t(kb) * uint64_t(nb), gemm_w_.data());
              gemm_acc_.noalias() += x.block(m0, pl.shard.k_begin + k0, mb, kb) * gemm_w_;
            }
          }
          if (!last) {
            gemm_free_.push(t.slot);
            continue;
          }
          if (job.values()) {
            g.y[j].block(m0, pl.shard.n_begin + n0, mb, nb) += gemm_acc_;
            sh_.guard.check(gemm_acc_, component_, -1);
            if (job.write_back) std::copy_n(reinterpret_cast<const unsigned char*>(gemm_acc_.data()), size_t(mb) * size_t(nb) * 4, slot);
          }
          if (job.write_back) {
            gemm_out_.push(t);  // the slot now holds the Y block
          } else {
            gemm_free_.push(t.slot);
            gemm_block_done(int(j));
          }
        }
      }
    }
  }
}

void Pe::gemm_write() {
  GemmRun& g = sh_.gemm;
  for (size_t j = 0; j < g.jobs.size(); ++j) {
    const GemmJob& job = g.jobs[j];
    const GemmPePlan& pl = g.plans[j][size_t(chip_pe_)];
    if (!pl.active() || !job.write_back) continue;
    const int phase = sh_.spans.intern(job.phase);
    for (int mi = 0; mi < pl.m_blocks(job.m); ++mi)
      for (int ni = 0; ni < pl.n_blocks(); ++ni) {
        const GemmTile t = gemm_out_.pop();
        const auto [m0, mb] = block_range(job.m, pl.blk.mb, t.mi);
        const auto [n0, nb] = block_range(pl.shard.n_count, pl.blk.nb, t.ni);
        // Y rows of M-block mi: mb × N_p, its N-blocks one after another.
        const uint64_t addr = pl.y_base + (uint64_t(m0) * uint64_t(pl.shard.n_count) + uint64_t(mb) * uint64_t(n0)) * 4;
        const uint64_t bytes = uint64_t(mb) * uint64_t(nb) * 4;
        gemm_burst(tlm::TLM_WRITE_COMMAND, addr, gemm_slots_[size_t(t.slot)].data(), bytes, job, int(j), phase, mb);
        g.stats[j].y_bytes_written += bytes;
        gemm_free_.push(t.slot);
        gemm_block_done(int(j));
      }
  }
}

void Pe::gemm_block_done(int job) {
  ++gemm_blocks_done_;
  GemmOpStats& st = sh_.gemm.stats[size_t(job)];
  const double now = to_ns(sc_core::sc_time_stamp() - sh_.epoch);
  st.pe_end_ns[size_t(chip_pe_)] = now;
  st.end_ns = std::max(st.end_ns, now);
  --sh_.gemm.blocks_left;
}

}  // namespace ahbm
