#pragma once
// A KV read from a PE's HBM slice through a TLM port bound to it: what the CUBE's remote-read
// server and the group's KV mover both do (each over its own port to the slice).
#include <cstdint>
#include <memory>
#include <vector>

#include <tlm>

#include "hw/common/sim/sim_shared.h"

namespace ahbm {

// Reads `count` tokens (K rows, then V rows) of job `job` starting at held-token index `h` from
// PE `pe`'s slice, whose K rows of the job start at byte `base`, through `slice`; returns the
// data (null when timing only: the job has no values, or `timing_only`; the bursts are then
// timing-only transfers into `scratch`) and sets `delay` to when it is out.
std::shared_ptr<const std::vector<unsigned char>> read_kv(SimShared& sh, int job, int pe, uint64_t base, uint64_t h,
                                                          int count, tlm::tlm_fw_transport_if<>& slice,
                                                          std::vector<unsigned char>& scratch, sc_core::sc_time& delay,
                                                          bool timing_only = false);

}  // namespace ahbm
