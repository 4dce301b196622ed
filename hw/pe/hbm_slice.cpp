#include "hw/pe/hbm_slice.h"

#include <algorithm>
#include <cstring>

#include "hw/common/timing.h"

namespace ahbm {

HbmSlice::HbmSlice(sc_core::sc_module_name name, const HbmSliceConfig& cfg)
    : sc_core::sc_module(name), socket("socket"), cfg_(cfg) {
  socket.register_b_transport(this, &HbmSlice::b_transport);
}

void HbmSlice::backdoor_write(uint64_t addr, const float* words, uint64_t count, DType t) {
  const uint64_t end = addr + count * dtype_bytes(t);
  if (storage_.size() < end) storage_.resize(end);
  encode(t, words, count, storage_.data() + addr);
}

bool HbmSlice::read(uint64_t addr, unsigned char* dst, uint64_t len, sc_core::sc_time& delay) {
  // A null data pointer is a timing-only burst: charge the time, move no values.
  if (dst) {
    if (addr + len > storage_.size()) return false;
    std::memcpy(dst, storage_.data() + addr, len);
  }
  const sc_core::sc_time request = sc_core::sc_time_stamp() + delay;
  const sc_core::sc_time start = std::max(request, free_at_);
  free_at_ = start + transfer_time(len, cfg_.bandwidth_gbps);
  delay = free_at_ + sc_core::sc_time(cfg_.latency_ns, sc_core::SC_NS) - sc_core::sc_time_stamp();
  bytes_read_ += len;
  ++bursts_;
  return true;
}

sc_core::sc_time HbmSlice::write(uint64_t addr, const unsigned char* bytes, uint64_t len) {
  if (bytes) {
    if (storage_.size() < addr + len) storage_.resize(addr + len);
    std::memcpy(storage_.data() + addr, bytes, len);
  }
  const sc_core::sc_time start = std::max(sc_core::sc_time_stamp(), free_at_);
  free_at_ = start + transfer_time(len, cfg_.bandwidth_gbps);
  bytes_written_ += len;
  return free_at_ - sc_core::sc_time_stamp();
}

void HbmSlice::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  if (trans.get_command() != tlm::TLM_READ_COMMAND) {
    trans.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  const bool ok = read(trans.get_address(), trans.get_data_ptr(), trans.get_data_length(), delay);
  trans.set_response_status(ok ? tlm::TLM_OK_RESPONSE : tlm::TLM_ADDRESS_ERROR_RESPONSE);
}

}  // namespace ahbm
