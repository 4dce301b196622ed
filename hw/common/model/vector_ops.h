#pragma once
// The vector operators of a decoder layer (RMSNorm, RoPE, the gated activation, the residual
// add) as the PE's vector unit runs them, fused into the weight GEMM whose X or Y they touch
// (hw/common/contract/gemm_job.h GemmFusion, hw/pe/gemm_program.cpp; docs/model.md "Vector operators"):
//   rms_norm   prologue of the GEMM that reads the normed rows (qkv_proj, gate_up_proj). X is
//              broadcast whole-row to every CUBE, so every PE sees all K columns of its rows and
//              needs no exchange: per X block it accumulates each row's sum of squares and
//              multiplies the block by the norm weight; per finished Y block it scales each row
//              by rsqrt(sum / K + eps). diag(r)·(X ⊙ g)·W = (diag(r)·X ⊙ g)·W, so scaling Y rows
//              is the norm's row scaling moved behind the GEMM.
//   rope       epilogue of qkv_proj on the Q and K columns of each Y block (interleaved pairs).
//   gated_act  epilogue of gate_up_proj: act(gate) · up on interleaved (gate, up) column pairs.
//   residual   epilogue of o_proj and down_proj: the residual rows' columns of the block, read
//              from the PE's HBM slice (the layer input lives there, sharded like the output).
// One closed form per operator here, used by the PE and by the tests; the values in float32
// (the vector unit's precision) next to them.
#include <cstdint>
#include <string>
#include <vector>

#include "hw/common/model/attn_state.h"
#include "hw/common/model/hidden_act.h"
#include "hw/common/config/hw_config.h"
#include "hw/common/base/timing.h"

namespace ahbm {

// Vector-unit passes per element of each operator (each pass: one fp32 op per lane per cycle,
// as `pe.vector.ops_per_score` counts the softmax's). Constants, not parameters: they are the
// operator's arithmetic, not a property of the unit; the unit's speed is `pe.vector.lanes`.
struct VectorOpCost {
  // RMSNorm prologue, per X element: x·x accumulated into the row's sum (one FMA) and x·g.
  static constexpr int rms_prologue = 2;
  // RMSNorm epilogue: per Y element one multiply by the row's scale; per row the scale itself,
  // rsqrt(sum / K + eps): divide, add, and rsqrt as an estimate plus one Newton step (3 ops).
  static constexpr int rms_scale = 1;
  static constexpr int rms_row = 5;
  // RoPE, per rotated element: its half of the rotation (two multiplies, one add) and reading
  // its cos or sin from the SRAM table indexed by position (one op).
  static constexpr int rope = 4;
  // Residual add, per element.
  static constexpr int residual = 1;
};
// Per output element of the gated activation (the gate and up pair): SiLU g·σ(g) = exp, add,
// reciprocal, multiply (4) then · up (1); GELU (erf by a rational approximation) and its tanh
// form (tanh by exp) both 8 then · up.
int gated_act_ops(HiddenAct a);

// Cycles of `ops` passes over `elements` elements on the unit's lanes (partial last pass counts
// whole): the one rule every operator below follows.
inline uint64_t vector_pass_cycles(const VectorConfig& v, uint64_t elements, int ops) {
  return ceil_div(mul_sat(elements, uint64_t(ops)), uint64_t(v.lanes));
}
// RMSNorm prologue on an X block of rows × cols.
inline uint64_t rms_prologue_cycles(const VectorConfig& v, uint64_t rows, uint64_t cols) {
  return vector_pass_cycles(v, mul_sat(rows, cols), VectorOpCost::rms_prologue);
}
// RMSNorm epilogue on a Y block: each row's scale (rows elements), then the block scaled.
inline uint64_t rms_scale_cycles(const VectorConfig& v, uint64_t rows, uint64_t cols) {
  return add_sat(vector_pass_cycles(v, rows, VectorOpCost::rms_row),
                 vector_pass_cycles(v, mul_sat(rows, cols), VectorOpCost::rms_scale));
}
// RoPE on `rotated` columns (Q and K columns) of a Y block of `rows` rows.
inline uint64_t rope_cycles(const VectorConfig& v, uint64_t rows, uint64_t rotated) {
  return vector_pass_cycles(v, mul_sat(rows, rotated), VectorOpCost::rope);
}
// Gated activation on a Y block of rows × cols (cols/2 gate, up pairs; cols/2 outputs).
inline uint64_t gated_act_cycles(const VectorConfig& v, HiddenAct a, uint64_t rows, uint64_t cols) {
  return vector_pass_cycles(v, mul_sat(rows, cols / 2), gated_act_ops(a));
}
// Residual add on a Y block of rows × cols.
inline uint64_t residual_cycles(const VectorConfig& v, uint64_t rows, uint64_t cols) {
  return vector_pass_cycles(v, mul_sat(rows, cols), VectorOpCost::residual);
}

// RoPE's rotation angle of head dimension pair `pair` (0 .. head_dim/2 - 1) at `position`:
// position · theta^(-2·pair / head_dim). One definition for the PE (float32 cos/sin of the
// float64 angle: the SRAM table) and the float64 reference.
double rope_angle(int64_t position, int pair, int head_dim, double theta);

// The values, in float32 as the vector unit computes them (MatrixRM blocks, fp32).
// Sum of squares of each row of `x` added to `sumsq`; `x` multiplied by `g` (one per column).
void rms_prologue_apply(Eigen::Ref<MatrixRM> x, const float* g, Eigen::Ref<Eigen::VectorXf> sumsq);
// Each row of `y` times rsqrt(sumsq[r] / k + eps).
void rms_scale_apply(Eigen::Ref<MatrixRM> y, const Eigen::Ref<const Eigen::VectorXf>& sumsq, int64_t k, double eps);
// Rotates the pairs of `y`'s columns: rope_col[c] = the column's dimension in its head
// (interleaved pairs: 2j and 2j + 1 are pair j; -1 = not rotated); positions[r] per row.
void rope_apply(Eigen::Ref<MatrixRM> y, const int* rope_col, const int64_t* positions, int head_dim, double theta);
// act(y[:, 2i]) · y[:, 2i+1] into column 2i (column 2i+1 becomes 0).
void gated_act_apply(Eigen::Ref<MatrixRM> y, HiddenAct a);

}  // namespace ahbm
