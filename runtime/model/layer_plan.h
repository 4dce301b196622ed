#pragma once
// The operators of one dense decoder layer as jobs for the hardware (hw/common/contract/gemm_job.h), with
// the memory map's shards, the vector operators fused into them (hw/common/model/vector_ops.h), and
// their values from the seeded generator (runtime/numerics/tensor_gen.h).
//
// A step's rows enter the layer together: M = Σ over the step's branches of their new tokens
// (THInfer's selective batching: the weight GEMMs of all branches run as one GEMM, attention
// stays per branch). The operators, in order (docs/design/decoder-layer.md §1):
//   qkv_proj      M × h · h × (H + 2·KV)·d     input RMSNorm (prologue), RoPE on Q, K (epilogue)
//   (attention)                                 today's attention jobs
//   o_proj        M × H·d · H·d × h            residual add (epilogue)
//   gate_up_proj  M × h · h × 2f               post-attention RMSNorm (prologue), act(gate)·up
//   down_proj     M × f · f × h                residual add (epilogue)
// Each needs the previous one's Y (gathered whole rows: the next X broadcast), so each is a run
// of its own (Simulator::run_gemms). A fused operator's shard on a PE is the columns the memory
// map gave that PE in each fused tensor: its q, k, v columns one after another; its gate and up
// columns interleaved (gate c, up c, gate c + 1, ...) so the activation finds both in one block.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hw/chip/simulate.h"
#include "hw/common/contract/gemm_job.h"
#include "hw/common/contract/vector_kernel.h"
#include "runtime/model/config.h"
#include "runtime/model/memory_map.h"
#include "runtime/model/moe_router.h"
#include "runtime/numerics/tensor_gen.h"

