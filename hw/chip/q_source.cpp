#include "hw/chip/q_source.h"

#include "hw/common/base/component.h"
#include "hw/common/model/resource_times.h"
#include "hw/common/sim/tlm_payload.h"
#include "hw/common/base/storage_type.h"

namespace ahbm {

QSource::QSource(sc_core::sc_module_name name, SimShared& sh, Noc& noc, int endpoint,
                 std::vector<std::vector<QCredits*>> group_buffers, std::vector<std::vector<int>> group_endpoints,
                 int staging_tiles)
    : sc_core::sc_module(name),
      socket("socket"),
      sh_(sh),
      noc_(noc),
      endpoint_(endpoint),
      group_buffers_(std::move(group_buffers)),
      group_endpoints_(std::move(group_endpoints)),
      staging_tiles_(staging_tiles),
      component_(sh.spans.intern(component_path(*this))) {
  sig_staged_ = sh.trace.add_signal(component_path(*this) + ".staged_tiles", 8);
  socket.register_b_transport(this, &QSource::b_transport);
  sh.spans.declare(component_path(*this), {ComponentInfo::Kind::q_source, -1, -1, -1, component_path(*this)});
  sh.waits.add(component_path(*this), [this] { return describe_wait(); });
  SC_HAS_PROCESS(QSource);
  SC_THREAD(multicast_loop);
}

void QSource::begin_run() { q_map_.build(sh_); }

void QSource::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  // One whole tile per write, at its address, in its job's storage type, no streaming.
  const int tile = q_map_.tile_at(trans.get_address());
  const uint64_t bytes = trans.get_data_length();
  if (trans.get_command() != tlm::TLM_WRITE_COMMAND) {
    trans.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  if (tile < 0 || bytes != q_map_.bytes(tile)) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (trans.get_streaming_width() != bytes) {
    trans.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return;
  }
  const bool timing_only = is_timing_only(trans);
  if (trans.get_byte_enable_ptr() && !timing_only) {
    trans.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return;
  }
  // Backpressure: the host's write waits while the staging buffer is full.
  while (staged_ >= staging_tiles_) sc_core::wait(staging_freed_);
  ++staged_;
  sh_.trace.set(sig_staged_, uint64_t(staged_));
  TileData data;
  if (!timing_only && size_t(tile) < sh_.tiles.size()) {
    // The PEs compute in fp32: the stored values widened (exact).
    const TileRef& t = sh_.tiles[size_t(tile)];
    const AttentionJob& job = sh_.jobs[size_t(t.job)];
    auto q = std::make_shared<std::vector<float>>(size_t(t.rows()) * size_t(job.head_dim));
    decode(job.dtype, trans.get_data_ptr(), q->size(), q->data());
    data = std::move(q);
  }
  delay += host_upload<sc_time>(sh_.cfg.host, bytes);
  staging_.push({tile, bytes, std::move(data)}, delay);
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

void QSource::multicast_x(const Staged& s) {
  const int c = s.tile - int(sh_.tiles.size());
  const GemmXChunk& chunk = sh_.gemm.x_chunks[size_t(c)];
  NocPacket p;
  p.src = endpoint_;
  const int cubes = sh_.cfg.group.cubes;
  for (int cube : chunk.cubes) p.dsts.push_back(group_endpoints_[size_t(cube / cubes)][size_t(cube % cubes)]);
  p.bytes = s.bytes;
  p.tag = kGemmXTag;
  auto m = std::make_shared<GemmXMessage>();
  m->chunk = c;
  p.payload = std::move(m);
  noc_.send(std::move(p));
  sh_.gemm.stats[size_t(chunk.job)].x_noc_delivered_bytes += s.bytes * uint64_t(chunk.cubes.size());
  sh_.gemm_span(sc_core::sc_time_stamp(), sc_core::sc_time_stamp(), component_, sh_.spans.intern("multicast"), chunk.job,
                chunk.row_end - chunk.row_begin, int64_t(s.bytes));
}

void QSource::multicast_loop() {
  for (;;) {
    Staged s = staging_.pop();
    if (size_t(s.tile) >= sh_.tiles.size()) {
      multicast_x(s);
      free_staging();
      continue;
    }
    const TileRef& t = sh_.tiles[size_t(s.tile)];
    // The step's kernel must have been launched (host.kernel_launch_ns per launch, serially).
    const sc_core::sc_time& launched = sh_.kernel_launched(t.job);
    if (launched > sc_core::sc_time_stamp()) {
      const sc_core::sc_time w = sc_core::sc_time_stamp();
      sc_core::wait(launched - w);
      sh_.span(w, launched, component_, "kernel_launch", t, 0, 0);
    }
    const sc_core::sc_time start = sc_core::sc_time_stamp();
    // Only the CUBEs whose PEs work on this tile receive it (all of them under Policy A).
    const std::vector<int> cubes = tile_cubes(sh_.jobs[size_t(t.job)].tiles[size_t(t.index)],
                                              int(group_buffers_[size_t(t.group)].size()), sh_.cfg.cube.pes);
    credit_wait_.set("Q-buffer credit in every participating CUBE to multicast", s.tile);
    for (int c : cubes) group_buffers_[size_t(t.group)][size_t(c)]->reserve(s.bytes);  // credits
    credit_wait_.clear();
    if (sc_core::sc_time_stamp() > start)
      sh_.span(start, sc_core::sc_time_stamp(), component_, "wait_q_buffer", t, t.rows(), int64_t(s.bytes));
    NocPacket p;
    p.src = endpoint_;
    for (int c : cubes) p.dsts.push_back(group_endpoints_[size_t(t.group)][size_t(c)]);
    p.bytes = s.bytes;
    p.tag = s.tile;
    p.payload = s.data;
    noc_.send(std::move(p));
    sh_.span(sc_core::sc_time_stamp(), sc_core::sc_time_stamp(), component_, "multicast", t, t.rows(),
             int64_t(s.bytes));
    free_staging();
  }
}

void QSource::free_staging() {
  --staged_;
  sh_.trace.set(sig_staged_, uint64_t(staged_));
  staging_freed_.notify(sc_core::SC_ZERO_TIME);
}

std::string QSource::describe_wait() const {
  const std::string c = credit_wait_.str();
  if (c.empty()) return staged_ ? std::to_string(staged_) + " staged Q tiles not yet multicast" : "";
  return "waits for " + c + "; " + std::to_string(staged_) + " Q tiles staged";
}

}  // namespace ahbm
