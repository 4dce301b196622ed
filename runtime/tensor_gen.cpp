#include "runtime/tensor_gen.h"

#include <cmath>

namespace ahbm {

namespace {
uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
constexpr size_t kBlockRows = 4096;
}  // namespace

float tensor_value(uint64_t seed, TensorKind kind, int head, int64_t owner, int64_t pos, int64_t dim) {
  uint64_t h = splitmix64(seed);
  h = splitmix64(h ^ uint64_t(kind));
  if (head != 0) h = splitmix64(h ^ (uint64_t(head) << 32));  // head 0 keeps the single-head values
  h = splitmix64(h ^ uint64_t(owner + 2));
  h = splitmix64(h ^ uint64_t(pos));
  h = splitmix64(h ^ uint64_t(dim));
  // Box-Muller from the two 32-bit halves; u1 in (0, 1] keeps the log finite.
  const double u1 = (double(h >> 32) + 1.0) / 4294967296.0;
  const double u2 = double(h & 0xffffffffull) / 4294967296.0;
  return float(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
}

void tensor_row(uint64_t seed, TensorKind kind, int head, int64_t owner, int64_t pos, int d, float* out) {
  for (int i = 0; i < d; ++i) out[i] = tensor_value(seed, kind, head, owner, pos, i);
}

KvValues::Row KvValues::row(int head, int owner, int32_t pos) {
  const uint64_t key = (uint64_t(uint32_t(head)) << 48) ^ (uint64_t(uint32_t(owner + 2) & 0xffff) << 32) ^ uint32_t(pos);
  auto [it, fresh] = index_.emplace(key, rows_);
  const bool rounds = dtype_ != DType::fp32;  // fp32 storage: the rounded row is the exact row
  const size_t stride = (rounds ? 4 : 2) * size_t(d_);
  if (fresh) {
    if (rows_ % kBlockRows == 0) blocks_.emplace_back(new float[kBlockRows * stride]);  // not zero-filled
    float* r = blocks_.back().get() + (rows_ % kBlockRows) * stride;
    float* exact = rounds ? r + 2 * d_ : r;
    tensor_row(seed_, TensorKind::k, head, owner, pos, d_, exact);
    tensor_row(seed_, TensorKind::v, head, owner, pos, d_, exact + d_);
    if (rounds)
      for (int i = 0; i < 2 * d_; ++i) r[i] = round_to(dtype_, exact[i]);
    ++rows_;
  }
  const float* r = blocks_[it->second / kBlockRows].get() + (it->second % kBlockRows) * stride;
  const float* exact = rounds ? r + 2 * d_ : r;
  return {r, r + d_, exact, exact + d_};
}

}  // namespace ahbm
