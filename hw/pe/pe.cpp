#include "hw/pe/pe.h"

#include <limits>

#include "hw/pe/engines.h"

namespace ahbm {

Pe::Pe(sc_core::sc_module_name name, SimShared& sh, const std::string& path, int group, int pe_in_group,
       int local_index, QBuffer& qbuf, CubeReducer& reducer, std::vector<uint64_t> shard_base)
    : sc_core::sc_module(name),
      hbm("hbm"),
      sh_(sh),
      group_(group),
      pe_(pe_in_group),
      local_(local_index),
      qbuf_(qbuf),
      reducer_(reducer),
      shard_base_(std::move(shard_base)),
      component_(sh.spans.intern(path)),
      dma_component_(sh.spans.intern(path + ".dma")) {
  sig_activity_ = sh.trace.add_signal(path + ".activity", 3);
  sig_dma_ = sh.trace.add_signal(path + ".dma_busy", 1);
  int max_d = 0;
  bool values = false;
  for (const auto& j : sh.jobs) {
    if (j.group != group) continue;
    max_d = std::max(max_d, j.head_dim);
    values = values || j.values;
  }
  const int nslots = sh.cfg.pe.dma.buffers;
  slots_.resize(size_t(nslots));
  for (int s = 0; s < nslots; ++s) {
    if (values) slots_[size_t(s)].resize(size_t(2) * size_t(sh.cfg.pe.dma.kv_tile_tokens) * size_t(max_d));
    free_slots_.push(s);
  }
  sh.waits.add(path, [this] { return describe_wait(); });
  SC_HAS_PROCESS(Pe);
  SC_THREAD(dma_loop);
  SC_THREAD(compute_loop);
}

const KvShard& Pe::shard(const TileRef& t) const { return sh_.jobs[size_t(t.job)].shards[size_t(pe_)]; }

void Pe::busy(PeActivity a, const char* name, uint64_t cycles, const TileRef& t, int64_t bytes,
              sc_core::sc_time* account) {
  if (cycles == 0) return;
  const sc_core::sc_time start = sc_core::sc_time_stamp();
  sh_.trace.set(sig_activity_, uint64_t(a));
  sc_core::wait(sh_.cycles(cycles));
  sh_.trace.set(sig_activity_, uint64_t(PeActivity::idle));
  sh_.span(start, sc_core::sc_time_stamp(), component_, name, t, t.rows(), bytes);
  if (account) *account += sc_core::sc_time_stamp() - start;
}

void Pe::dma_loop() {
  const int kv_tile = sh_.cfg.pe.dma.kv_tile_tokens;
  tlm::tlm_generic_payload k_trans, v_trans;
  for (int gt : sh_.tiles_of_group[size_t(group_)]) {
    const TileRef& t = sh_.tiles[size_t(gt)];
    const AttentionJob& job = sh_.jobs[size_t(t.job)];
    const KvShard& kv = shard(t);
    const uint64_t row_bytes = uint64_t(job.head_dim) * 4;
    for (int first = 0; first < kv.tokens; first += kv_tile) {
      const int n = std::min(kv_tile, kv.tokens - first);
      dma_wait_.set("a free SRAM slot for the next KV tile", gt);
      const int slot = free_slots_.pop();
      dma_wait_.clear();
      float* buf = job.values ? slots_[size_t(slot)].data() : nullptr;
      const uint64_t bytes = uint64_t(n) * row_bytes;
      // K and V bursts issued together: their latencies overlap, their transfers do not.
      sc_core::sc_time dk = sc_core::SC_ZERO_TIME, dv = sc_core::SC_ZERO_TIME;
      auto burst = [&](tlm::tlm_generic_payload& tr, uint64_t addr, float* dst) {
        tr.set_command(tlm::TLM_READ_COMMAND);
        tr.set_address(addr);
        tr.set_data_ptr(reinterpret_cast<unsigned char*>(dst));
        tr.set_data_length(unsigned(bytes));
        tr.set_streaming_width(unsigned(bytes));
        tr.set_byte_enable_ptr(nullptr);
        tr.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      };
      const uint64_t base = shard_base_[size_t(t.job)];
      burst(k_trans, base + uint64_t(first) * row_bytes, buf);
      burst(v_trans, base + uint64_t(kv.tokens + first) * row_bytes,
            buf ? buf + size_t(kv_tile) * size_t(job.head_dim) : nullptr);
      const sc_core::sc_time start = sc_core::sc_time_stamp();
      hbm->b_transport(k_trans, dk);
      hbm->b_transport(v_trans, dv);
      if (k_trans.is_response_error() || v_trans.is_response_error())
        SC_REPORT_FATAL("ahbm/pe", ("DMA burst outside the KV shard in " + std::string(name())).c_str());
      sh_.trace.set(sig_dma_, 1);
      sc_core::wait(std::max(dk, dv));
      sh_.trace.set(sig_dma_, 0);
      dma_busy_ += sc_core::sc_time_stamp() - start;
      sh_.span(start, sc_core::sc_time_stamp(), dma_component_, "dma_kv", t, n, int64_t(2 * bytes));
      full_slots_.push(slot);
    }
  }
}

void Pe::apply_mask(MatrixRM& s, const AttentionJob& job, const TileRef& t, const KvShard& kv, int first) const {
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

void Pe::compute_loop() {
  const auto& cfg = sh_.cfg.pe;
  const int kv_tile = cfg.dma.kv_tile_tokens;
  for (int gt : sh_.tiles_of_group[size_t(group_)]) {
    const TileRef& t = sh_.tiles[size_t(gt)];
    const AttentionJob& job = sh_.jobs[size_t(t.job)];
    const KvShard& kv = shard(t);
    const int rows = t.rows(), d = job.head_dim;

    sh_.trace.set(sig_activity_, uint64_t(PeActivity::q_read));
    compute_wait_.set("its Q tile in the CUBE Q buffer", gt);
    TileData q = qbuf_.read(gt, component_);
    compute_wait_.clear();
    sh_.trace.set(sig_activity_, uint64_t(PeActivity::idle));

    StatePtr acc = job.values ? std::make_shared<AttnState>(AttnState::empty(rows, d)) : nullptr;
    for (int first = 0; first < kv.tokens; first += kv_tile) {
      const int n = std::min(kv_tile, kv.tokens - first);
      compute_wait_.set("a KV tile from its DMA", gt);
      const int slot = full_slots_.pop();
      compute_wait_.clear();
      busy(PeActivity::gemm_qk, "gemm_qk", gemm_cycles(cfg.gemm, rows, n, d), t, 0, &gemm_busy_);
      busy(PeActivity::softmax, "softmax", softmax_cycles(cfg.vector, rows, n, d), t, 0, &vector_busy_);
      busy(PeActivity::gemm_pv, "gemm_pv", gemm_cycles(cfg.gemm, rows, d, n), t, 0, &gemm_busy_);
      macs_ += 2 * uint64_t(rows) * uint64_t(n) * uint64_t(d);
      gemm_tiles_ += gemm_tiles(cfg.gemm, rows, n, d) + gemm_tiles(cfg.gemm, rows, d, n);
      if (acc) {
        const float* buf = slots_[size_t(slot)].data();
        ConstMapRM qm(q->data(), rows, d);
        ConstMapRM km(buf, n, d);
        ConstMapRM vm(buf + size_t(kv_tile) * size_t(d), n, d);
        MatrixRM s(rows, n);
        gemm_abt(qm, km, s);
        s *= job.scale;
        apply_mask(s, job, t, kv, first);
        merge_into(*acc, block_state(s, vm));
        if (first == 0 && sh_.cfg.fault.nan_state_pe == pe_)  // FAULT INJECTION (tests): a NaN the guard must find
          acc->o(0, 0) = std::numeric_limits<float>::quiet_NaN();
        sh_.guard.check(*acc, component_, gt);
      }
      free_slots_.push(slot);
    }
    sh_.trace.set(sig_activity_, uint64_t(PeActivity::send_state));
    reducer_.send_state(local_, gt, std::move(acc), component_);
    sh_.trace.set(sig_activity_, uint64_t(PeActivity::idle));
    ++tiles_done_;
  }
}

std::string Pe::describe_wait() const {
  const size_t total = sh_.tiles_of_group[size_t(group_)].size();
  if (tiles_done_ == total) return "";
  std::string out = "computed " + std::to_string(tiles_done_) + " of " + std::to_string(total) + " Q tiles";
  if (compute_wait_.what) out += "; compute waits for " + compute_wait_.str();
  if (dma_wait_.what) out += "; DMA waits for " + dma_wait_.str();
  return out;
}

}  // namespace ahbm
