#include "hw/common/sim/kv_read.h"

#include <algorithm>

#include "hw/common/sim/tlm_payload.h"

namespace ahbm {

std::shared_ptr<const std::vector<unsigned char>> read_kv(SimShared& sh, int job, int pe, uint64_t base, uint64_t h,
                                                          int count, tlm::tlm_fw_transport_if<>& slice,
                                                          std::vector<unsigned char>& scratch, sc_core::sc_time& delay,
                                                          bool timing_only) {
  const AttentionJob& j = sh.jobs[size_t(job)];
  const uint64_t row = kv_row_bytes(j), held = pe_held_tokens(j, pe);
  const uint64_t half = uint64_t(count) * row;
  std::shared_ptr<std::vector<unsigned char>> data;
  if (j.values && !timing_only) data = std::make_shared<std::vector<unsigned char>>(2 * half);
  else if (scratch.size() < 2 * half) scratch.resize(2 * half);
  unsigned char* to = data ? data->data() : scratch.data();
  // K and V issued together, as the PE's own DMA does.
  sc_core::sc_time done = sc_core::SC_ZERO_TIME;
  for (int v = 0; v < 2; ++v) {
    tlm::tlm_generic_payload r;
    unsigned char no_bytes;
    set_payload(r, tlm::TLM_READ_COMMAND, base + (v ? held + h : h) * row, to + v * half, half);
    if (!data) set_timing_only(r, no_bytes);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    slice.b_transport(r, d);
    if (r.is_response_error()) SC_REPORT_FATAL("ahbm/kv", "KV read outside the stored shard");
    done = std::max(done, d);
  }
  delay = done;
  return data;
}

}  // namespace ahbm
