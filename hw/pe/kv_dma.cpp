#include "hw/pe/kv_dma.h"

#include <algorithm>

#include "hw/common/sim/tlm_payload.h"

namespace ahbm {

KvDma::KvDma(sc_core::sc_module_name name, const PeContext& pe, tlm::tlm_initiator_socket<>& hbm,
             sc_core::sc_port<KvFabric>& kv, Noc& noc)
    : sc_core::sc_module(name), pe_(pe), hbm_(hbm), kv_(kv), noc_(noc) {
  slots_.resize(size_t(pe.timing.slots));
  SC_HAS_PROCESS(KvDma);
  SC_THREAD(dma_loop);
}

void KvDma::begin_run() {
  const JobList& jobs = pe_.table.jobs;
  remap_expected_.clear();
  remap_received_.clear();
  for (size_t j = 0; j < jobs.size(); ++j) {
    const AttentionJob& job = jobs[j];
    if (job.group != pe_.group) continue;
    if (job.remap && size_t(pe_.pe) < job.replicas.size())
      for (const KvReplica& r : job.replicas[size_t(pe_.pe)])
        remap_expected_[int(j)] += 2 * uint64_t(r.count) * kv_row_bytes(job);
  }
  // Slots keep their buffers; every slot is free, in slot order, as in a new PE.
  for (Slot& s : slots_) s.k = s.v = nullptr;
  free_slots_.clear();
  for (int s = 0; s < int(slots_.size()); ++s) free_slots_.push(s);
  full_slots_.clear();
  responses_.clear();
  remap_done_at_ = sc_core::SC_ZERO_TIME;
  wait_.clear();
  RunContext::start(start_);
}

unsigned char* KvDma::own_slot(int slot, const AttentionJob& job) {
  Slot& s = slots_[size_t(slot)];
  const size_t half = size_t(pe_.timing.kv_tile_tokens) * size_t(kv_row_bytes(job));
  if (s.owned.size() < 2 * half) s.owned.resize(2 * half);
  s.k = s.owned.data();
  s.v = s.owned.data() + half;
  return s.owned.data();
}

const unsigned char* KvDma::direct_read(uint64_t addr, uint64_t len) {
  // DMI is asked for once per stored extent and cached until the slice invalidates it.
  auto covering = [&](const tlm::tlm_dmi& d) { return addr >= d.get_start_address() && addr <= d.get_end_address(); };
  auto it = std::find_if(dmi_.begin(), dmi_.end(), covering);
  if (it == dmi_.end()) {
    tlm::tlm_generic_payload req;
    req.set_command(tlm::TLM_READ_COMMAND);
    req.set_address(addr);
    tlm::tlm_dmi dmi;
    if (!hbm_->get_direct_mem_ptr(req, dmi) || !dmi.is_read_allowed() || !covering(dmi)) return nullptr;
    dmi_.push_back(dmi);
    it = dmi_.end() - 1;
  }
  if (addr + len - 1 > it->get_end_address()) return nullptr;  // the burst leaves the extent: copy it
  return it->get_dmi_ptr() + (addr - it->get_start_address());
}

void KvDma::invalidate_dmi(sc_dt::uint64 first, sc_dt::uint64 last) {
  dmi_.erase(std::remove_if(dmi_.begin(), dmi_.end(),
                            [&](const tlm::tlm_dmi& d) { return d.get_start_address() <= last && d.get_end_address() >= first; }),
             dmi_.end());
}

unsigned char* KvDma::scratch(uint64_t bytes) {
  if (scratch_.size() < bytes) scratch_.resize(bytes);
  return scratch_.data();
}

void KvDma::fill_slot(int slot, const std::vector<unsigned char>* data, int n, const AttentionJob& job) {
  if (!data) {  // timing only
    slots_[size_t(slot)].k = slots_[size_t(slot)].v = nullptr;
    return;
  }
  unsigned char* buf = own_slot(slot, job);
  const size_t half = size_t(n) * size_t(kv_row_bytes(job));
  std::copy(data->begin(), data->begin() + long(half), buf);
  std::copy(data->begin() + long(half), data->begin() + long(2 * half),
            buf + size_t(pe_.timing.kv_tile_tokens) * size_t(kv_row_bytes(job)));
}

void KvDma::remap_arrived(const KvMessage& m) {
  const AttentionJob& job = pe_.table.jobs[size_t(m.job)];
  const uint64_t row = kv_row_bytes(job);
  const uint64_t h = replica_offset_tokens(job, pe_.pe, m.src_pe, m.first);
  const uint64_t held = pe_held_tokens(job, pe_.pe);
  const uint64_t base = kv_->kv_base(pe_.pe, m.job);
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
    hbm_->b_transport(w, d);
    if (w.is_response_error()) SC_REPORT_FATAL("ahbm/pe", ("remapped KV copy outside the slice of " + pe_.name).c_str());
    done = std::max(done, d);
  }
  remap_done_at_ = std::max(remap_done_at_, sc_core::sc_time_stamp() + done);
  remap_received_[m.job] += m.wire_bytes(job);
  remap_progress_.notify(sc_core::SC_ZERO_TIME);
}

