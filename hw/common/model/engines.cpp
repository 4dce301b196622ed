#include "hw/common/model/engines.h"

#include <limits>

namespace ahbm {

void block_state_into(const MatrixRM& scores, const ConstMapRM& v, AttnState& s, BlockScratch& x) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  s.m = scores.rowwise().maxCoeff();
  // Rows with no visible key: shift by 0 so exp(-inf) = 0 instead of NaN.
  x.shift = (s.m.array() == kNegInf).select(0.f, s.m);
  x.p = (scores.colwise() - x.shift).array().exp().matrix();
  s.l = x.p.rowwise().sum();
  gemm_ab(x.p, v, s.o);
}

AttnState block_state(const MatrixRM& scores, const ConstMapRM& v) {
  AttnState s;
  BlockScratch x;
  block_state_into(scores, v, s, x);
  return s;
}

}  // namespace ahbm
