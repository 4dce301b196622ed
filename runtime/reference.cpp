#include "runtime/reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ahbm {

namespace {

// may_attend(row, key) -> bool; a template parameter so the per-score test inlines.
template <class MayAttend>
Eigen::MatrixXd reference_core(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                               int d, double scale, const MayAttend& may_attend) {
  using RowMajorD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const long n_rows = long(q.size()) / d, n_kv = long(k.size()) / d;
  const RowMajorD K = Eigen::Map<const MatrixRM>(k.data(), n_kv, d).cast<double>();
  const RowMajorD V = Eigen::Map<const MatrixRM>(v.data(), n_kv, d).cast<double>();
  Eigen::MatrixXd out = Eigen::MatrixXd::Zero(n_rows, d);
  // Rows per block: as many as keep the score block within 16 MiB (bounded memory for long
  // sequences), so K and V are packed for the product as few times as possible.
  const long block = std::max(1L, std::min(std::max(n_rows, 1L), (16L << 20) / (8 * std::max(n_kv, 1L))));
  RowMajorD s;  // one score block, reused
  for (long r0 = 0; r0 < n_rows; r0 += block) {
    const long nr = std::min(block, n_rows - r0);
    const RowMajorD Q = Eigen::Map<const MatrixRM>(q.data() + r0 * d, nr, d).cast<double>();
    s.resize(nr, n_kv);
    s.noalias() = Q * K.transpose();
    for (long r = 0; r < nr; ++r) {
      double mx = -std::numeric_limits<double>::infinity();
      for (long c = 0; c < n_kv; ++c) {
        s(r, c) = may_attend(r0 + r, c) ? s(r, c) * scale : -std::numeric_limits<double>::infinity();
        mx = std::max(mx, s(r, c));
      }
      if (mx == -std::numeric_limits<double>::infinity()) {
        s.row(r).setZero();
        continue;
      }
      double sum = 0;
      for (long c = 0; c < n_kv; ++c) sum += (s(r, c) = std::exp(s(r, c) - mx));
      s.row(r) /= sum;
    }
    out.middleRows(r0, nr) = s * V;
  }
  return out;
}

}  // namespace

Eigen::MatrixXd reference_attention_masked(const std::vector<float>& q, const std::vector<float>& k,
                                           const std::vector<float>& v, const std::vector<uint8_t>& mask, int d,
                                           double scale) {
  const long n_kv = long(k.size()) / d;
  return reference_core(q, k, v, d, scale, [&](long r, long c) { return mask[size_t(r * n_kv + c)] != 0; });
}

std::vector<uint8_t> visibility_mask(const std::vector<RowInfo>& rows, const std::vector<KvInfo>& kv) {
  std::vector<uint8_t> mask(rows.size() * kv.size());
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t c = 0; c < kv.size(); ++c) mask[r * kv.size() + c] = visible(rows[r], kv[c]);
  return mask;
}

Eigen::MatrixXd reference_attention(const std::vector<float>& q, const std::vector<RowInfo>& rows,
                                    const std::vector<float>& k, const std::vector<float>& v,
                                    const std::vector<KvInfo>& kv, int d, double scale) {
  return reference_core(q, k, v, d, scale, [&](long r, long c) { return visible(rows[size_t(r)], kv[size_t(c)]); });
}

NumericCheck compare_to_reference(const MatrixRM& o, const Eigen::MatrixXd& ref) {
  NumericCheck c;
  if (ref.size() == 0) return c;
  c.ref_max_abs = ref.cwiseAbs().maxCoeff();
  c.max_abs_err = (o.cast<double>() - ref).cwiseAbs().maxCoeff();
  c.max_rel_err = c.ref_max_abs > 0 ? c.max_abs_err / c.ref_max_abs : c.max_abs_err;
  return c;
}

}  // namespace ahbm
