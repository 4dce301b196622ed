#include "hw/common/observe/tlm_checker.h"

#include <cstring>

namespace ahbm {

TlmChecker::TlmChecker(sc_core::sc_module_name name, TlmCheckLog& log, TlmRange range)
    : sc_core::sc_module(name), target("target"), initiator("initiator"), log_(log), range_(std::move(range)) {
  target.register_b_transport(this, &TlmChecker::b_transport);
  target.register_get_direct_mem_ptr(this, &TlmChecker::get_direct_mem_ptr);
  target.register_transport_dbg(this, &TlmChecker::transport_dbg);
  initiator.register_invalidate_direct_mem_ptr(this, &TlmChecker::invalidate_direct_mem_ptr);
}

void TlmChecker::violation(const std::string& what) { log_.violations.push_back(std::string(name()) + ": " + what); }

const TlmChecker::Region* TlmChecker::region_at(uint64_t addr) const {
  for (const Region& r : regions_)
    if (addr >= r.start && addr <= r.end) return &r;
  return nullptr;
}

void TlmChecker::check_request(const tlm::tlm_generic_payload& trans, const char* call, bool transport) {
  const std::string c = call;
  const tlm::tlm_command cmd = trans.get_command();
  if (cmd != tlm::TLM_READ_COMMAND && cmd != tlm::TLM_WRITE_COMMAND && cmd != tlm::TLM_IGNORE_COMMAND)
    violation(c + ": command " + std::to_string(int(cmd)) + " is not READ, WRITE or IGNORE");
  const uint64_t a = trans.get_address();
  const auto [lo, hi] = range_();
  if (!transport) {  // a DMI request: only the command and the address count
    if (a < lo || a > hi)
      violation(c + ": address " + std::to_string(a) + " outside the target's range [" + std::to_string(lo) + ", " +
                std::to_string(hi) + "]");
    return;
  }
  if (!trans.get_data_ptr()) violation(c + ": null data pointer");
  const uint64_t len = trans.get_data_length();
  if (len == 0) violation(c + ": data length 0");
  if (trans.get_streaming_width() == 0 || trans.get_streaming_width() > len)
    violation(c + ": streaming width " + std::to_string(trans.get_streaming_width()) + " not in [1, data length " +
              std::to_string(len) + "]");
  if (trans.get_byte_enable_ptr() && trans.get_byte_enable_length() == 0)
    violation(c + ": byte-enable pointer with byte-enable length 0");
  if (trans.get_response_status() != tlm::TLM_INCOMPLETE_RESPONSE)
    violation(c + ": response status " + trans.get_response_string() + " on entry, not INCOMPLETE");
  if (a < lo || a > hi || (len > 0 && (a + len - 1 < a || a + len - 1 > hi)))
    violation(c + ": bytes [" + std::to_string(a) + ", " + std::to_string(a + len) + ") outside the target's range [" +
              std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

void TlmChecker::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  ++log_.transactions;
  check_request(trans, "b_transport", true);
  if (trans.is_dmi_allowed()) violation("b_transport: DMI hint set on entry");
  if (!in_flight_.insert(&trans).second) violation("b_transport: payload re-used while a transaction on it is in flight");
  const tlm::tlm_command cmd = trans.get_command();
  const uint64_t addr = trans.get_address();
  unsigned char* const data = trans.get_data_ptr();
  const unsigned len = trans.get_data_length(), sw = trans.get_streaming_width();
  unsigned char* const be = trans.get_byte_enable_ptr();
  const unsigned be_len = trans.get_byte_enable_length();

  initiator->b_transport(trans, delay);

  in_flight_.erase(&trans);
  if (trans.get_response_status() == tlm::TLM_INCOMPLETE_RESPONSE) violation("b_transport: target left the response INCOMPLETE");
  if (trans.get_command() != cmd || trans.get_address() != addr || trans.get_data_ptr() != data ||
      trans.get_data_length() != len || trans.get_streaming_width() != sw || trans.get_byte_enable_ptr() != be ||
      trans.get_byte_enable_length() != be_len)
    violation("b_transport: target changed an attribute only the initiator may set");
  // What DMI shows must be what transport returns (a stale grant shows old contents).
  if (trans.is_response_ok() && cmd == tlm::TLM_READ_COMMAND && !be && data && len > 0 && sw == len) {
    const Region* r = region_at(addr);
    if (r && addr + len - 1 <= r->end && std::memcmp(r->ptr + (addr - r->start), data, len) != 0)
      violation("b_transport: READ at " + std::to_string(addr) + " returned bytes that differ from the DMI region granted over them");
  }
}

bool TlmChecker::get_direct_mem_ptr(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi) {
  check_request(trans, "get_direct_mem_ptr", false);
  const uint64_t addr = trans.get_address();
  if (region_at(addr))
    violation("get_direct_mem_ptr: DMI asked again at " + std::to_string(addr) +
              " inside a region granted and not invalidated (grants are to be cached)");
  const bool granted = initiator->get_direct_mem_ptr(trans, dmi);
  if (!granted) return false;
  ++log_.dmi_grants;
  const auto [lo, hi] = range_();
  const uint64_t s = dmi.get_start_address(), e = dmi.get_end_address();
  if (!dmi.get_dmi_ptr()) violation("get_direct_mem_ptr: null DMI pointer granted");
  if (s > e || addr < s || addr > e)
    violation("get_direct_mem_ptr: granted range [" + std::to_string(s) + ", " + std::to_string(e) +
              "] does not hold the requested address " + std::to_string(addr));
  if (s < lo || e > hi) violation("get_direct_mem_ptr: granted range outside the target's range");
  const bool wants_write = trans.get_command() == tlm::TLM_WRITE_COMMAND;
  if (wants_write ? !dmi.is_write_allowed() : !dmi.is_read_allowed())
    violation("get_direct_mem_ptr: granted access does not include the requested command");
  if (dmi.get_dmi_ptr() && s <= e) regions_.push_back({s, e, dmi.get_dmi_ptr(), dmi.is_read_allowed(), dmi.is_write_allowed()});
  return true;
}

unsigned int TlmChecker::transport_dbg(tlm::tlm_generic_payload& trans) { return initiator->transport_dbg(trans); }

void TlmChecker::invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) {
  std::vector<Region> kept;
  for (const Region& r : regions_)
    if (r.end < start || r.start > end) kept.push_back(r);
  regions_ = std::move(kept);
  target->invalidate_direct_mem_ptr(start, end);
}

}  // namespace ahbm
