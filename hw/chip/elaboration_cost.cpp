#include "hw/chip/elaboration_cost.h"

#include <systemc>

namespace ahbm {

namespace {

// KV DMA and attention compute, and the weight GEMM's W DMA, compute and Y write-back (pe.h).
constexpr uint64_t kThreadsPerPe = 5;
constexpr uint64_t kThreadsPerCube = 4 + 1;  // the CUBE's own, and its node of the reduction network
constexpr uint64_t kThreadsPerGroup = 3;
constexpr uint64_t kThreadsPerChip = 4 + 2;  // ... and the weight streamer with its sender (weight_streamer.h)
constexpr uint64_t kMappingsPerThread = 2;  // stack and guard page
constexpr uint64_t kPageBytes = 4096;
// Resident bytes per process with its module's share of the objects, measured with --no-values
// at 1024, 4096 and 8192 PEs (about 25 KiB per PE, Dec 2026).
constexpr uint64_t kResidentPerThread = 12800;

}  // namespace

ElaborationCost elaboration_cost(const HwConfig& cfg, int active_groups) {
  const uint64_t cubes = uint64_t(cfg.group.cubes), pes = uint64_t(cfg.cube.pes);
  ElaborationCost c;
  c.threads = kThreadsPerChip + uint64_t(active_groups) * (kThreadsPerGroup + cubes * (kThreadsPerCube + pes * kThreadsPerPe));
  c.mappings = c.threads * kMappingsPerThread;
  c.stack_bytes = c.threads * (uint64_t(sc_core::SC_DEFAULT_STACK_SIZE) + kPageBytes);
  c.resident_bytes = c.threads * kResidentPerThread;
  return c;
}

}  // namespace ahbm
