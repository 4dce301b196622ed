#pragma once
// Checks a scenario against the hardware before anything big is allocated or simulated
// (docs/reliability.md): KV that cannot fit the HBM capacity even when spread evenly over the
// group's PEs, and tensors that would not fit host memory. The exact per-PE and per-tile checks
// run again on the planned job (check_jobs in hw/chip/simulate.h).
#include "runtime/driver.h"

namespace ahbm {

// Host memory the tensors of a value-carrying run may take (Q, K, V, shards, O, the float64
// reference, and the mask when dumped).
constexpr uint64_t kMaxTensorBytes = uint64_t(8) << 30;

void preflight(const Scenario& sc, const HwConfig& hw, const RunOptions& opt);

}  // namespace ahbm
