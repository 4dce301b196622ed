// The vector operators of a decoder layer (hw/common/model/vector_ops.h): each closed form counted by
// hand for aligned and ragged rows and columns (a partial last pass over the lanes costs a whole
// cycle), and the float32 values the PE computes against float64 formulas typed in here.
#include <gtest/gtest.h>

#include <cmath>

#include "hw/common/model/vector_ops.h"

using namespace ahbm;

namespace {
VectorConfig lanes(int n) {
  VectorConfig v;
  v.lanes = n;
  return v;
}
}  // namespace

TEST(VectorOps, ClosedFormsAligned) {
  const VectorConfig v = lanes(32);
  // 16 rows × 64 columns = 1024 elements = 32 full passes of 32 lanes per op.
  EXPECT_EQ(rms_prologue_cycles(v, 16, 64), 2u * 32u);
  EXPECT_EQ(rms_scale_cycles(v, 16, 64), 3u /* ⌈16·5/32⌉ */ + 32u);
  EXPECT_EQ(rope_cycles(v, 16, 64), 4u * 32u);
  EXPECT_EQ(gated_act_cycles(v, HiddenAct::silu, 16, 64), 5u * 16u);  // 512 outputs
  EXPECT_EQ(gated_act_cycles(v, HiddenAct::gelu, 16, 64), 9u * 16u);
  EXPECT_EQ(gated_act_cycles(v, HiddenAct::gelu_pytorch_tanh, 16, 64), 9u * 16u);
  EXPECT_EQ(residual_cycles(v, 16, 64), 32u);
}

TEST(VectorOps, ClosedFormsRagged) {
  const VectorConfig v = lanes(32);
  // 3 rows × 7 columns = 21 elements: one pass is ⌈21/32⌉ = 1 cycle; 2 passes ⌈42/32⌉ = 2.
  EXPECT_EQ(residual_cycles(v, 3, 7), 1u);
  EXPECT_EQ(rms_prologue_cycles(v, 3, 7), 2u);
  EXPECT_EQ(rms_scale_cycles(v, 3, 7), 1u /* ⌈15/32⌉ */ + 1u);
  EXPECT_EQ(rope_cycles(v, 3, 7), 3u);                               // ⌈84/32⌉
  EXPECT_EQ(gated_act_cycles(v, HiddenAct::silu, 3, 7), 2u);         // 3 rows × 3 pairs × 5: ⌈45/32⌉
  // 5 rows × 33 columns = 165 elements: ⌈165/32⌉ = 6, ⌈330/32⌉ = 11, ⌈660/32⌉ = 21.
  EXPECT_EQ(residual_cycles(v, 5, 33), 6u);
  EXPECT_EQ(rms_prologue_cycles(v, 5, 33), 11u);
  EXPECT_EQ(rope_cycles(v, 5, 33), 21u);
  EXPECT_EQ(gated_act_cycles(v, HiddenAct::silu, 5, 33), 13u);  // 80 outputs × 5 = 400 → 13
  // Nothing to do costs nothing; one lane makes every op one cycle per element.
  EXPECT_EQ(rope_cycles(v, 4, 0), 0u);
  EXPECT_EQ(rms_scale_cycles(lanes(1), 3, 7), 15u + 21u);
}

TEST(VectorOps, ValuesMatchFloat64) {
  // A 3 × 8 block of known values.
  MatrixRM y(3, 8);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 8; ++c) y(r, c) = float(0.25 * (r + 1) - 0.1 * c);
  const MatrixRM y0 = y;

  // RMSNorm: prologue on two K halves, then the row scale.
  const float g[8] = {1.0f, 0.5f, 2.0f, 1.5f, 0.75f, 1.25f, 1.0f, 0.9f};
  MatrixRM x = y;
  Eigen::VectorXf sumsq = Eigen::VectorXf::Zero(3);
  rms_prologue_apply(x.leftCols(4), g, sumsq);
  rms_prologue_apply(x.rightCols(4), g + 4, sumsq);
  rms_scale_apply(x, sumsq, 8, 1e-6);
  for (int r = 0; r < 3; ++r) {
    double ss = 0;
    for (int c = 0; c < 8; ++c) ss += double(y0(r, c)) * y0(r, c);
    const double s = 1.0 / std::sqrt(ss / 8 + 1e-6);
    for (int c = 0; c < 8; ++c) EXPECT_NEAR(x(r, c), double(y0(r, c)) * g[c] * s, 1e-5) << r << "," << c;
  }

  // RoPE on columns 2..5 (dims 0..3 of a head of 4); columns 0, 1, 6, 7 untouched.
  MatrixRM ro = y;
  const int rope_col[8] = {-1, -1, 0, 1, 2, 3, -1, -1};
  const int64_t pos[3] = {0, 7, 4095};
  rope_apply(ro, rope_col, pos, 4, 500000.0);
  for (int r = 0; r < 3; ++r) {
    for (int c : {0, 1, 6, 7}) EXPECT_EQ(ro(r, c), y0(r, c));
    for (int j = 0; j < 2; ++j) {
      const double a = double(pos[r]) * std::pow(500000.0, -2.0 * j / 4.0);
      const double u = y0(r, 2 + 2 * j), w = y0(r, 3 + 2 * j);
      EXPECT_NEAR(ro(r, 2 + 2 * j), u * std::cos(a) - w * std::sin(a), 1e-5);
      EXPECT_NEAR(ro(r, 3 + 2 * j), u * std::sin(a) + w * std::cos(a), 1e-5);
    }
  }
  EXPECT_EQ(ro.row(0), y0.row(0));  // position 0 does not rotate

  // Gated activation: act(gate) · up into the gate column, the up column cleared.
  for (HiddenAct a : {HiddenAct::silu, HiddenAct::gelu, HiddenAct::gelu_pytorch_tanh}) {
    MatrixRM ga = y;
    gated_act_apply(ga, a);
    for (int r = 0; r < 3; ++r)
      for (int i = 0; i < 4; ++i) {
        const double gt = y0(r, 2 * i), up = y0(r, 2 * i + 1);
        double act = gt / (1 + std::exp(-gt));
        if (a == HiddenAct::gelu) act = 0.5 * gt * (1 + std::erf(gt / std::sqrt(2.0)));
        if (a == HiddenAct::gelu_pytorch_tanh)
          act = 0.5 * gt * (1 + std::tanh(std::sqrt(2 / M_PI) * (gt + 0.044715 * gt * gt * gt)));
        EXPECT_NEAR(ga(r, 2 * i), act * up, 1e-6) << hidden_act_name(a);
        EXPECT_NEAR(hidden_act_ref(a, gt), act, 1e-15);
        EXPECT_EQ(ga(r, 2 * i + 1), 0.0f);
      }
  }
}