void KvDma::broadcast_arrived(const KvMessage& m, int slot) {
  fill_slot(slot, m.data.get(), m.count, pe_.table.jobs[size_t(m.job)]);
  full_slots_.push({slot, m.src_pe, m.first, m.count});
}

void KvDma::wait_for_remap(const TileRef& t) {
  const AttentionJob& job = pe_.table.jobs[size_t(t.job)];
  RunContext& run = pe_.run;
  const sc_core::sc_time start = sc_core::sc_time_stamp();
  while (remap_received_[t.job] < remap_expected_[t.job]) sc_core::wait(remap_progress_);
  if (remap_done_at_ > sc_core::sc_time_stamp()) sc_core::wait(remap_done_at_ - sc_core::sc_time_stamp());
  const sc_core::sc_time copied = sc_core::sc_time_stamp();
  if (copied > start) run.span(start, copied, pe_.ids.dma_component, "remap_wait", t, 0, int64_t(remap_expected_[t.job]));
  uint64_t pages = 0;
  if (size_t(pe_.pe) < job.replicas.size())
    for (const KvReplica& r : job.replicas[size_t(pe_.pe)]) pages += ceil_div(uint64_t(r.count), pe_.timing.page_tokens);
  const uint64_t cycles = pages * pe_.timing.page_rebuild_cycles;
  if (cycles == 0) return;
  sc_core::wait(pe_.timing.cycles(cycles));
  run.span(copied, sc_core::sc_time_stamp(), pe_.ids.dma_component, "page_table", t, 0, 0);
}

KvMessagePtr KvDma::remote_read(int j, int src_pe, int first, int count, bool timing_only) {
  auto m = std::make_shared<KvMessage>();
  m->kind = KvMsgKind::request;
  m->job = j;
  m->requester = pe_.pe;
  m->src_pe = src_pe;
  m->first = first;
  m->count = count;
  m->timing_only = timing_only;
  NocPacket p;
  p.src = kv_->endpoint_of(pe_.pe);
  p.dsts = {kv_->endpoint_of(src_pe)};
  p.bytes = pe_.timing.request_bytes;
  p.tag = kKvTag;
  p.payload = std::move(m);
  noc_.send(std::move(p));
  return responses_.pop();
}

void KvDma::kv_burst_pair(tlm::tlm_command cmd, uint64_t k_addr, uint64_t v_addr, uint64_t bytes) {
  tlm::tlm_generic_payload k_trans, v_trans;
  unsigned char* buf = scratch(2 * bytes);
  unsigned char no_bytes;
  set_payload(k_trans, cmd, k_addr, buf, bytes);
  set_payload(v_trans, cmd, v_addr, buf + bytes, bytes);
  set_timing_only(k_trans, no_bytes);
  set_timing_only(v_trans, no_bytes);
  sc_core::sc_time dk = sc_core::SC_ZERO_TIME, dv = sc_core::SC_ZERO_TIME;
  hbm_->b_transport(k_trans, dk);
  hbm_->b_transport(v_trans, dv);
  if (k_trans.is_response_error() || v_trans.is_response_error())
    SC_REPORT_FATAL("ahbm/pe", ("KV write outside the slice of " + pe_.name).c_str());
  sc_core::wait(std::max(dk, dv));
}

