#pragma once
// One dense decoder layer with values through the simulated hardware, and its float64
// reference (docs/models.md "Values through a layer"):
//   x → [RMSNorm → QKV → RoPE] → attention → [O + x] = h → [RMSNorm → gate/up → act] → [down + h]
// Bracketed groups are one GemmJob each (the vector operators fused, layer_plan.h); attention is
// today's AttentionJob per KV head, its Q, K and V wired from the QKV GEMM's output (rounded to
// the storage type, as HBM and the Q buffer hold them). The M token rows are one sequence's
// prefill at positions 0 .. M − 1 (each row attends to itself and the rows before it), a
// single group-free case: no KV from earlier steps.
//
// Values from the seeded generator (runtime/tensor_gen.h): weights N(0, 1)/sqrt(K) (the usual
// initialisation, so activations stay O(1) through the layer), norm weights 1 + N(0, 1)/8,
// the layer input N(0, 1); weights stored in the model's dtype (the reference uses the same
// stored weights), the input kept in fp32 (the residual stream).
#include <cstdint>

#include <Eigen/Core>

#include "hw/chip/simulate.h"
#include "runtime/model/config.h"
#include "runtime/model/memory_map.h"

namespace ahbm {

struct LayerValues {
  MatrixRM out;                 // M × hidden_size, the simulated layer's output (fp32)
  Eigen::MatrixXd reference;    // the same in float64
  double max_abs_err = 0;       // max |out − reference|
  double ref_max_abs = 0;       // max |reference|
  double sim_ns = 0;            // Σ of the five runs' simulated times (four GEMM runs, one attention run)
};

// Tolerance of max_abs_err / ref_max_abs for a layer in `t` (docs/models.md says why).
double layer_tolerance(DType t);

LayerValues run_layer_values(const ModelConfig& m, DType t, const HwConfig& hw, int rows, uint64_t seed, int layer = 0);

// The float64 reference of the layer alone, on the same generated values.
Eigen::MatrixXd reference_layer(const ModelConfig& m, DType t, int rows, uint64_t seed, int layer = 0);

}  // namespace ahbm
