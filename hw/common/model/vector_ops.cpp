#include "hw/common/model/vector_ops.h"

#include <cmath>

namespace ahbm {

int gated_act_ops(HiddenAct a) { return a == HiddenAct::silu ? 5 : 9; }

double rope_angle(int64_t position, int pair, int head_dim, double theta) {
  return double(position) * std::pow(theta, -2.0 * double(pair) / double(head_dim));
}

void rms_prologue_apply(Eigen::Ref<MatrixRM> x, const float* g, Eigen::Ref<Eigen::VectorXf> sumsq) {
  sumsq += x.rowwise().squaredNorm();
  for (Eigen::Index c = 0; c < x.cols(); ++c) x.col(c) *= g[c];
}

void rms_scale_apply(Eigen::Ref<MatrixRM> y, const Eigen::Ref<const Eigen::VectorXf>& sumsq, int64_t k, double eps) {
  for (Eigen::Index r = 0; r < y.rows(); ++r)
    y.row(r) *= 1.0f / std::sqrt(sumsq[r] / float(k) + float(eps));
}

void rope_apply(Eigen::Ref<MatrixRM> y, const int* rope_col, const int64_t* positions, int head_dim, double theta) {
  for (Eigen::Index c = 0; c + 1 < y.cols(); ++c) {
    if (rope_col[c] < 0 || rope_col[c] % 2 != 0) continue;  // the first column of each pair
    const int pair = rope_col[c] / 2;
    for (Eigen::Index r = 0; r < y.rows(); ++r) {
      const double a = rope_angle(positions[r], pair, head_dim, theta);
      const float cs = float(std::cos(a)), sn = float(std::sin(a));
      const float y0 = y(r, c), y1 = y(r, c + 1);
      y(r, c) = y0 * cs - y1 * sn;
      y(r, c + 1) = y0 * sn + y1 * cs;
    }
    ++c;
  }
}

void gated_act_apply(Eigen::Ref<MatrixRM> y, HiddenAct a) {
  for (Eigen::Index c = 0; c + 1 < y.cols(); c += 2)
    for (Eigen::Index r = 0; r < y.rows(); ++r) {
      y(r, c) = hidden_act_f32(a, y(r, c)) * y(r, c + 1);
      y(r, c + 1) = 0.0f;
    }
}

}  // namespace ahbm
