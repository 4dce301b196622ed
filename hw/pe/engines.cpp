#include "hw/pe/engines.h"

#include <limits>

namespace ahbm {

AttnState block_state(const MatrixRM& scores, const ConstMapRM& v) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  AttnState s;
  s.m = scores.rowwise().maxCoeff();
  // Rows with no visible key: shift by 0 so exp(-inf) = 0 instead of NaN.
  const Eigen::VectorXf shift = (s.m.array() == kNegInf).select(0.f, s.m);
  const MatrixRM p = (scores.colwise() - shift).array().exp().matrix();
  s.l = p.rowwise().sum();
  gemm_ab(p, v, s.o);
  return s;
}

}  // namespace ahbm
