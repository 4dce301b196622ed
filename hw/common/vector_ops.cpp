#include "hw/common/vector_ops.h"

#include <cmath>

namespace ahbm {

const char* hidden_act_name(HiddenAct a) {
  switch (a) {
    case HiddenAct::gelu: return "gelu";
    case HiddenAct::gelu_pytorch_tanh: return "gelu_pytorch_tanh";
    default: return "silu";
  }
}

const std::vector<std::string>& hidden_act_names() {
  static const std::vector<std::string> names = {"silu", "gelu", "gelu_pytorch_tanh"};
  return names;
}

int gated_act_ops(HiddenAct a) { return a == HiddenAct::silu ? 5 : 9; }

double rope_angle(int64_t position, int pair, int head_dim, double theta) {
  return double(position) * std::pow(theta, -2.0 * double(pair) / double(head_dim));
}

double hidden_act_ref(HiddenAct a, double x) {
  switch (a) {
    case HiddenAct::gelu: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case HiddenAct::gelu_pytorch_tanh: {
      const double c = std::sqrt(2.0 / M_PI);
      return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
    }
    default: return x / (1.0 + std::exp(-x));
  }
}

float hidden_act_f32(HiddenAct a, float x) {
  switch (a) {
    case HiddenAct::gelu: return 0.5f * x * (1.0f + std::erf(x * 0.70710678f));
    case HiddenAct::gelu_pytorch_tanh: return 0.5f * x * (1.0f + std::tanh(0.79788456f * (x + 0.044715f * x * x * x)));
    default: return x / (1.0f + std::exp(-x));
  }
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
