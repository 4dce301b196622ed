#include "hw/pe/pe.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "hw/common/base/component.h"
#include "hw/common/model/engines.h"
#include "hw/common/sim/tlm_payload.h"

namespace ahbm {

Pe::Pe(sc_core::sc_module_name name, SimShared& sh, Noc& noc, int group, int pe_in_group, int local_index)
    : sc_core::sc_module(name),
      hbm("hbm"),
      q_in("q_in"),
      state_out("state_out"),
      kv("kv"),
      sh_(sh),
      noc_(noc),
      group_(group),
      pe_(pe_in_group),
      local_(local_index),
      chip_pe_(group * sh.cfg.pes_per_group() + pe_in_group),
      component_(sh.spans.intern(component_path(*this))),
      dma_component_(sh.spans.intern(component_path(*this) + ".dma")) {
  const std::string path = component_path(*this);
  sig_activity_ = sh.trace.add_signal(path + ".activity", 3);
  sig_dma_ = sh.trace.add_signal(path + ".dma_busy", 1);
  // The vector unit works beside the GEMM engine only with overlap: then `activity` shows the
  // GEMM engine and this signal the vector unit (docs/waveforms.md).
  if (sh.cfg.pe.ping_pong()) sig_vector_ = sh.trace.add_signal(path + ".vector_busy", 1);
  slots_.resize(size_t(sh.cfg.pe.dma.buffers));
  sh.waits.add(path, [this] { return describe_wait(); });
  hbm.register_invalidate_direct_mem_ptr(this, &Pe::invalidate_dmi);
  SC_HAS_PROCESS(Pe);
  SC_THREAD(dma_loop);
  SC_THREAD(compute_loop);
  SC_THREAD(gemm_dma_loop);
  SC_THREAD(gemm_compute_loop);
  SC_THREAD(gemm_write_loop);
}

void Pe::begin_run() {
  remap_expected_.clear();
  remap_received_.clear();
  for (size_t j = 0; j < sh_.jobs.size(); ++j) {
    const AttentionJob& job = sh_.jobs[j];
    if (job.group != group_) continue;
    if (job.remap && size_t(pe_) < job.replicas.size())
      for (const KvReplica& r : job.replicas[size_t(pe_)])
        remap_expected_[int(j)] += 2 * uint64_t(r.count) * kv_row_bytes(job);
  }
  my_tiles_.clear();
  for (int gt : sh_.tiles_of_group[size_t(group_)]) {
    const TileRef& t = sh_.tiles[size_t(gt)];
    if (tile_has_pe(sh_.jobs[size_t(t.job)].tiles[size_t(t.index)], pe_)) my_tiles_.push_back(gt);
  }
  // Slots keep their buffers; every slot is free, in slot order, as in a new PE.
  for (Slot& s : slots_) s.k = s.v = nullptr;
  free_slots_.clear();
  for (int s = 0; s < int(slots_.size()); ++s) free_slots_.push(s);
  full_slots_.clear();
  responses_.clear();
  remap_done_at_ = sc_core::SC_ZERO_TIME;
  gemm_busy_ = vector_busy_ = dma_busy_ = sc_core::SC_ZERO_TIME;
  macs_ = gemm_tiles_ = remote_bytes_ = kv_tiles_skipped_ = macs_skipped_ = 0;
  vector_ops_ = sram_bytes_ = x_bytes_read_ = kv_append_bytes_ = kv_copy_bytes_ = 0;
  tiles_done_ = 0;
  compute_wait_.clear();
  dma_wait_.clear();
  sh_.start(dma_start_);
  sh_.start(compute_start_);
  // A run of weight GEMMs (none in a run of attention jobs: those runs schedule nothing more).
  gemm_free_.clear();
  gemm_full_.clear();
  gemm_out_.clear();
  gemm_next_seq_ = 0;
  gemm_early_.clear();
  gemm_partials_.clear();
  gemm_blocks_done_ = gemm_blocks_total_ = 0;
  if (!has_gemm_work()) return;
  const GemmRun& g = sh_.gemm;
  uint64_t slot_bytes = 0;
  for (size_t j = 0; j < g.jobs.size(); ++j) {
    const GemmPePlan& pl = g.plans[j][size_t(chip_pe_)];
    if (!pl.active() && !pl.receives()) continue;
    slot_bytes = std::max(slot_bytes, pl.blk.slot_bytes);
    gemm_blocks_total_ += gemm_y_blocks(g.jobs[j], pl, g.columns[j]);
  }
  gemm_slots_.resize(size_t(sh_.cfg.pe.dma.buffers));
  for (int s = 0; s < sh_.cfg.pe.dma.buffers; ++s) {
    if (gemm_slots_[size_t(s)].size() < slot_bytes) gemm_slots_[size_t(s)].resize(slot_bytes);
    gemm_free_.push(s);
  }
  sh_.start(gemm_dma_start_);
  sh_.start(gemm_compute_start_);
  sh_.start(gemm_write_start_);
}

void Pe::busy(PeActivity a, const char* name, uint64_t cycles, const TileRef& t, int64_t bytes,
              sc_core::sc_time* account) {
  if (cycles == 0) return;
  const sc_core::sc_time start = sc_core::sc_time_stamp();
  sh_.trace.set(sig_activity_, uint64_t(a));
  sc_core::wait(sh_.cycles(cycles));
  sh_.trace.set(sig_activity_, uint64_t(PeActivity::idle));
  sh_.span(start, sc_core::sc_time_stamp(), component_, activity_id(a, name), t, t.rows(), bytes);
  if (account) *account += sc_core::sc_time_stamp() - start;
}

unsigned char* Pe::own_slot(int slot, const AttentionJob& job) {
  Slot& s = slots_[size_t(slot)];
  const size_t half = size_t(sh_.cfg.pe.dma.kv_tile_tokens) * size_t(kv_row_bytes(job));
  if (s.owned.size() < 2 * half) s.owned.resize(2 * half);
  s.k = s.owned.data();
  s.v = s.owned.data() + half;
  return s.owned.data();
}

const unsigned char* Pe::direct_read(uint64_t addr, uint64_t len) {
  // DMI is asked for once per stored extent and cached until the slice invalidates it.
  auto covering = [&](const tlm::tlm_dmi& d) { return addr >= d.get_start_address() && addr <= d.get_end_address(); };
  auto it = std::find_if(dmi_.begin(), dmi_.end(), covering);
  if (it == dmi_.end()) {
    tlm::tlm_generic_payload req;
    req.set_command(tlm::TLM_READ_COMMAND);
    req.set_address(addr);
    tlm::tlm_dmi dmi;
    if (!hbm->get_direct_mem_ptr(req, dmi) || !dmi.is_read_allowed() || !covering(dmi)) return nullptr;
    dmi_.push_back(dmi);
    it = dmi_.end() - 1;
  }
  if (addr + len - 1 > it->get_end_address()) return nullptr;  // the burst leaves the extent: copy it
  return it->get_dmi_ptr() + (addr - it->get_start_address());
}

void Pe::invalidate_dmi(sc_dt::uint64 first, sc_dt::uint64 last) {
  dmi_.erase(std::remove_if(dmi_.begin(), dmi_.end(),
                            [&](const tlm::tlm_dmi& d) { return d.get_start_address() <= last && d.get_end_address() >= first; }),
             dmi_.end());
}

unsigned char* Pe::scratch(uint64_t bytes) {
  if (scratch_.size() < bytes) scratch_.resize(bytes);
  return scratch_.data();
}

void Pe::fill_slot(int slot, const std::vector<unsigned char>* data, int n, const AttentionJob& job) {
  if (!data) {  // timing only
    slots_[size_t(slot)].k = slots_[size_t(slot)].v = nullptr;
    return;
  }
  unsigned char* buf = own_slot(slot, job);
  const size_t half = size_t(n) * size_t(kv_row_bytes(job));
  std::copy(data->begin(), data->begin() + long(half), buf);
  std::copy(data->begin() + long(half), data->begin() + long(2 * half),
            buf + size_t(sh_.cfg.pe.dma.kv_tile_tokens) * size_t(kv_row_bytes(job)));
}

void Pe::remote_response(KvMessagePtr m) { responses_.push(std::move(m)); }

void Pe::remap_arrived(const KvMessage& m) {
  const AttentionJob& job = sh_.jobs[size_t(m.job)];
  const uint64_t row = kv_row_bytes(job);
  const uint64_t h = replica_offset_tokens(job, pe_, m.src_pe, m.first);
  const uint64_t held = pe_held_tokens(job, pe_);
  const uint64_t base = kv->kv_base(pe_, m.job);
  const uint64_t n = uint64_t(m.count) * row;
  // The copy arrives over the NoC and is written through the PE's port into its slice.
  unsigned char* k = m.data ? const_cast<unsigned char*>(m.data->data()) : scratch(2 * n);  // WRITE: read only
  sc_core::sc_time done = sc_core::SC_ZERO_TIME;
  for (int half = 0; half < 2; ++half) {
    tlm::tlm_generic_payload w;
    unsigned char no_bytes;
    set_payload(w, tlm::TLM_WRITE_COMMAND, base + (half ? held + h : h) * row, k + half * n, n);
    if (!m.data) set_timing_only(w, no_bytes);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    hbm->b_transport(w, d);
    if (w.is_response_error())
      SC_REPORT_FATAL("ahbm/pe", ("remapped KV copy outside the slice of " + std::string(name())).c_str());
    done = std::max(done, d);
  }
  remap_done_at_ = std::max(remap_done_at_, sc_core::sc_time_stamp() + done);
  remap_received_[m.job] += m.wire_bytes(job);
  remap_progress_.notify(sc_core::SC_ZERO_TIME);
}

void Pe::broadcast_arrived(const KvMessage& m, int slot) {
  fill_slot(slot, m.data.get(), m.count, sh_.jobs[size_t(m.job)]);
  full_slots_.push({slot, m.src_pe, m.first, m.count});
}

void Pe::wait_for_remap(const TileRef& t) {
  const AttentionJob& job = sh_.jobs[size_t(t.job)];
  const sc_core::sc_time start = sc_core::sc_time_stamp();
  while (remap_received_[t.job] < remap_expected_[t.job]) sc_core::wait(remap_progress_);
  if (remap_done_at_ > sc_core::sc_time_stamp()) sc_core::wait(remap_done_at_ - sc_core::sc_time_stamp());
  const sc_core::sc_time copied = sc_core::sc_time_stamp();
  if (copied > start) sh_.span(start, copied, dma_component_, "remap_wait", t, 0, int64_t(remap_expected_[t.job]));
  uint64_t pages = 0;
  if (size_t(pe_) < job.replicas.size())
    for (const KvReplica& r : job.replicas[size_t(pe_)])
      pages += ceil_div(uint64_t(r.count), uint64_t(sh_.cfg.remote.page_tokens));
  const uint64_t cycles = pages * uint64_t(sh_.cfg.remote.page_rebuild_cycles);
  if (cycles == 0) return;
  sc_core::wait(sh_.cycles(cycles));
  sh_.span(copied, sc_core::sc_time_stamp(), dma_component_, "page_table", t, 0, 0);
}

KvMessagePtr Pe::remote_read(int j, int src_pe, int first, int count, bool timing_only) {
  auto m = std::make_shared<KvMessage>();
  m->kind = KvMsgKind::request;
  m->job = j;
  m->requester = pe_;
  m->src_pe = src_pe;
  m->first = first;
  m->count = count;
  m->timing_only = timing_only;
  NocPacket p;
  p.src = kv->endpoint_of(pe_);
  p.dsts = {kv->endpoint_of(src_pe)};
  p.bytes = uint64_t(sh_.cfg.remote.request_bytes);
  p.tag = kKvTag;
  p.payload = std::move(m);
  noc_.send(std::move(p));
  return responses_.pop();
}

void Pe::kv_burst_pair(tlm::tlm_command cmd, uint64_t k_addr, uint64_t v_addr, uint64_t bytes) {
  tlm::tlm_generic_payload k_trans, v_trans;
  unsigned char* buf = scratch(2 * bytes);
  unsigned char no_bytes;
  set_payload(k_trans, cmd, k_addr, buf, bytes);
  set_payload(v_trans, cmd, v_addr, buf + bytes, bytes);
  set_timing_only(k_trans, no_bytes);
  set_timing_only(v_trans, no_bytes);
  sc_core::sc_time dk = sc_core::SC_ZERO_TIME, dv = sc_core::SC_ZERO_TIME;
  hbm->b_transport(k_trans, dk);
  hbm->b_transport(v_trans, dv);
  if (k_trans.is_response_error() || v_trans.is_response_error())
    SC_REPORT_FATAL("ahbm/pe", ("KV write outside the slice of " + std::string(name())).c_str());
  sc_core::wait(std::max(dk, dv));
}

void Pe::write_kv(int j) {
  if (kv_written_[size_t(j)]) return;
  kv_written_[size_t(j)] = true;
  const AttentionJob& job = sh_.jobs[size_t(j)];
  const std::vector<KvWrite>& writes = pe_kv_writes(job, pe_);
  if (writes.empty() || sh_.cfg.pe.dma.kv_writes != KvWritePolicy::timed) return;
  const sc_core::sc_time& launched = sh_.kernel_launched(j);
  if (launched > sc_core::sc_time_stamp()) sc_core::wait(launched - sc_core::sc_time_stamp());
  // Spans are labelled with the job's first tile (a PE may write for a job it computes no tile of).
  const TileRef* t = nullptr;
  for (int gt : sh_.tiles_of_group[size_t(group_)])
    if (sh_.tiles[size_t(gt)].job == j) {
      t = &sh_.tiles[size_t(gt)];
      break;
    }
  const uint64_t row = kv_row_bytes(job), held = pe_held_tokens(job, pe_), base = kv->kv_base(pe_, j);
  for (const KvWrite& w : writes) {
    const uint64_t bytes = uint64_t(w.count) * row;
    const uint64_t k_addr = base + uint64_t(w.first) * row, v_addr = base + (held + uint64_t(w.first)) * row;
    const sc_core::sc_time start = sc_core::sc_time_stamp();
    dma_wait_.set(w.copy() ? "a copy-on-write KV page copy" : "KV writes of the step's new tokens", -1);
    sh_.trace.set(sig_dma_, 1);
    if (w.copy()) {
      if (w.src_pe == pe_) {
        // The source page is in this slice (outside the job's shard layout): its read is timed
        // at the copy's own addresses.
        kv_burst_pair(tlm::TLM_READ_COMMAND, k_addr, v_addr, bytes);
      } else {
        // Read by the owner's CUBE from its slice and sent over the NoC, as a remote read (B2).
        remote_read(j, w.src_pe, 0, w.count, /*timing_only=*/true);
      }
      kv_copy_bytes_ += 2 * bytes;
    } else {
      kv_append_bytes_ += 2 * bytes;
    }
    kv_burst_pair(tlm::TLM_WRITE_COMMAND, k_addr, v_addr, bytes);
    sh_.trace.set(sig_dma_, 0);
    dma_wait_.clear();
    dma_busy_ += sc_core::sc_time_stamp() - start;
    if (t) sh_.span(start, sc_core::sc_time_stamp(), dma_component_, w.copy() ? "kv_copy" : "kv_append", *t, w.count,
                    int64_t(2 * bytes));
  }
}

void Pe::dma_loop() {
  for (;;) {
    sc_core::wait(dma_start_);  // begin_run
    dma_tiles();
  }
}

void Pe::dma_tiles() {
  const int kv_tile = sh_.cfg.pe.dma.kv_tile_tokens;
  tlm::tlm_generic_payload k_trans, v_trans;
  int last_job = -1;
  kv_written_.assign(sh_.jobs.size(), false);
  for (int gt : my_tiles_) {
    const TileRef& t = sh_.tiles[size_t(gt)];
    const AttentionJob& job = sh_.jobs[size_t(t.job)];
    write_kv(t.job);  // the step's new KV before the PE reads it
    if (job.kv_broadcast) continue;  // the group's KV mover fills the slots
    if (t.job != last_job) {
      last_job = t.job;
      const sc_core::sc_time& launched = sh_.kernel_launched(t.job);
      if (launched > sc_core::sc_time_stamp()) sc_core::wait(launched - sc_core::sc_time_stamp());
      if (job.remap) wait_for_remap(t);
    }
    const uint64_t row_bytes = kv_row_bytes(job);
    for (const KvBlock& seg : pe_kv_blocks(job, pe_, job.tiles[size_t(t.index)], kv_tile, skip_masked())) {
      {
        const int n = seg.n;
        const int first = seg.first;
        dma_wait_.set("a free SRAM slot for the next KV tile", gt);
        const int slot = free_slots_.pop();
        dma_wait_.clear();
        const uint64_t bytes = uint64_t(n) * row_bytes;
        const sc_core::sc_time start = sc_core::sc_time_stamp();
        sh_.trace.set(sig_dma_, 1);
        if (!seg.remote) {
          // K and V bursts issued together: their latencies overlap, their transfers do not.
          const uint64_t h = seg.src_pe == pe_ ? uint64_t(first) : replica_offset_tokens(job, pe_, seg.src_pe, first);
          const uint64_t held = pe_held_tokens(job, pe_);
          const uint64_t base = kv->kv_base(pe_, t.job);
          sc_core::sc_time dk = sc_core::SC_ZERO_TIME, dv = sc_core::SC_ZERO_TIME;
          const uint64_t k_addr = base + h * row_bytes, v_addr = base + (held + h) * row_bytes;
          // Values: read in place through (cached) DMI when the slice grants it, and the bursts
          // only book the slice (timing-only transfers into scratch); else copied by the bursts.
          // Runs without values: timing-only bursts.
          Slot& s = slots_[size_t(slot)];
          s.k = job.values ? direct_read(k_addr, bytes) : nullptr;
          s.v = job.values ? direct_read(v_addr, bytes) : nullptr;
          const bool copy = job.values && (!s.k || !s.v);
          unsigned char* to = copy ? own_slot(slot, job) : scratch(2 * bytes);
          unsigned char no_bytes;
          set_payload(k_trans, tlm::TLM_READ_COMMAND, k_addr, to, bytes);
          set_payload(v_trans, tlm::TLM_READ_COMMAND, v_addr, to + (copy ? size_t(kv_tile) * row_bytes : bytes), bytes);
          if (!copy) {
            set_timing_only(k_trans, no_bytes);
            set_timing_only(v_trans, no_bytes);
          }
          hbm->b_transport(k_trans, dk);
          hbm->b_transport(v_trans, dv);
          if (k_trans.is_response_error() || v_trans.is_response_error())
            SC_REPORT_FATAL("ahbm/pe", ("DMA burst outside the KV shard in " + std::string(name())).c_str());
          sc_core::wait(std::max(dk, dv));
          sh_.span(start, sc_core::sc_time_stamp(), dma_component_, "dma_kv", t, n, int64_t(2 * bytes));
        } else {
          // Remote read (B2): the data comes back as one NoC packet into this slot.
          KvMessagePtr r = remote_read(t.job, seg.src_pe, first, n, /*timing_only=*/false);
          fill_slot(slot, r->data.get(), n, job);
          remote_bytes_ += 2 * bytes;
          sh_.span(start, sc_core::sc_time_stamp(), dma_component_, "remote_kv", t, n, int64_t(2 * bytes));
        }
        sh_.trace.set(sig_dma_, 0);
        dma_busy_ += sc_core::sc_time_stamp() - start;
        full_slots_.push({slot, seg.src_pe, first, n});
      }
    }
  }
  // A job this PE computes no tile of still has the PE write the tokens its slice holds.
  for (size_t j = 0; j < sh_.jobs.size(); ++j)
    if (sh_.jobs[j].group == group_) write_kv(int(j));
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

void Pe::count_block(const AttentionJob& job, int rows, int n) {
  const auto& g = sh_.cfg.pe.gemm;
  const uint64_t d = uint64_t(job.head_dim);
  macs_ += 2 * uint64_t(rows) * uint64_t(n) * d;
  vector_ops_ += softmax_ops(sh_.cfg.pe.vector, uint64_t(rows), uint64_t(n), d);
  sram_bytes_ += 2 * uint64_t(n) * d * dtype_bytes(job.dtype);  // the block's K and V
  gemm_tiles_ += gemm_issued_tiles(g, uint64_t(rows), uint64_t(n), d, job.dtype) +
                 gemm_issued_tiles(g, uint64_t(rows), d, uint64_t(n), job.dtype);
}

void Pe::accumulate_block(const StatePtr& acc, const Block& blk, const TileRef& t, int gt, uint64_t b) {
  if (!acc) return;
  const AttentionJob& job = sh_.jobs[size_t(t.job)];
  const int rows = t.rows(), d = job.head_dim, n = blk.n;
  // No wait from here to the end of the block: the shared scratch is this PE's meanwhile.
  TileScratch& x = sh_.scratch;
  const Slot& slot = slots_[size_t(blk.slot)];
  const ConstMapRM k = widen(job.dtype, slot.k, n, d, x.k);
  const ConstMapRM v = widen(job.dtype, slot.v, n, d, x.v);
  gemm_abt(ConstMapRM(q_in_tile_->data(), rows, d), k, x.s);
  x.s *= job.scale;
  apply_mask(x.s, job, t, job.shards[size_t(blk.src_pe)], blk.first);
  block_state_into(x.s, v, x.state, x.block);
  merge_into(*acc, x.state);
  if (b == 0 && sh_.cfg.fault.nan_state_pe == pe_)  // FAULT INJECTION (tests): a NaN the guard must find
    acc->o(0, 0) = std::numeric_limits<float>::quiet_NaN();
  sh_.guard.check(*acc, component_, gt);
}

void Pe::compute_blocks_overlapped(const TileRef& t, int gt, uint64_t blocks, const StatePtr& acc) {
  // pe.overlap = ping_pong: the engines are two timelines (engines.h KvBlockPipeline). Each KV
  // block's work is placed on them when the block is in SRAM, its spans and signal changes
  // recorded at the placed times, and its slot freed when its P V ends; the process waits only
  // for KV blocks (until the pending softmax ends, then the pending P V goes first) and for the
  // engines to finish before the state leaves. Values are computed when the block is taken:
  // the order of the merges, hence O, is that of `none`.
  const AttentionJob& job = sh_.jobs[size_t(t.job)];
  const PeConfig& cfg = sh_.cfg.pe;
  const int rows = t.rows(), d = job.head_dim;
  using Pipeline = KvBlockPipeline<sc_core::sc_time>;
  Pipeline engines(true);
  engines.begin(sc_core::sc_time_stamp());
  std::vector<Pipeline::Placed> placed;
  auto record = [&] {
    for (const Pipeline::Placed& op : placed) {
      if (op.op == EngineOp::gemm_pv) free_slots_.push(op.tag, op.end - sc_core::sc_time_stamp());
      if (op.end == op.start) continue;  // no work (as busy() records none)
      const bool gemm = op.op != EngineOp::softmax;
      const PeActivity a = op.op == EngineOp::gemm_qk ? PeActivity::gemm_qk
                           : op.op == EngineOp::gemm_pv ? PeActivity::gemm_pv : PeActivity::softmax;
      const int sig = gemm ? sig_activity_ : sig_vector_;
      sh_.trace.set_at_ns(sig, gemm ? uint64_t(a) : 1, trace_ns(op.start));
      sh_.trace.set_at_ns(sig, 0, trace_ns(op.end));
      sh_.span(op.start, op.end, component_,
               activity_id(a, gemm ? (a == PeActivity::gemm_qk ? "gemm_qk" : "gemm_pv") : "softmax"), t, t.rows(), 0);
      (gemm ? gemm_busy_ : vector_busy_) += op.end - op.start;
    }
    placed.clear();
  };
  for (uint64_t b = 0; b < blocks; ++b) {
    compute_wait_.set("a KV tile from its DMA", gt);
    std::optional<Block> blk;
    if (engines.pending()) blk = full_slots_.pop_by(engines.lookahead_deadline());
    if (!blk) {
      engines.flush(placed);  // no next block in time: the pending P V goes first
      record();
      blk = full_slots_.pop();
    }
    compute_wait_.clear();
    const BlockWork w = block_work(cfg, uint64_t(rows), uint64_t(blk->n), uint64_t(d), job.dtype);
    engines.add(blk->slot, sc_core::sc_time_stamp(), {sh_.cycles(w.qk), sh_.cycles(w.softmax), sh_.cycles(w.pv)}, placed);
    record();
    count_block(job, rows, blk->n);
    accumulate_block(acc, *blk, t, gt, b);
  }
  engines.flush(placed);
  record();
  if (engines.end() > sc_core::sc_time_stamp()) sc_core::wait(engines.end() - sc_core::sc_time_stamp());
}

void Pe::scores_round_trip(const TileRef& t, int rows, int n) {
  // The Q·Kᵀ kernel writes S (rows × n fp32) out, the softmax·V kernel reads it back: timing-only
  // bursts (the values stay in the datapath, fp32 either way) in a scratch region at the top of
  // the slice, above what the runtime places there (KV and weights fill it from the bottom).
  const uint64_t bytes = uint64_t(rows) * uint64_t(n) * 4, addr = sh_.cfg.pe.hbm.capacity_bytes - bytes;
  slice_burst(tlm::TLM_WRITE_COMMAND, addr, nullptr, bytes, false, t.phase_id, t.agent_id, rows, sh_.spans.intern("scores_out"));
  slice_burst(tlm::TLM_READ_COMMAND, addr, nullptr, bytes, false, t.phase_id, t.agent_id, rows, sh_.spans.intern("scores_in"));
}

uint64_t Pe::trace_ns(const sc_core::sc_time& t) const { return uint64_t(std::llround(to_ns(t - sh_.epoch))); }

void Pe::compute_loop() {
  for (;;) {
    sc_core::wait(compute_start_);  // begin_run
    compute_tiles();
    // A run of unfused vector kernels has no tiles; other runs have no kernels (no process of
    // its own: it would cost every PE of every chip a coroutine stack).
    vector_kernels();
  }
}

void Pe::compute_tiles() {
  const auto& cfg = sh_.cfg.pe;
  const int kv_tile = cfg.dma.kv_tile_tokens;
  for (int gt : my_tiles_) {
    const TileRef& t = sh_.tiles[size_t(gt)];
    const AttentionJob& job = sh_.jobs[size_t(t.job)];
    const int rows = t.rows(), d = job.head_dim;
    // KV tiles this Q tile meets: every owner's whole shard when broadcast, else its segments.
    uint64_t blocks = 0;
    if (job.kv_broadcast) {
      for (const KvShard& s : job.shards) blocks += ceil_div(uint64_t(s.tokens), uint64_t(kv_tile));
    } else {
      // The DMA streams exactly these (dma_tiles); the skipped ones are counted here.
      uint64_t all = 0, all_tokens = 0, tokens = 0;
      for (const KvSegment& s : pe_segments(job, pe_)) {
        all += ceil_div(uint64_t(s.count), uint64_t(kv_tile));
        all_tokens += uint64_t(s.count);
      }
      const std::vector<KvBlock> streamed = pe_kv_blocks(job, pe_, job.tiles[size_t(t.index)], kv_tile, skip_masked());
      for (const KvBlock& b : streamed) tokens += uint64_t(b.n);
      blocks = streamed.size();
      kv_tiles_skipped_ += all - blocks;
      macs_skipped_ += 2 * uint64_t(rows) * (all_tokens - tokens) * uint64_t(d);
    }

    sh_.trace.set(sig_activity_, uint64_t(PeActivity::q_read));
    compute_wait_.set("its Q tile in the CUBE Q buffer", gt);
    q_in_tile_ = q_in->read_q(gt, component_);
    sram_bytes_ += uint64_t(rows) * uint64_t(d) * dtype_bytes(job.dtype);
    compute_wait_.clear();
    sh_.trace.set(sig_activity_, uint64_t(PeActivity::idle));

    StatePtr acc = job.values ? std::make_shared<AttnState>(AttnState::empty(rows, d)) : nullptr;
    // Unfused attention's two kernels alternate per KV block through HBM: no ping-pong overlap.
    if (cfg.ping_pong() && !job.scores_in_hbm) {
      compute_blocks_overlapped(t, gt, blocks, acc);
    } else {
      for (uint64_t b = 0; b < blocks; ++b) {
        compute_wait_.set("a KV tile from its DMA", gt);
        const Block blk = full_slots_.pop();
        compute_wait_.clear();
        const int n = blk.n;
        busy(PeActivity::gemm_qk, "gemm_qk", gemm_cycles(cfg.gemm, rows, n, d, job.dtype), t, 0, &gemm_busy_);
        if (job.scores_in_hbm) scores_round_trip(t, rows, n);
        busy(PeActivity::softmax, "softmax", softmax_cycles(cfg.vector, rows, n, d), t, 0, &vector_busy_);
        busy(PeActivity::gemm_pv, "gemm_pv", gemm_cycles(cfg.gemm, rows, d, n, job.dtype), t, 0, &gemm_busy_);
        count_block(job, rows, n);
        accumulate_block(acc, blk, t, gt, b);
        free_slots_.push(blk.slot);
      }
    }
    sh_.trace.set(sig_activity_, uint64_t(PeActivity::send_state));
    state_out->send_state(local_, gt, std::move(acc), component_);
    q_in_tile_.reset();
    sh_.trace.set(sig_activity_, uint64_t(PeActivity::idle));
    ++tiles_done_;
  }
}

std::string Pe::describe_wait() const {
  if (gemm_blocks_done_ < gemm_blocks_total_)
    return "finished " + std::to_string(gemm_blocks_done_) + " of " + std::to_string(gemm_blocks_total_) +
           " Y blocks of its weight GEMMs";
  const size_t total = sh_.tiles_of_group[size_t(group_)].size();
  if (tiles_done_ == total) return "";
  std::string out = "computed " + std::to_string(tiles_done_) + " of " + std::to_string(total) + " Q tiles";
  if (compute_wait_.what) out += "; compute waits for " + compute_wait_.str();
  if (dma_wait_.what) out += "; DMA waits for " + dma_wait_.str();
  return out;
}

void Pe::report_stats(StatsNode& node) const {
  node.component = sh_.spans.name(component_);
  node.set(PeStats::gemm_busy, to_ns(gemm_busy_));
  node.set(PeStats::vector_busy, to_ns(vector_busy_));
  node.set(PeStats::dma_busy, to_ns(dma_busy_));
  node.set(PeStats::macs, macs_);
  node.set(PeStats::gemm_tiles, gemm_tiles_);
  node.set(PeStats::remote_kv_bytes, remote_bytes_);
  node.set(PeStats::kv_tiles_skipped, kv_tiles_skipped_);
  node.set(PeStats::macs_skipped, macs_skipped_);
  node.set(PeStats::vector_ops, vector_ops_);
  node.set(PeStats::sram_bytes, sram_bytes_);
  node.set(PeStats::x_bytes_read, x_bytes_read_);
  node.set(PeStats::kv_append_bytes, kv_append_bytes_);
  node.set(PeStats::kv_copy_bytes, kv_copy_bytes_);
}

}  // namespace ahbm
