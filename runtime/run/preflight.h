#pragma once
// Checks a scenario against the hardware and the machine before anything big is allocated,
// elaborated or simulated (docs/reliability.md, "Resource guards"):
//  - KV that cannot fit the HBM capacity (the page manager, runtime/kv) and tensors beyond any
//    machine (kMaxTensorBytes);
//  - the host memory the run will hold (every KV head's Q, K and V, the KV cache of generated
//    rows, the stored replicas in the HBM slices, outputs, the float64 reference, spans, the
//    chip's modules) against available memory, RLIMIT_DATA, RLIMIT_AS and the cgroup's
//    memory.max;
//  - the SystemC processes of the chip (their stacks' mappings and address space) against
//    vm.max_map_count and RLIMIT_AS.
// Each refusal is an InputError naming the parameters, the estimate and the limit.
// The exact per-PE and per-tile checks run again on the planned job (check_jobs in hw/chip/simulate.h).
#include <string>
#include <vector>

#include "runtime/run/run_types.h"
#include "runtime/io/host_limits.h"

namespace ahbm {

// Host memory a value-carrying run's tensors may take on any machine: larger runs are refused
// before the machine's own limits are even read.
constexpr uint64_t kMaxTensorBytes = uint64_t(64) << 30;

// What a run will hold, by part (bytes; estimates, docs/reliability.md states how close).
struct ResourceEstimate {
  std::vector<std::pair<std::string, uint64_t>> parts;  // name -> resident bytes
  uint64_t tensor_bytes = 0;    // Q, K, V, caches, replicas, outputs, reference (0 without values)
  uint64_t resident_bytes = 0;  // everything, the process's own libraries included
  uint64_t virtual_bytes = 0;   // resident + coroutine stacks + the BLAS buffer, beyond what is mapped now
  uint64_t threads = 0, mappings = 0;  // SystemC processes of the largest chip and their mappings
  int active_groups = 0;
  std::string describe() const;  // "Q/K/V of the largest step 12 MiB + ... = N MiB"
};

ResourceEstimate estimate_resources(const Scenario& sc, const HwConfig& hw, const RunOptions& opt);

// Throws InputError when `est` exceeds a limit in `host`. `what` names the input parameters that
// size the estimate (the message's start), `hw_file` the hardware config; `values`: a
// value-carrying run (its message suggests --no-values).
void check_resources(const ResourceEstimate& est, const HostLimits& host, const std::string& what, const HwConfig& hw,
                     const std::string& hw_file, bool values);

void preflight(const Scenario& sc, const HwConfig& hw, const RunOptions& opt);

// One step of a serve run as the one-step, timing-only run of `sc` (its model and KV paging, its
// shared prefix and one phase); `what` names the workload's fields that size it.
struct PreflightStep {
  std::string what;
  Scenario sc;
};

// serve's preflight (runtime/serve/engine.cpp): a serve run holds one step's simulation at a time,
// so it needs about the memory of its largest step. Each shape is estimated as a run's
// (estimate_resources, timing only) and the largest checked against the machine (check_resources).
void preflight_steps(const std::vector<PreflightStep>& steps, const HwConfig& hw, const std::string& hw_file);

}  // namespace ahbm
