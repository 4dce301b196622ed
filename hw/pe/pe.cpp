#include "hw/pe/pe.h"

#include <limits>


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
  for (const char* a : {"idle", "q_read", "gemm_qk", "softmax", "gemm_pv", "send_state"})
    activity_span_.push_back(sh.spans.intern(a));
  dma_span_ = sh.spans.intern("dma_kv");
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
    if (values) slots_[size_t(s)].reset(new unsigned char[size_t(2) * size_t(sh.cfg.pe.dma.kv_tile_tokens) * size_t(max_d) * 4]);
    free_slots_.push(s);
  }
  SC_HAS_PROCESS(Pe);
  SC_THREAD(dma_loop);
  SC_THREAD(compute_loop);
}

const KvShard& Pe::shard(const TileRef& t) const { return sh_.jobs[size_t(t.job)].shards[size_t(pe_)]; }

void Pe::busy(PeActivity a, uint64_t cycles, const TileRef& t, int64_t bytes, sc_core::sc_time* account) {
  if (cycles == 0) return;
  const sc_core::sc_time start = sc_core::sc_time_stamp();
  sh_.trace.set(sig_activity_, uint64_t(a));
  sc_core::wait(sh_.cycles(cycles));
  sh_.trace.set(sig_activity_, uint64_t(PeActivity::idle));
  sh_.span(start, sc_core::sc_time_stamp(), component_, activity_span_[size_t(a)], t, t.rows(), bytes);
  if (account) *account += sc_core::sc_time_stamp() - start;
}

void Pe::dma_loop() {
  const int kv_tile = sh_.cfg.pe.dma.kv_tile_tokens;
  tlm::tlm_generic_payload k_trans, v_trans;
  for (int gt : sh_.tiles_of_group[size_t(group_)]) {
    const TileRef& t = sh_.tiles[size_t(gt)];
    const AttentionJob& job = sh_.jobs[size_t(t.job)];
    const KvShard& kv = shard(t);
    const uint64_t row_bytes = uint64_t(job.head_dim) * job.elem_bytes();
    for (int first = 0; first < kv.tokens; first += kv_tile) {
      const int n = std::min(kv_tile, kv.tokens - first);
      const int slot = free_slots_.pop();
      unsigned char* buf = job.values ? slots_[size_t(slot)].get() : nullptr;
      const uint64_t bytes = uint64_t(n) * row_bytes;
      // K and V bursts issued together: their latencies overlap, their transfers do not.
      sc_core::sc_time dk = sc_core::SC_ZERO_TIME, dv = sc_core::SC_ZERO_TIME;
      auto burst = [&](tlm::tlm_generic_payload& tr, uint64_t addr, unsigned char* dst) {
        tr.set_command(tlm::TLM_READ_COMMAND);
        tr.set_address(addr);
        tr.set_data_ptr(dst);
        tr.set_data_length(unsigned(bytes));
        tr.set_streaming_width(unsigned(bytes));
        tr.set_byte_enable_ptr(nullptr);
        tr.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      };
      const uint64_t base = shard_base_[size_t(t.job)];
      burst(k_trans, base + uint64_t(first) * row_bytes, buf);
      burst(v_trans, base + uint64_t(kv.tokens + first) * row_bytes,
            buf ? buf + size_t(kv_tile) * row_bytes : nullptr);
      const sc_core::sc_time start = sc_core::sc_time_stamp();
      hbm->b_transport(k_trans, dk);
      hbm->b_transport(v_trans, dv);
      if (k_trans.is_response_error() || v_trans.is_response_error())
        SC_REPORT_FATAL("ahbm/pe", ("DMA burst outside the KV shard in " + std::string(name())).c_str());
      sh_.trace.set(sig_dma_, 1);
      sc_core::wait(std::max(dk, dv));
      sh_.trace.set(sig_dma_, 0);
      dma_busy_ += sc_core::sc_time_stamp() - start;
      sh_.span(start, sc_core::sc_time_stamp(), dma_component_, dma_span_, t, n, int64_t(2 * bytes));
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

namespace {
// An n x d tile of DMA'd bytes as fp32: in place for fp32, else decoded into `scratch`.
ConstMapRM widen(DType t, const unsigned char* bytes, int n, int d, MatrixRM& scratch) {
  if (t == DType::fp32) return ConstMapRM(reinterpret_cast<const float*>(bytes), n, d);
  scratch.resize(n, d);
  decode(t, bytes, uint64_t(n) * uint64_t(d), scratch.data());
  return ConstMapRM(scratch.data(), n, d);
}
}  // namespace

void Pe::compute_loop() {
  const auto& cfg = sh_.cfg.pe;
  const int kv_tile = cfg.dma.kv_tile_tokens;
  for (int gt : sh_.tiles_of_group[size_t(group_)]) {
    const TileRef& t = sh_.tiles[size_t(gt)];
    const AttentionJob& job = sh_.jobs[size_t(t.job)];
    const KvShard& kv = shard(t);
    const int rows = t.rows(), d = job.head_dim;

    sh_.trace.set(sig_activity_, uint64_t(PeActivity::q_read));
    TileData q = qbuf_.read(gt, component_);
    sh_.trace.set(sig_activity_, uint64_t(PeActivity::idle));

    StatePtr acc = job.values ? std::make_shared<AttnState>(AttnState::empty(rows, d)) : nullptr;
    for (int first = 0; first < kv.tokens; first += kv_tile) {
      const int n = std::min(kv_tile, kv.tokens - first);
      const int slot = full_slots_.pop();
      busy(PeActivity::gemm_qk, gemm_cycles(cfg.gemm, rows, n, d), t, 0, &gemm_busy_);
      busy(PeActivity::softmax, softmax_cycles(cfg.vector, rows, n, d), t, 0, &vector_busy_);
      busy(PeActivity::gemm_pv, gemm_cycles(cfg.gemm, rows, d, n), t, 0, &gemm_busy_);
      macs_ += 2 * uint64_t(rows) * uint64_t(n) * uint64_t(d);
      gemm_tiles_ += gemm_tiles(cfg.gemm, rows, n, d) + gemm_tiles(cfg.gemm, rows, d, n);
      if (acc) {
        const unsigned char* buf = slots_[size_t(slot)].get();
        const ConstMapRM k = widen(job.dtype, buf, n, d, k_);
        const ConstMapRM v = widen(job.dtype, buf + uint64_t(kv_tile) * uint64_t(d) * job.elem_bytes(), n, d, v_);
        gemm_abt(ConstMapRM(q->data(), rows, d), k, s_);
        s_ *= job.scale;
        apply_mask(s_, job, t, kv, first);
        block_state_into(s_, v, tile_state_, block_);
        merge_into(*acc, tile_state_);
      }
      free_slots_.push(slot);
    }
    sh_.trace.set(sig_activity_, uint64_t(PeActivity::send_state));
    reducer_.send_state(local_, gt, std::move(acc), component_);
    sh_.trace.set(sig_activity_, uint64_t(PeActivity::idle));
  }
}

}  // namespace ahbm
