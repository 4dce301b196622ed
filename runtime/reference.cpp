#include "runtime/reference.h"

#include <cmath>
#include <limits>

namespace ahbm {

Eigen::MatrixXd reference_attention(const std::vector<float>& q, const std::vector<RowInfo>& rows,
                                    const std::vector<float>& k, const std::vector<float>& v,
                                    const std::vector<KvInfo>& kv, int d, double scale) {
  using RowMajorD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const long n_rows = long(rows.size()), n_kv = long(kv.size());
  const RowMajorD K = Eigen::Map<const MatrixRM>(k.data(), n_kv, d).cast<double>();
  const RowMajorD V = Eigen::Map<const MatrixRM>(v.data(), n_kv, d).cast<double>();
  Eigen::MatrixXd out = Eigen::MatrixXd::Zero(n_rows, d);
  const long block = 64;  // bounded memory for long sequences
  for (long r0 = 0; r0 < n_rows; r0 += block) {
    const long nr = std::min(block, n_rows - r0);
    const RowMajorD Q = Eigen::Map<const MatrixRM>(q.data() + r0 * d, nr, d).cast<double>();
    RowMajorD s = (Q * K.transpose()) * scale;
    for (long r = 0; r < nr; ++r) {
      double mx = -std::numeric_limits<double>::infinity();
      for (long c = 0; c < n_kv; ++c) {
        if (!visible(rows[size_t(r0 + r)], kv[size_t(c)])) s(r, c) = -std::numeric_limits<double>::infinity();
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

NumericCheck compare_to_reference(const MatrixRM& o, const Eigen::MatrixXd& ref) {
  NumericCheck c;
  c.ref_max_abs = ref.cwiseAbs().maxCoeff();
  c.max_abs_err = (o.cast<double>() - ref).cwiseAbs().maxCoeff();
  c.max_rel_err = c.ref_max_abs > 0 ? c.max_abs_err / c.ref_max_abs : c.max_abs_err;
  return c;
}

}  // namespace ahbm
