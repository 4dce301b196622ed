#pragma once
// Seeded, counter-based tensor values: each element is a function of (seed, tensor, head, owner,
// position, dimension) only, so a token's K/V do not depend on how it is sharded or placed,
// and the same seed gives the same tensors on every machine (no std::normal_distribution,
// whose output differs between standard libraries). `owner` is the producer of the token (the
// parent's prefix, a sub-agent, the parent after the fork); `head` is the query head for Q and
// the KV head for K and V (head 0 gives the values of the single-head model).
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "hw/common/base/storage_type.h"

namespace ahbm {

// activation, weight: a weight GEMM's X (pos = row, dim = column) and W (pos = K row, dim = column);
// `head` numbers the operator (runtime/model/layer_plan.h).
enum class TensorKind : uint64_t { q = 1, k = 2, v = 3, activation = 4, weight = 5 };

// Standard-normal sample for one element: a ziggurat draw (tensor_gen.cpp) from a splitmix64
// hash of the coordinates; no transcendental function for ~99% of the elements.
float tensor_value(uint64_t seed, TensorKind kind, int head, int64_t owner, int64_t pos, int64_t dim);
// Fills `out[0..d)` with the row of (kind, head, owner, pos).
void tensor_row(uint64_t seed, TensorKind kind, int head, int64_t owner, int64_t pos, int d, float* out);

// K and V rows generated once per (KV head, owner, position) and kept both as generated
// ("exact") and rounded to the storage type (what HBM holds), since every step of a run reads
// the same tokens again.
class KvValues {
 public:
  KvValues(uint64_t seed, int d, DType t) : seed_(seed), d_(d), dtype_(t) {}
  struct Row {
    const float* k;        // rounded to the storage type
    const float* v;
    const float* k_exact;  // as generated
    const float* v_exact;
  };
  Row row(int head, int owner, int32_t pos);
  int head_dim() const { return d_; }
  DType dtype() const { return dtype_; }

 private:
  uint64_t seed_;
  int d_;
  DType dtype_;
  std::unordered_map<uint64_t, size_t> index_;  // (head, owner, pos) -> row number
  // Rows appended in blocks, so pointers stay valid. A row is k, v, then (when the storage type
  // rounds) k_exact, v_exact; fp32 keeps one copy. Blocks are not zero-filled: memory is touched
  // only as rows are written.
  std::vector<std::unique_ptr<float[]>> blocks_;
  size_t rows_ = 0;
};

}  // namespace ahbm
