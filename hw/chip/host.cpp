#include "hw/chip/host.h"

#include "hw/common/base/component.h"
#include "hw/common/model/resource_times.h"
#include "hw/common/model/engines.h"
#include "hw/common/sim/tlm_payload.h"
#include "hw/common/base/storage_type.h"

namespace ahbm {

Host::Host(sc_core::sc_module_name name, SimShared& sh)
    : sc_core::sc_module(name), q_out("q_out"), sh_(sh), component_(sh.spans.intern(component_path(*this))) {
  sh.spans.declare(component_path(*this), {ComponentInfo::Kind::host, -1, -1, -1, component_path(*this)});
  sh.waits.add(component_path(*this), [this] { return describe_wait(); });
  SC_HAS_PROCESS(Host);
  SC_THREAD(send_loop);
  SC_THREAD(receive_loop);
}

void Host::begin_run() {
  outputs.clear();
  for (const auto& job : sh_.jobs)
    outputs.push_back(job.values ? MatrixRM::Zero(job.row_count(), job.head_dim) : MatrixRM());
  tile_done.assign(sh_.tiles.size(), sc_core::SC_ZERO_TIME);
  tile_received.assign(sh_.tiles.size(), false);
  tiles_received = 0;
  q_bytes_ = o_bytes_ = 0;
  q_wait_.clear();
  o_link_.reset();
  landed_.clear();
  q_map_.build(sh_);
  sh_.start(start_);
}

void Host::send_loop() {
  for (;;) {
    sc_core::wait(start_);  // begin_run
    send_tiles();
  }
}

void Host::send_tiles() {
  tlm::tlm_generic_payload trans;
  std::vector<unsigned char> q;  // the tile's rows in the job's storage type
  unsigned char no_bytes;
  // The run's Q tiles, or the X chunks of its weight GEMMs (q_address_map.h), one write each.
  const size_t tiles = sh_.tiles.size(), entries = tiles + sh_.gemm.x_chunks.size();
  for (size_t gt = 0; gt < entries; ++gt) {
    const uint64_t bytes = q_map_.bytes(int(gt));
    // X chunks go timing only: the PEs take X's values from the job (gemm_job.h).
    const bool values = gt < tiles && sh_.jobs[size_t(sh_.tiles[gt].job)].values;
    q.resize(bytes);
    if (values) {
      const TileRef& t = sh_.tiles[gt];
      const AttentionJob& job = sh_.jobs[size_t(t.job)];
      encode(job.dtype, job.q.data() + size_t(t.row_begin) * size_t(job.head_dim),
             uint64_t(t.rows()) * uint64_t(job.head_dim), q.data());
    }
    set_payload(trans, tlm::TLM_WRITE_COMMAND, q_map_.address(int(gt)), q.data(), bytes);
    if (!values) set_timing_only(trans, no_bytes);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    const sc_core::sc_time start = sc_core::sc_time_stamp();
    q_wait_.set(gt < tiles ? "a Q-source staging slot to write Q" : "a Q-source staging slot to write X", int(gt));
    q_out->b_transport(trans, delay);
    if (trans.is_response_error())
      SC_REPORT_FATAL("ahbm/host", ("Q write of tile " + std::to_string(gt) + " refused: " + trans.get_response_string()).c_str());
    sc_core::wait(delay);
    q_wait_.clear();
    if (gt < tiles) {
      const TileRef& t = sh_.tiles[gt];
      sh_.span(start, sc_core::sc_time_stamp(), component_, "q_load", t, t.rows(), int64_t(bytes));
    } else {
      const GemmXChunk& c = sh_.gemm.x_chunks[gt - tiles];
      sh_.gemm_span(start, sc_core::sc_time_stamp(), component_, sh_.spans.intern("x_load"), c.job, c.row_end - c.row_begin,
                    int64_t(bytes));
    }
    q_bytes_ += bytes;
  }
}

void Host::noc_receive(int, const NocPacket& p) {
  // O reached the chip's host port: the link sends it after the O tiles before it.
  const auto [start, end] = o_link_.reserve(host_transfer<sc_time>(sh_.cfg.host, p.bytes));
  o_bytes_ += p.bytes;
  const sc_core::sc_time landed = end + host_latency<sc_time>(sh_.cfg.host);
  landed_.push({p.tag, p.payload, start}, landed - sc_core::sc_time_stamp());
}

void Host::report_stats(StatsNode& node) const {
  node.component = sh_.spans.name(component_);
  node.set(HostStats::q_bytes, q_bytes_);
  node.set(HostStats::o_bytes, o_bytes_);
}

void Host::receive_loop() {
  for (;;) {
    OReturn r = landed_.pop();
    const size_t gt = size_t(r.tile);
    const TileRef& t = sh_.tiles[gt];
    sh_.span(r.start, sc_core::sc_time_stamp(), component_, "o_return", t, t.rows(),
             int64_t(o_tile_bytes(uint64_t(t.rows()), uint64_t(sh_.jobs[size_t(t.job)].head_dim))));
    receive(gt, r.payload);
  }
}

void Host::receive(size_t gt, const std::shared_ptr<const void>& payload) {
  const TileRef& t = sh_.tiles[gt];
  if (payload) {
    const auto& o = *std::static_pointer_cast<const MatrixRM>(payload);
    sh_.guard.check(o, component_, int(gt));
    outputs[size_t(t.job)].middleRows(t.row_begin, t.rows()) = o;
    if (sh_.cfg.fault.perturb_output != 0.0 && t.job == 0 && t.row_begin == 0)  // FAULT INJECTION (tests)
      outputs[0](0, 0) += float(sh_.cfg.fault.perturb_output);
  }
  tile_done[gt] = sc_core::sc_time_stamp();
  if (!tile_received[gt]) ++tiles_received;
  tile_received[gt] = true;
}

std::string Host::describe_wait() const {
  if (tiles_received == sh_.tiles.size()) return "";
  std::vector<int> missing;
  for (size_t gt = 0; gt < tile_received.size(); ++gt)
    if (!tile_received[gt]) missing.push_back(int(gt));
  const std::string q = q_wait_.str();
  return "waits for O of " + std::to_string(missing.size()) + " of " + std::to_string(sh_.tiles.size()) +
         " Q tiles (tiles " + id_list(missing) + ")" + (q.empty() ? std::string() : "; its Q writer waits for " + q);
}

}  // namespace ahbm