void KvDma::write_kv(int j) {
  if (kv_written_[size_t(j)]) return;
  kv_written_[size_t(j)] = true;
  const JobTable& table = pe_.table;
  RunContext& run = pe_.run;
  const AttentionJob& job = table.jobs[size_t(j)];
  const std::vector<KvWrite>& writes = pe_kv_writes(job, pe_.pe);
  if (writes.empty() || !pe_.timing.kv_writes_timed) return;
  const sc_core::sc_time& launched = run.kernel_launched(j);
  if (launched > sc_core::sc_time_stamp()) sc_core::wait(launched - sc_core::sc_time_stamp());
  // Spans are labelled with the job's first tile (a PE may write for a job it computes no tile of).
  const TileRef* t = nullptr;
  for (int gt : table.tiles_of_group[size_t(pe_.group)])
    if (table.tiles[size_t(gt)].job == j) {
      t = &table.tiles[size_t(gt)];
      break;
    }
  const uint64_t row = kv_row_bytes(job), held = pe_held_tokens(job, pe_.pe), base = kv_->kv_base(pe_.pe, j);
  for (const KvWrite& w : writes) {
    const uint64_t bytes = uint64_t(w.count) * row;
    const uint64_t k_addr = base + uint64_t(w.first) * row, v_addr = base + (held + uint64_t(w.first)) * row;
    const sc_core::sc_time start = sc_core::sc_time_stamp();
    wait_.set(w.copy() ? "a copy-on-write KV page copy" : "KV writes of the step's new tokens", -1);
    run.trace.set(pe_.ids.sig_dma, 1);
    if (w.copy()) {
      if (w.src_pe == pe_.pe) {
        // The source page is in this slice (outside the job's shard layout): its read is timed
        // at the copy's own addresses.
        kv_burst_pair(tlm::TLM_READ_COMMAND, k_addr, v_addr, bytes);
      } else {
        // Read by the owner's CUBE from its slice and sent over the NoC, as a remote read (B2).
        remote_read(j, w.src_pe, 0, w.count, /*timing_only=*/true);
      }
      pe_.counters.kv_copy_bytes += 2 * bytes;
    } else {
      pe_.counters.kv_append_bytes += 2 * bytes;
    }
    kv_burst_pair(tlm::TLM_WRITE_COMMAND, k_addr, v_addr, bytes);
    run.trace.set(pe_.ids.sig_dma, 0);
    wait_.clear();
    pe_.counters.dma_busy += sc_core::sc_time_stamp() - start;
    if (t) run.span(start, sc_core::sc_time_stamp(), pe_.ids.dma_component, w.copy() ? "kv_copy" : "kv_append", *t, w.count,
                    int64_t(2 * bytes));
  }
}

void KvDma::dma_loop() {
  for (;;) {
    sc_core::wait(start_);  // begin_run
    dma_tiles();
  }
}

void KvDma::dma_tiles() {
  const JobList& jobs = pe_.table.jobs;
  RunContext& run = pe_.run;
  int last_job = -1;
  kv_written_.assign(jobs.size(), false);
  for (int gt : pe_.my_tiles) {
    const TileRef& t = pe_.table.tiles[size_t(gt)];
    const AttentionJob& job = jobs[size_t(t.job)];
    write_kv(t.job);  // the step's new KV before the PE reads it
    if (job.kv_broadcast) continue;  // the group's KV mover fills the slots
    if (t.job != last_job) {
      last_job = t.job;
      const sc_core::sc_time& launched = run.kernel_launched(t.job);
      if (launched > sc_core::sc_time_stamp()) sc_core::wait(launched - sc_core::sc_time_stamp());
      if (job.remap) wait_for_remap(t);
    }
    const uint64_t row_bytes = kv_row_bytes(job);
    for (const KvBlock& seg :
         pe_kv_blocks(job, pe_.pe, job.tiles[size_t(t.index)], pe_.timing.kv_tile_tokens, pe_.timing.skip_masked)) {
      const int n = seg.n;
      const int first = seg.first;
      wait_.set("a free SRAM slot for the next KV tile", gt);
      const int slot = free_slots_.pop();
      wait_.clear();
      const uint64_t bytes = uint64_t(n) * row_bytes;
      const sc_core::sc_time start = sc_core::sc_time_stamp();
      run.trace.set(pe_.ids.sig_dma, 1);
      if (!seg.remote) {
        read_local(t, seg, slot);
        run.span(start, sc_core::sc_time_stamp(), pe_.ids.dma_component, "dma_kv", t, n, int64_t(2 * bytes));
      } else {
        // Remote read (B2): the data comes back as one NoC packet into this slot.
        KvMessagePtr r = remote_read(t.job, seg.src_pe, first, n, /*timing_only=*/false);
        fill_slot(slot, r->data.get(), n, job);
        pe_.counters.remote_bytes += 2 * bytes;
        run.span(start, sc_core::sc_time_stamp(), pe_.ids.dma_component, "remote_kv", t, n, int64_t(2 * bytes));
      }
      run.trace.set(pe_.ids.sig_dma, 0);
      pe_.counters.dma_busy += sc_core::sc_time_stamp() - start;
      full_slots_.push({slot, seg.src_pe, first, n});
    }
  }
  // A job this PE computes no tile of still has the PE write the tokens its slice holds.
  for (size_t j = 0; j < jobs.size(); ++j)
    if (jobs[j].group == pe_.group) write_kv(int(j));
}

