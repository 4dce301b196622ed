#include "hw/cube/q_buffer.h"

#include <algorithm>

#include "hw/common/base/component.h"
#include "hw/common/model/resource_times.h"

namespace ahbm {

QBuffer::QBuffer(sc_core::sc_module_name name, SimShared& sh, int group, int cube, int pes_per_cube)
    : sc_core::sc_module(name),
      sh_(sh),
      cfg_(sh.cfg.cube.q_buffer),
      cube_(cube),
      chip_cube_(group * sh.cfg.group.cubes + cube),
      pes_per_cube_(pes_per_cube),
      component_(sh.spans.intern(component_path(*this))),
      ports_(sh.cfg.cube.q_buffer.read_ports) {
  const std::string path = component_path(*this);
  sig_occupancy_ = sh.trace.add_signal(path + ".occupancy_bytes", 32);
  sh.waits.add(path, [this] { return describe_wait(); });
  SC_HAS_PROCESS(QBuffer);
  SC_THREAD(write_loop);
}

void QBuffer::begin_run() {
  used_ = high_water_ = reserve_waiting_ = 0;
  bytes_written_ = bytes_read_ = 0;
  entries_.clear();
  arrivals_.clear();
  // Chunks of jobs without a part here never come: as good as written for the prefix.
  x_written_.assign(sh_.gemm.x_chunks.size(), 0);
  for (size_t c = 0; c < x_written_.size(); ++c) {
    const std::vector<int>& to = sh_.gemm.x_chunks[c].cubes;
    x_written_[c] = !std::binary_search(to.begin(), to.end(), chip_cube_);
  }
  x_prefix_ = 0;
  while (x_prefix_ < x_written_.size() && x_written_[x_prefix_]) ++x_prefix_;
  x_waiting_ = 0;
  write_port_.reset();
  ports_.reset();
}

void QBuffer::set_occupancy() {
  high_water_ = std::max(high_water_, used_);
  sh_.trace.set(sig_occupancy_, used_);
}

void QBuffer::reserve(uint64_t bytes) {
  reserve_waiting_ = bytes;
  while (used_ + bytes > cfg_.bytes) {
    if (sh_.cfg.fault.poll_q_credit) sc_core::wait(sh_.cycles(1));  // FAULT INJECTION: polling turns a stall into a livelock
    else sc_core::wait(space_freed_);
  }
  reserve_waiting_ = 0;
  used_ += bytes;
  set_occupancy();
}

void QBuffer::arrive(int tile, uint64_t bytes, TileData data) { arrivals_.push({tile, bytes, std::move(data)}); }

void QBuffer::arrive_x(int chunk, uint64_t bytes) { arrivals_.push({chunk, bytes, nullptr, true}); }

void QBuffer::wait_x(size_t chunk) {
  ++x_waiting_;
  while (x_prefix_ <= chunk) sc_core::wait(x_ready_);
  --x_waiting_;
}

void QBuffer::x_written(int chunk) {
  const GemmXChunk& c = sh_.gemm.x_chunks[size_t(chunk)];
  bytes_written_ += c.bytes;
  x_written_[size_t(chunk)] = 1;
  const size_t before = x_prefix_;
  while (x_prefix_ < x_written_.size() && x_written_[x_prefix_]) ++x_prefix_;
  if (x_prefix_ > before) x_ready_.notify(sc_core::SC_ZERO_TIME);
}

void QBuffer::write_loop() {
  for (;;) {
    Arrival a = arrivals_.pop();
    auto [start, end] = write_port_.reserve(q_buffer_write(TimeUnits<sc_time>(sh_.clock), cfg_, a.bytes));
    sc_core::wait(end - sc_core::sc_time_stamp());
    if (a.x) {
      const GemmXChunk& c = sh_.gemm.x_chunks[size_t(a.tile)];
      sh_.gemm_span(start, end, component_, sh_.spans.intern("q_write"), c.job, c.row_end - c.row_begin, int64_t(a.bytes));
      x_written(a.tile);
      continue;
    }
    const TileRef& t = sh_.tiles[size_t(a.tile)];
    sh_.span(start, end, component_, "q_write", t, t.rows(), int64_t(a.bytes));
    bytes_written_ += a.bytes;
    Entry& e = entries_[a.tile];
    e.bytes = a.bytes;
    e.data = std::move(a.data);
    e.readers_left = tile_pes_in_cube(sh_.jobs[size_t(t.job)].tiles[size_t(t.index)], cube_, pes_per_cube_);
    e.ready = true;
    tile_ready_.notify(sc_core::SC_ZERO_TIME);
  }
}

TileData QBuffer::read_q(int tile, int component_id) {
  for (;;) {
    auto it = entries_.find(tile);
    if (it != entries_.end() && it->second.ready) break;
    sc_core::wait(tile_ready_);
  }
  Entry& e = entries_[tile];
  auto [start, end] = ports_.reserve(q_buffer_read(TimeUnits<sc_time>(sh_.clock), cfg_, e.bytes));
  sc_core::wait(end - sc_core::sc_time_stamp());
  const TileRef& t = sh_.tiles[size_t(tile)];
  sh_.span(start, end, component_id, "q_read", t, t.rows(), int64_t(e.bytes));
  bytes_read_ += e.bytes;
  TileData data = e.data;
  if (--e.readers_left == 0) {
    if (!fault_leak_credit) used_ -= e.bytes;
    entries_.erase(tile);
    set_occupancy();
    space_freed_.notify(sc_core::SC_ZERO_TIME);
  }
  return data;
}

std::string QBuffer::describe_wait() const {
  if (x_waiting_)
    return std::to_string(x_waiting_) + " PEs wait for weight-GEMM X chunk " + std::to_string(x_prefix_) + " of " +
           std::to_string(x_written_.size());
  if (!reserve_waiting_ && entries_.empty()) return "";
  std::string held;
  for (const auto& [tile, e] : entries_)
    held += (held.empty() ? "" : ", ") + std::to_string(tile) + " (" + std::to_string(e.readers_left) + " PEs still to read)";
  return std::to_string(used_) + " of " + std::to_string(cfg_.bytes) + " bytes in use; tiles held: " +
         (held.empty() ? "none" : held) +
         (reserve_waiting_ ? "; a reservation of " + std::to_string(reserve_waiting_) + " bytes waits for space" : "") +
         (fault_leak_credit ? " [fault injection: space is never freed]" : "");
}

void QBuffer::report_stats(StatsNode& node) const {
  node.component = sh_.spans.name(component_);
  node.set(QBufferStats::high_water, high_water_);
  node.set(QBufferStats::port_busy, to_ns(port_busy()));
  node.set(QBufferStats::bytes_written, bytes_written_);
  node.set(QBufferStats::bytes_read, bytes_read_);
}

}  // namespace ahbm
