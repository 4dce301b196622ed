#include "hw/common/model/attn_state.h"

#include <limits>

namespace ahbm {

namespace {
constexpr float kNegInf = -std::numeric_limits<float>::infinity();
}

AttnState AttnState::empty(int rows, int head_dim) {
  AttnState s;
  s.m = Eigen::VectorXf::Constant(rows, kNegInf);
  s.l = Eigen::VectorXf::Zero(rows);
  s.o = MatrixRM::Zero(rows, head_dim);
  return s;
}

void merge_into(AttnState& acc, const AttnState& x) {
  const Eigen::VectorXf m_new = acc.m.cwiseMax(x.m);
  // exp(m_old - m_new) with exp(-inf - -inf) defined as 0 (an empty side contributes nothing).
  Eigen::VectorXf a(acc.rows()), b(acc.rows());
  for (int r = 0; r < acc.rows(); ++r) {
    const bool empty = m_new[r] == kNegInf;
    a[r] = empty || acc.m[r] == kNegInf ? 0.f : std::exp(acc.m[r] - m_new[r]);
    b[r] = empty || x.m[r] == kNegInf ? 0.f : std::exp(x.m[r] - m_new[r]);
  }
  acc.l = acc.l.cwiseProduct(a) + x.l.cwiseProduct(b);
  acc.o.array().colwise() *= a.array();
  acc.o.noalias() += b.asDiagonal() * x.o;
  acc.m = m_new;
}

MatrixRM normalise(const AttnState& s) {
  const Eigen::VectorXf inv = (s.l.array() > 0.f).select(s.l.array().inverse(), 0.f);
  return inv.asDiagonal() * s.o;
}

}  // namespace ahbm
