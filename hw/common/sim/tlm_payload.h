#pragma once
// Setting up TLM-2.0 generic payloads the way every initiator of the chip does (base protocol:
// a real data pointer and the transfer's length on every transaction, no streaming).
#include <cstdint>

#include <tlm>

namespace ahbm {

// A transaction of `len` bytes at `addr` with `data` (never null; at least `len` bytes), every
// byte enabled, response INCOMPLETE: ready for b_transport.
inline void set_payload(tlm::tlm_generic_payload& t, tlm::tlm_command cmd, uint64_t addr, unsigned char* data,
                        uint64_t len) {
  t.set_command(cmd);
  t.set_address(addr);
  t.set_data_ptr(data);
  t.set_data_length(unsigned(len));
  t.set_streaming_width(unsigned(len));
  t.set_byte_enable_ptr(nullptr);
  t.set_byte_enable_length(0);
  t.set_dmi_allowed(false);
  t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
}

// Marks a transaction timing-only (a run without values): a one-byte byte-enable pattern
// `pattern` (the initiator's, alive for the transfer) that disables every byte. The target times
// the transfer and moves no byte; the data pointer stays a real buffer of the right length.
inline void set_timing_only(tlm::tlm_generic_payload& t, unsigned char& pattern) {
  pattern = TLM_BYTE_DISABLED;
  t.set_byte_enable_ptr(&pattern);
  t.set_byte_enable_length(1);
}

// Whether every byte of `t` is disabled (set_timing_only, or any all-disabled pattern).
inline bool is_timing_only(const tlm::tlm_generic_payload& t) {
  const unsigned char* be = t.get_byte_enable_ptr();
  if (!be) return false;
  for (unsigned i = 0; i < t.get_byte_enable_length(); ++i)
    if (be[i] != TLM_BYTE_DISABLED) return false;
  return true;
}

}  // namespace ahbm
