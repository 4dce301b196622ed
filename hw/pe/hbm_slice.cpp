#include "hw/pe/hbm_slice.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <string>

#include "hw/common/model/resource_times.h"
#include "hw/common/base/timing.h"

namespace ahbm {

HbmSlice::HbmSlice(sc_core::sc_module_name name, const HbmSliceConfig& cfg)
    : sc_core::sc_module(name), socket("socket"), cfg_(cfg) {
  socket.register_b_transport(this, &HbmSlice::b_transport);
  socket.register_get_direct_mem_ptr(this, &HbmSlice::get_direct_mem_ptr);
  if (cfg_.banked()) {
    banked_ = std::make_unique<hbm::ChannelArray>(hbm::dram_spec_of(cfg_), cfg_.pseudo_channels);
    // check_hw_config refuses such a config with a message; this guards direct construction.
    if (cfg_.capacity_bytes > banked_->bytes())
      SC_REPORT_FATAL("ahbm/hbm", (std::string(this->name()) + ": capacity_bytes exceeds the banked model's pseudo-channels").c_str());
  }
}

void HbmSlice::add_signals(TraceSink& trace, const std::string& prefix) {
  if (!banked_) return;
  trace_ = &trace;
  sig_row_hits_ = trace.add_signal(prefix + ".row_hits", 32);
  sig_row_misses_ = trace.add_signal(prefix + ".row_misses", 32);
  sig_refreshes_ = trace.add_signal(prefix + ".refreshes", 32);
}

sc_core::sc_time HbmSlice::book(const sc_core::sc_time& at, uint64_t addr, uint64_t len, bool write) {
  if (!banked_) {
    // Closed form: the array streams the burst after the bursts booked before it.
    free_at_ = sum_sat(std::max(at, free_at_), hbm_burst<sc_time>(cfg_, len));
    return free_at_;
  }
  // Banked: cycle = tCK since begin_run; the request arrives at the first edge at or after `at`.
  const double tck = banked_->spec().t.tck_ns;
  const double at_ns = at > epoch_ ? to_ns(at - epoch_) : 0.0;
  const int64_t arrival = int64_t(std::ceil(at_ns / tck - 1e-9));
  const int64_t end = banked_->transfer(arrival, addr, len, write);
  if (trace_) {
    const hbm::ChannelArrayStats s = banked_->stats();
    trace_->set(sig_row_hits_, s.row_hits);
    trace_->set(sig_row_misses_, s.row_misses);
    trace_->set(sig_refreshes_, s.refreshes);
  }
  return epoch_ + duration_ns(double(end) * tck);
}

void HbmSlice::invalidate(uint64_t first, uint64_t last) {
  for (unsigned i = 0; i < socket.size(); ++i) socket[int(i)]->invalidate_direct_mem_ptr(first, last);
}

HbmSlice::Extent* HbmSlice::place(uint64_t addr, uint64_t len) {
  auto next = extents_.lower_bound(addr);
  if (next != extents_.end() && next->first == addr && next->second.len == len) {
    invalidate(addr, addr + len - 1);
    return &next->second;
  }
  const bool overlaps_next = next != extents_.end() && next->first < addr + len;
  const bool overlaps_prev = next != extents_.begin() && std::prev(next)->first + std::prev(next)->second.len > addr;
  if (overlaps_next || overlaps_prev) return nullptr;
  Extent& e = extents_[addr];
  e.len = len;
  return &e;
}

void HbmSlice::backdoor_write(uint64_t addr, const float* words, uint64_t count, DType t) {
  const uint64_t len = count * dtype_bytes(t);
  if (len == 0) return;
  Extent* e = place(addr, len);
  if (!e) SC_REPORT_FATAL("ahbm/hbm", ("overlapping placement at byte " + std::to_string(addr) + " of " + name()).c_str());
  if (t == DType::fp32) {
    e->owned.clear();
    e->bytes = reinterpret_cast<const unsigned char*>(words);
    return;
  }
  e->owned.resize(len);
  encode(t, words, count, e->owned.data());
  e->bytes = e->owned.data();
}

std::map<uint64_t, HbmSlice::Extent>::const_iterator HbmSlice::extent_at(uint64_t addr) const {
  auto it = extents_.upper_bound(addr);
  if (it == extents_.begin()) return extents_.end();
  --it;
  return addr < it->first + it->second.len ? it : extents_.end();
}

bool HbmSlice::copy_out(uint64_t addr, unsigned char* dst, uint64_t len) const {
  auto it = extent_at(addr);
  while (len > 0) {
    if (it == extents_.end() || it->first > addr || it->first + it->second.len <= addr) return false;
    const uint64_t off = addr - it->first, n = std::min(len, it->second.len - off);
    std::memcpy(dst, it->second.bytes + off, n);
    dst += n;
    addr += n;
    len -= n;
    ++it;
  }
  return true;
}

void HbmSlice::b_transport(int, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const tlm::tlm_command cmd = trans.get_command();
  const uint64_t addr = trans.get_address(), len = trans.get_data_length();
  const bool moves_bytes = !trans.get_byte_enable_ptr();
  if (cmd != tlm::TLM_READ_COMMAND && cmd != tlm::TLM_WRITE_COMMAND) {
    trans.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  if (len == 0 || addr >= cfg_.capacity_bytes || len > cfg_.capacity_bytes - addr) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (trans.get_streaming_width() != len) {
    trans.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return;
  }
  if (!moves_bytes && !is_timing_only(trans)) {
    trans.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return;
  }
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  if (cmd == tlm::TLM_READ_COMMAND) {
    if (moves_bytes && !copy_out(addr, trans.get_data_ptr(), len)) {
      trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    const sc_core::sc_time done = book(now + delay, addr, len, false);
    // Data out. Simple: the array has streamed the burst and the first-byte latency has passed;
    // banked: the last DRAM burst's data is out (its latency is in the bank timing).
    delay = (banked_ ? done : done + TimeUnits<sc_time>::ns(cfg_.latency_ns)) - now;
    bytes_read_ += len;
    ++bursts_;
  } else {
    if (moves_bytes) {
      Extent* e = place(addr, len);
      if (!e) {
        trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
      }
      e->owned.assign(trans.get_data_ptr(), trans.get_data_ptr() + len);
      e->bytes = e->owned.data();
    }
    // Stored once the burst has streamed into the array (simple: a write's latency is hidden).
    delay = book(now + delay, addr, len, true) - now;
    bytes_written_ += len;
  }
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

void HbmSlice::begin_run() {
  extents_.clear();
  invalidate(0, last());
  free_at_ = sc_core::SC_ZERO_TIME;
  bytes_read_ = bursts_ = bytes_written_ = 0;
  if (banked_) banked_ = std::make_unique<hbm::ChannelArray>(banked_->spec(), banked_->channels());
  epoch_ = sc_core::sc_time_stamp();
}

bool HbmSlice::get_direct_mem_ptr(int, tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi) {
  // Read-only DMI over the extent holding the address: the initiator still books every burst
  // through b_transport (timing), and uses the stored bytes in place instead of a copy.
  const auto it = extent_at(trans.get_address());
  if (trans.get_command() != tlm::TLM_READ_COMMAND || it == extents_.end()) return false;
  dmi.set_dmi_ptr(const_cast<unsigned char*>(it->second.bytes));  // read access only is granted
  dmi.set_start_address(it->first);
  dmi.set_end_address(it->first + it->second.len - 1);
  dmi.allow_read();
  dmi.set_read_latency(sc_core::sc_time(cfg_.latency_ns, sc_core::SC_NS));
  return true;
}

void HbmSlice::report_stats(StatsNode& node) const {
  node.set(HbmSliceStats::bytes_read, bytes_read_);
  node.set(HbmSliceStats::bytes_written, bytes_written_);
  node.set(HbmSliceStats::bursts, bursts_);
  if (!banked_) return;
  const hbm::ChannelArrayStats s = banked_->stats();
  node.set(HbmSliceStats::row_hits, s.row_hits);
  node.set(HbmSliceStats::row_misses, s.row_misses);
  node.set(HbmSliceStats::bank_conflicts, s.conflicts);
  node.set(HbmSliceStats::refreshes, s.refreshes);
}

}  // namespace ahbm
