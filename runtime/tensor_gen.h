#pragma once
// Seeded, counter-based tensor values: each element is a function of (seed, tensor, owner,
// position, dimension) only, so a token's K/V do not depend on how it is sharded or placed,
// and the same seed gives the same tensors on every machine (no std::normal_distribution,
// whose output differs between standard libraries).
#include <cstdint>

namespace ahbm {

enum class TensorKind : uint64_t { q = 1, k = 2, v = 3 };

// Standard-normal sample for one element.
float tensor_value(uint64_t seed, TensorKind kind, int64_t owner, int64_t pos, int64_t dim);
// Fills `out[0..d)` with the row of (kind, owner, pos).
void tensor_row(uint64_t seed, TensorKind kind, int64_t owner, int64_t pos, int d, float* out);

}  // namespace ahbm
