#include "hw/pe/hbm_slice.h"

#include <algorithm>

#include "hw/common/timing.h"

namespace ahbm {

HbmSlice::HbmSlice(sc_core::sc_module_name name, const HbmSliceConfig& cfg)
    : sc_core::sc_module(name), socket("socket"), cfg_(cfg) {
  socket.register_b_transport(this, &HbmSlice::b_transport);
}

void HbmSlice::map_region(uint64_t addr, const float* words, uint64_t count, DType t) {
  if (count == 0) return;
  const Region r{addr, count * dtype_bytes(t), words, t};
  auto at = std::upper_bound(regions_.begin(), regions_.end(), addr,
                             [](uint64_t a, const Region& x) { return a < x.addr; });
  regions_.insert(at, r);
}

void HbmSlice::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const uint64_t len = trans.get_data_length();
  if (trans.get_command() != tlm::TLM_READ_COMMAND) {
    trans.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  // A null data pointer is a timing-only burst: charge the time, move no values.
  if (trans.get_data_ptr()) {
    // The burst must lie inside one mapped region (a K or a V shard) on element boundaries.
    const uint64_t first = trans.get_address();
    auto it = std::upper_bound(regions_.begin(), regions_.end(), first,
                               [](uint64_t a, const Region& x) { return a < x.addr; });
    if (it == regions_.begin()) {
      trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    const Region& r = *--it;
    const uint64_t eb = dtype_bytes(r.type);
    if (first + len > r.addr + r.bytes || (first - r.addr) % eb != 0 || len % eb != 0) {
      trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    encode(r.type, r.words + (first - r.addr) / eb, len / eb, trans.get_data_ptr());
  }
  const sc_core::sc_time request = sc_core::sc_time_stamp() + delay;
  const sc_core::sc_time start = std::max(request, free_at_);
  free_at_ = start + transfer_time(len, cfg_.bandwidth_gbps);
  delay = free_at_ + sc_core::sc_time(cfg_.latency_ns, sc_core::SC_NS) - sc_core::sc_time_stamp();
  bytes_read_ += len;
  ++bursts_;
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace ahbm
