#include "runtime/numerics/tensor_gen.h"

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

// Standard normals by the ziggurat method (Marsaglia & Tsang 2000, in Doornik's 2005 form with
// 128 strips): one 64-bit hash gives the strip (7 bits) and a uniform in [-1, 1) (53 bits); the
// point is accepted with one multiply and compare about 99% of the time, and only the rest (the
// wedges and the tail beyond R) evaluates exp or log. The draws are exactly normal (no
// approximation), and the retries take their bits from further hashes of the same counter, so
// an element stays a pure function of its coordinates.
struct Ziggurat {
  static constexpr int kStrips = 128;
  static constexpr double kR = 3.442619855899;          // start of the tail
  static constexpr double kV = 9.91256303526217e-3;     // area of each strip
  double x[kStrips + 1];                                 // strip edges, x[0] = V / f(R) > R, x[128] = 0
  double ratio[kStrips];                                 // x[i+1] / x[i]: the strip's sure-accept share
  Ziggurat() {
    const auto f = [](double v) { return std::exp(-0.5 * v * v); };
    x[0] = kV / f(kR);
    x[1] = kR;
    x[kStrips] = 0;
    for (int i = 2; i < kStrips; ++i) x[i] = std::sqrt(-2.0 * std::log(kV / x[i - 1] + f(x[i - 1])));
    for (int i = 0; i < kStrips; ++i) ratio[i] = x[i + 1] / x[i];
  }
};

// A uniform in (0, 1] from the top 53 bits (never 0: logs stay finite).
double unit_open0(uint64_t h) { return (double(h >> 11) + 1.0) * 0x1.0p-53; }

double ziggurat_normal(uint64_t h) {
  static const Ziggurat z;  // constant after construction (computed once, thread-safe)
  for (uint64_t attempt = 1;; ++attempt) {
    const int i = int(h & (Ziggurat::kStrips - 1));
    const double u = 2.0 * (double(h >> 11) * 0x1.0p-53) - 1.0;  // [-1, 1)
    if (std::fabs(u) < z.ratio[i]) return u * z.x[i];
    if (i == 0) {  // the tail beyond R (Marsaglia 1964)
      for (uint64_t t = 1;; ++t) {
        const double a = -std::log(unit_open0(splitmix64(h ^ (0x7a11ull * t)))) / Ziggurat::kR;
        const double b = -std::log(unit_open0(splitmix64(h ^ (0xb0b5ull * t))));
        if (b + b >= a * a) return u < 0 ? -(Ziggurat::kR + a) : Ziggurat::kR + a;
      }
    }
    const double v = u * z.x[i];  // in the wedge between strip i's rectangle and the curve
    const double f0 = std::exp(-0.5 * (z.x[i] * z.x[i] - v * v));
    const double f1 = std::exp(-0.5 * (z.x[i + 1] * z.x[i + 1] - v * v));
    if (f1 + unit_open0(splitmix64(h ^ 0x3c6ef372fe94f82bull)) * (f0 - f1) < 1.0) return v;
    h = splitmix64(h + attempt * 0x9e3779b97f4a7c15ull);  // rejected: the next draw of this element
  }
}

// The hash of (seed, kind, head, owner, position), shared by the elements of one row.
uint64_t row_key(uint64_t seed, TensorKind kind, int head, int64_t owner, int64_t pos) {
  uint64_t h = splitmix64(seed);
  h = splitmix64(h ^ uint64_t(kind));
  if (head != 0) h = splitmix64(h ^ (uint64_t(head) << 32));  // head 0 keeps the single-head hashes
  h = splitmix64(h ^ uint64_t(owner + 2));
  return splitmix64(h ^ uint64_t(pos));
}

}  // namespace

float tensor_value(uint64_t seed, TensorKind kind, int head, int64_t owner, int64_t pos, int64_t dim) {
  return float(ziggurat_normal(splitmix64(row_key(seed, kind, head, owner, pos) ^ uint64_t(dim))));
}

void tensor_row(uint64_t seed, TensorKind kind, int head, int64_t owner, int64_t pos, int d, float* out) {
  const uint64_t key = row_key(seed, kind, head, owner, pos);
  for (int i = 0; i < d; ++i) out[i] = float(ziggurat_normal(splitmix64(key ^ uint64_t(i))));
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
