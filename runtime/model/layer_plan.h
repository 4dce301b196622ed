#pragma once
// The operators of one dense decoder layer as jobs for the hardware (hw/common/gemm_job.h), with
// the memory map's shards, the vector operators fused into them (hw/common/vector_ops.h), and
// their values from the seeded generator (runtime/tensor_gen.h).
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
#include "hw/common/gemm_job.h"
#include "runtime/model/config.h"
#include "runtime/model/memory_map.h"
#include "runtime/tensor_gen.h"

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

// The operators of one dense decoder layer for token rows at `positions` (RoPE), timing only,
// with their fused vector operators. Throws InputError for an MoE model (routing not modelled).
std::vector<GemmJob> layer_gemms(const ModelConfig& m, DType t, const MemoryMap& map,
                                 const std::vector<int64_t>& positions, const std::string& phase, int layer = 0);
// The same for rows at positions 0 .. rows - 1.
std::vector<GemmJob> layer_gemms(const ModelConfig& m, DType t, const MemoryMap& map, int rows, const std::string& phase,
                                 int layer = 0);

}  // namespace ahbm