namespace ahbm {

// X (M × K) and W (K × N) of GEMM `op` from the seeded generator (TensorKind::activation and
// ::weight, head = op, pos = row, dim = column), rounded to the job's storage type.
void fill_gemm_values(GemmJob& j, uint64_t seed, int op);

// The fused tensors behind each operator of a dense layer, in order.
struct LayerOperator {
  std::string name;
  std::vector<std::string> tensors;  // HuggingFace names (memory_map layer_columns keys)
};
std::vector<LayerOperator> layer_operators();

// Where each column of an operator's fused N comes from: tensor (index into op.tensors) and its
// column; and each chip PE's shard of the fused N.
struct OperatorLayout {
  std::vector<GemmShard> shards;
  std::vector<int> tensor, column;  // per fused column
};
// Throws InputError when an interleaved pair cannot be formed (a PE holds a different number of
// gate and up columns).
OperatorLayout operator_layout(const ModelConfig& m, const MemoryMap& map, int layer, const LayerOperator& op);

// One operator's plain GEMM (no fusion) for `rows` token rows, timing only, sharded as `map`
// places layer `layer`'s tensors.
GemmJob operator_gemm(const ModelConfig& m, DType t, const MemoryMap& map, const LayerOperator& op, int rows,
                      const std::string& phase, int layer = 0);

// The final norm and LM head (docs/design/decoder-layer.md §1): the last hidden row of each
// sequence that emits a token, RMS-normed by the model's final `norm` (fused as the prologue, as
// the layers' input norms are), times the vocabulary projection h × V, W-stationary like the
// layers' GEMMs. W is `lm_head`, or with tie_word_embeddings the embedding table (held h × V,
// split along the vocabulary: memory_map.h model_columns), so a tied model reads the same bytes.
// Logits are fp32 rows of V, written back like every operator's Y (the sampler reads them).
LayerOperator lm_head_operator(const ModelConfig& m);
GemmJob lm_head_gemm(const ModelConfig& m, DType t, const MemoryMap& map, int rows, const std::string& phase);

// Operator `op`'s GEMM of layer `layer` for `positions.size()` rows (timing only) with the vector
// operators its name fuses: the input RMSNorm (qkv_proj) and the post-attention one (gate_up_proj,
// an MoE router), RoPE (qkv_proj), the activation (gate_up_proj), the residual add (o_proj,
// down_proj; an MoE expert's down_proj adds with the routing weights, GemmFusion::residual_scale).
// `fusion` (docs/models.md "Fusion choices"): an RMSNorm or RoPE it leaves unfused is not in the
// GEMM (it is a kernel of its own: norm_kernel, rope_kernel).
GemmJob layer_operator_gemm(const ModelConfig& m, DType t, const MemoryMap& map, const LayerOperator& op,
                            const std::vector<int64_t>& positions, const std::string& phase, int layer,
                            const ModelFusion& fusion = {});

// The unfused operators as kernels of their own (hw/common/contract/vector_kernel.h), each on the columns
// each PE holds of the rows it rewrites:
//   norm_kernel  `op` = input_norm, post_attention_norm (layer `layer`) or final_norm: the
//                residual stream's rows (fp32, h columns sharded as the memory map shards
//                o_proj's output) RMS-normed into the next GEMM's X (the storage type `t`)
//   rope_kernel  the Q and K columns of qkv_proj's Y (fp32, qkv_proj's shards) rotated in place
VectorKernelJob norm_kernel(const ModelConfig& m, DType t, const MemoryMap& map, const std::string& op, int rows,
                            const std::string& phase, int layer);
VectorKernelJob rope_kernel(const ModelConfig& m, const MemoryMap& map, const std::vector<int64_t>& positions,
                            const std::string& phase, int layer);

// The operators of one dense decoder layer for token rows at `positions` (RoPE), timing only,
// with their fused vector operators. Throws InputError for an MoE model (layer_runs has its runs).
std::vector<GemmJob> layer_gemms(const ModelConfig& m, DType t, const MemoryMap& map,
                                 const std::vector<int64_t>& positions, const std::string& phase, int layer = 0);
// The same for rows at positions 0 .. rows - 1.
std::vector<GemmJob> layer_gemms(const ModelConfig& m, DType t, const MemoryMap& map, int rows, const std::string& phase,
                                 int layer = 0);

// One run of the hardware (Simulator::run_gemms) within a layer: one job, or an MoE layer's
// experts (one job per expert with routed rows, in expert order; `experts` names them). The
// experts' jobs of one run share the PEs one after another (gemm_job.h: jobs in order).
struct LayerRun {
  std::string op;
  std::vector<GemmJob> jobs;
  std::vector<int> experts;
  std::vector<VectorKernelJob> kernels;  // an unfused vector operator's run (then no jobs)
  bool kernel() const { return !kernels.empty(); }
};
// The runs of layer `layer` for token rows at `positions` (timing only):
//   dense  qkv_proj, o_proj, gate_up_proj, down_proj (layer_gemms, one job each)
//   MoE    qkv_proj, o_proj, router (M × h · h × E, the post-attention RMSNorm fused), then per
//          expert e with M_e routed rows gate_up_proj (M_e × h · h × 2f, the norm and activation
//          fused) and down_proj (M_e × f · f × h, + the weighted residual: the combine)
// `routing` (required for MoE) decides each expert's rows; the jobs read each expert's shards. On
// an expert-parallel chip (m.expert_parallel > 1) it is over the chip's m.local_experts() experts
// and the rows they received from every rank, not the layer's rows.
// With `fusion` leaving operators unfused, their kernels are runs of their own:
//   input_norm before qkv_proj, rope after it, post_attention_norm before gate_up_proj (MoE: before
//   the router, whose rows the experts take normed).
std::vector<LayerRun> layer_runs(const ModelConfig& m, DType t, const MemoryMap& map, const std::vector<int64_t>& positions,
                                 const std::string& phase, int layer, const Routing* routing,
                                 const ModelFusion& fusion = {});
// The runs' operator names in order (the summary's by_operator before the head's).
std::vector<std::string> layer_run_names(const ModelConfig& m, const ModelFusion& fusion = {});
// An MoE layer's router (h × E), and expert e's gate_up_proj and down_proj operators (its
// tensors' per-expert names, memory_map.h expert_tensor).
LayerOperator moe_router_operator();
std::vector<LayerOperator> moe_expert_operators(int e);

}  // namespace ahbm