void KvDma::read_local(const TileRef& t, const KvBlock& seg, int slot) {
  const AttentionJob& job = pe_.table.jobs[size_t(t.job)];
  const int kv_tile = pe_.timing.kv_tile_tokens;
  const uint64_t row_bytes = kv_row_bytes(job), bytes = uint64_t(seg.n) * row_bytes;
  // K and V bursts issued together: their latencies overlap, their transfers do not.
  const uint64_t h =
      seg.src_pe == pe_.pe ? uint64_t(seg.first) : replica_offset_tokens(job, pe_.pe, seg.src_pe, seg.first);
  const uint64_t held = pe_held_tokens(job, pe_.pe);
  const uint64_t base = kv_->kv_base(pe_.pe, t.job);
  sc_core::sc_time dk = sc_core::SC_ZERO_TIME, dv = sc_core::SC_ZERO_TIME;
  const uint64_t k_addr = base + h * row_bytes, v_addr = base + (held + h) * row_bytes;
  // Values: read in place through (cached) DMI when the slice grants it, and the bursts only
  // book the slice (timing-only transfers into scratch); else copied by the bursts. Runs without
  // values: timing-only bursts.
  Slot& s = slots_[size_t(slot)];
  s.k = job.values ? direct_read(k_addr, bytes) : nullptr;
  s.v = job.values ? direct_read(v_addr, bytes) : nullptr;
  const bool copy = job.values && (!s.k || !s.v);
  unsigned char* to = copy ? own_slot(slot, job) : scratch(2 * bytes);
  tlm::tlm_generic_payload k_trans, v_trans;
  unsigned char no_bytes;
  set_payload(k_trans, tlm::TLM_READ_COMMAND, k_addr, to, bytes);
  set_payload(v_trans, tlm::TLM_READ_COMMAND, v_addr, to + (copy ? size_t(kv_tile) * row_bytes : bytes), bytes);
  if (!copy) {
    set_timing_only(k_trans, no_bytes);
    set_timing_only(v_trans, no_bytes);
  }
  hbm_->b_transport(k_trans, dk);
  hbm_->b_transport(v_trans, dv);
  if (k_trans.is_response_error() || v_trans.is_response_error())
    SC_REPORT_FATAL("ahbm/pe", ("DMA burst outside the KV shard in " + pe_.name).c_str());
  sc_core::wait(std::max(dk, dv));
}

sc_core::sc_time KvDma::slice_burst(tlm::tlm_command cmd, uint64_t addr, unsigned char* slot, uint64_t bytes,
                                    bool values, int phase, int op_id, int rows, int activity) {
  const bool read = cmd == tlm::TLM_READ_COMMAND;
  RunContext& run = pe_.run;
  const sc_core::sc_time start = sc_core::sc_time_stamp();
  if (read) run.trace.set(pe_.ids.sig_dma, 1);  // the DMA signal shows the W reads (Y writes overlap them)
  tlm::tlm_generic_payload tr;
  unsigned char no_bytes;
  set_payload(tr, cmd, addr, values ? slot : scratch(bytes), bytes);
  if (!values) set_timing_only(tr, no_bytes);
  sc_core::sc_time d = sc_core::SC_ZERO_TIME;
  hbm_->b_transport(tr, d);
  if (tr.is_response_error())
    SC_REPORT_FATAL("ahbm/pe", (std::string(read ? "W tile outside the weight shard" : "Y block outside the slice") +
                                " in " + pe_.name).c_str());
  sc_core::wait(d);
  if (read) run.trace.set(pe_.ids.sig_dma, 0);
  const sc_core::sc_time end = sc_core::sc_time_stamp();
  run.spans.record(start, end, pe_.ids.dma_component, activity, phase, op_id, rows, int64_t(bytes));
  pe_.counters.dma_busy += end - start;
  return end - start;
}

}  // namespace ahbm
