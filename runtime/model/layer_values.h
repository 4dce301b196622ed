#pragma once
// One decoder layer (dense or MoE) with values through the simulated hardware, and its float64
// reference (docs/models.md "Values through a layer"):
//   x → [RMSNorm → QKV → RoPE] → attention → [O + x] = h → [RMSNorm → gate/up → act] → [down + h]
// Bracketed groups are one GemmJob each (the vector operators fused, layer_plan.h); attention is
// today's AttentionJob per KV head, its Q, K and V wired from the QKV GEMM's output (rounded to
// the storage type, as HBM and the Q buffer hold them). The M token rows are one sequence's
// prefill at positions 0 .. M − 1 (each row attends to itself and the rows before it), a
// single group-free case: no KV from earlier steps.
//
// Values from the seeded generator (runtime/numerics/tensor_gen.h): weights N(0, 1)/sqrt(K) (the usual
// initialisation, so activations stay O(1) through the layer), norm weights 1 + N(0, 1)/8,
// the layer input N(0, 1); weights stored in the model's dtype (the reference uses the same
// stored weights), the input kept in fp32 (the residual stream).
#include <cstdint>

#include <Eigen/Core>

#include "hw/chip/simulate.h"
#include "runtime/model/config.h"
#include "runtime/model/memory_map.h"
#include "runtime/model/moe_router.h"

namespace ahbm {

struct LayerValues {
  MatrixRM out;                 // M × hidden_size, the simulated layer's output (fp32)
  Eigen::MatrixXd reference;    // the same in float64
  double max_abs_err = 0;       // max |out − reference|
  double ref_max_abs = 0;       // max |reference|
  double sim_ns = 0;            // Σ of the runs' simulated times (four GEMM runs, one attention run; MoE:
                                // qkv, attention, o, router, then each routed expert's gate_up and down)
  // MoE: the simulated router's choice, and whether the float64 router chose the same experts.
  Routing routing;
  bool routing_matches_reference = true;
};

// Tolerance of max_abs_err / ref_max_abs for a layer in `t` (docs/models.md says why).
double layer_tolerance(DType t);

// `fusion` (docs/models.md "Fusion choices"): an unfused RMSNorm or RoPE runs as its own kernel on
// the hardware (layer_plan.h norm_kernel, rope_kernel) between the GEMM runs; attention fusion
// changes timing only.
LayerValues run_layer_values(const ModelConfig& m, DType t, const HwConfig& hw, int rows, uint64_t seed, int layer = 0,
                             const ModelFusion& fusion = {});

// The float64 reference of the layer alone, on the same generated values. An MoE layer routes
// with `routing` when given (the simulated router's choice: float64 and the hardware may pick
// differently at a near tie), else with its own float64 router logits. h1_out, hn_out: the
// attention block's output and its post-attention norm (the FFN's input).
Eigen::MatrixXd reference_layer(const ModelConfig& m, DType t, int rows, uint64_t seed, int layer = 0,
                                const Routing* routing = nullptr, Eigen::MatrixXd* h1_out = nullptr,
                                Eigen::MatrixXd* hn_out = nullptr);
// MoE: the float64 router logits (rows × E) of the layer.
Eigen::MatrixXd reference_router_logits(const ModelConfig& m, DType t, int rows, uint64_t seed, int layer = 0);

// The final norm and LM head with values: `rows` final hidden rows (the residual stream, fp32,
// N(0, 1)) RMS-normed by the model's final norm weight and projected on the vocabulary through
// the simulated hardware (layer_plan.h lm_head_gemm), against float64. W is the LM head's, or
// with tie_word_embeddings the embedding table's (its own generator id: a tied and an untied
// model of the same shape get different logits). Generator ids after the last layer's.
struct HeadValues {
  MatrixRM logits;              // rows × vocab_size, simulated (fp32)
  Eigen::MatrixXd reference;    // the same in float64
  double max_abs_err = 0, ref_max_abs = 0;
  double sim_ns = 0;
};
HeadValues run_head_values(const ModelConfig& m, DType t, const HwConfig& hw, int rows, uint64_t seed);
Eigen::MatrixXd reference_head(const ModelConfig& m, DType t, int rows, uint64_t seed);

}  // namespace ahbm
