#include "runtime/preflight.h"

#include "hw/common/error.h"

namespace ahbm {

void preflight(const Scenario& sc, const HwConfig& hw, const RunOptions& opt) {
  const uint64_t d = uint64_t(sc.model.head_dim);
  const uint64_t pes = uint64_t(hw.pes_per_group());
  const uint64_t prefix = uint64_t(sc.shared_prefix_tokens);
  const uint64_t rows = uint64_t(sc.total_rows());

  // However the planner places it, some PE holds at least its even share of the shared prefix.
  const uint64_t min_tokens = (prefix + pes - 1) / pes;
  const uint64_t min_bytes = 2 * min_tokens * d * 4;
  if (min_bytes > hw.pe.hbm.capacity_bytes)
    throw InputError(opt.hw_file + ": pe.hbm.capacity_bytes = " + std::to_string(hw.pe.hbm.capacity_bytes) +
                     " cannot hold the KV of " + opt.scenario_file + ": shared_prefix_tokens = " +
                     std::to_string(prefix) + " over " + std::to_string(pes) + " PEs puts at least " +
                     std::to_string(min_tokens) + " tokens x head_dim " + std::to_string(d) +
                     " x (K and V) x 4 bytes = " + std::to_string(min_bytes) +
                     " bytes on one PE (allowed: pe.hbm.capacity_bytes >= " + std::to_string(min_bytes) + ")");

  if (opt.values) {
    // fp32 Q, O and their float64 reference (16 bytes per row element); fp32 K and V in the
    // global order and in the shards plus their float64 copies in the reference (32 per KV element).
    uint64_t bytes = d * (16 * rows + 32 * prefix);
    if (opt.dump_tensors) bytes += rows * prefix;  // mask.npy
    if (bytes > kMaxTensorBytes)
      throw InputError(opt.scenario_file + ": the tensors of " + std::to_string(rows) + " Q rows over " +
                       std::to_string(prefix) + " KV tokens with head_dim " + std::to_string(d) + " need about " +
                       std::to_string(bytes >> 20) + " MiB of host memory (allowed: up to " +
                       std::to_string(kMaxTensorBytes >> 20) + " MiB); run timing only with --no-values");
  }
}

}  // namespace ahbm
