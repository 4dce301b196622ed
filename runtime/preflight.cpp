#include "runtime/preflight.h"

#include "hw/common/error.h"

namespace ahbm {

void preflight(const Scenario& sc, const HwConfig& /*hw*/, const RunOptions& opt) {
  const uint64_t d = uint64_t(sc.model.head_dim);
  const uint64_t prefix = uint64_t(sc.shared_prefix_tokens);
  const uint64_t rows = uint64_t(sc.total_rows());

  // KV capacity is checked by the page manager (runtime/kv), which knows the storage type,
  // layers and heads a page holds.
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
