#include "hw/pe/hbm_slice.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <string>

#include "hw/common/timing.h"

namespace ahbm {

HbmSlice::HbmSlice(sc_core::sc_module_name name, const HbmSliceConfig& cfg)
    : sc_core::sc_module(name), socket("socket"), cfg_(cfg) {
  socket.register_b_transport(this, &HbmSlice::b_transport);
  socket.register_get_direct_mem_ptr(this, &HbmSlice::get_direct_mem_ptr);
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
  const sc_core::sc_time start = std::max(now + delay, free_at_);
  if (cmd == tlm::TLM_READ_COMMAND) {
    if (moves_bytes && !copy_out(addr, trans.get_data_ptr(), len)) {
      trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    free_at_ = sum_sat(start, transfer_time(len, cfg_.bandwidth_gbps));
    // Data out: the array has streamed the burst and the first-byte latency has passed.
    delay = free_at_ + sc_core::sc_time(cfg_.latency_ns, sc_core::SC_NS) - now;
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
    // Stored once the burst has streamed into the array (a write's latency is hidden).
    free_at_ = sum_sat(start, transfer_time(len, cfg_.bandwidth_gbps));
    delay = free_at_ - now;
    bytes_written_ += len;
  }
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

void HbmSlice::begin_run() {
  extents_.clear();
  invalidate(0, last());
  free_at_ = sc_core::SC_ZERO_TIME;
  bytes_read_ = bursts_ = bytes_written_ = 0;
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
}

}  // namespace ahbm
