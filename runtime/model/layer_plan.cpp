#include "runtime/model/layer_plan.h"

#include <stdexcept>

#include "hw/common/base/error.h"

namespace ahbm {

void fill_gemm_values(GemmJob& j, uint64_t seed, int op) {
  j.x.resize(size_t(j.m) * size_t(j.k));
  j.w.resize(size_t(j.k) * size_t(j.n));
  for (int r = 0; r < j.m; ++r) tensor_row(seed, TensorKind::activation, op, 0, r, j.k, j.x.data() + size_t(r) * size_t(j.k));
  for (int r = 0; r < j.k; ++r) tensor_row(seed, TensorKind::weight, op, 0, r, j.n, j.w.data() + size_t(r) * size_t(j.n));
  for (float& v : j.x) v = round_to(j.dtype, v);
  for (float& v : j.w) v = round_to(j.dtype, v);
}

std::vector<LayerOperator> layer_operators() {
  return {{"qkv_proj", {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"}},
          {"o_proj", {"self_attn.o_proj"}},
          {"gate_up_proj", {"mlp.gate_proj", "mlp.up_proj"}},
          {"down_proj", {"mlp.down_proj"}}};
}

namespace {

// An operator's layout from the per-PE column counts of its tensors (`columns_of`: a layer's or
// the model-wide tensors'); `where` names them in the error.
OperatorLayout layout_of(const ModelConfig& m, const std::map<std::string, std::vector<int>>& columns_of, int pes,
                         const std::string& where, const LayerOperator& op) {
  const size_t T = op.tensors.size();
  // Each tensor's columns are contiguous shards in PE order (memory_map.h): PE p's start is the
  // sum of the counts before it.
  std::vector<std::vector<int>> count(T), first(T);
  for (size_t t = 0; t < T; ++t) {
    count[t] = columns_of.at(op.tensors[t]);
    first[t].resize(count[t].size());
    int next = 0;
    for (size_t p = 0; p < count[t].size(); ++p) first[t][p] = next, next += count[t][p];
  }
  const bool interleave = op.name == "gate_up_proj";
  OperatorLayout out;
  int next = 0;
  for (size_t p = 0; p < size_t(pes); ++p) {
    const int begin = next;
    if (interleave) {
      if (count[0][p] != count[1][p])
        throw InputError("model: " + where + "'s " + op.name + " puts " + std::to_string(count[0][p]) +
                         " gate and " + std::to_string(count[1][p]) + " up columns on chip PE " + std::to_string(p) +
                         " (allowed: the same number, so the activation pairs them on the PE; intermediate_size = " +
                         std::to_string(m.intermediate_size) + " a multiple of the " + std::to_string(pes) + " PEs)");
      for (int c = 0; c < count[0][p]; ++c)
        for (size_t t = 0; t < 2; ++t) out.tensor.push_back(int(t)), out.column.push_back(first[t][p] + c);
    } else {
      for (size_t t = 0; t < T; ++t)
        for (int c = 0; c < count[t][p]; ++c) out.tensor.push_back(int(t)), out.column.push_back(first[t][p] + c);
    }
    next = int(out.column.size());
    out.shards.push_back(next > begin ? GemmShard{begin, next - begin, 0, 0} : GemmShard{});
  }
  return out;
}

// The plain GEMM of `op` (K, N from its tensors among `weights`) sharded by `lay`.
GemmJob plain_gemm(const std::vector<WeightTensor>& weights, DType t, const OperatorLayout& lay, const LayerOperator& op,
                   int rows, const std::string& phase) {
  GemmJob j;
  j.op = op.name;
  j.phase = phase;
  j.m = rows;
  j.dtype = t;
  j.n = 0;
  for (const std::string& name : op.tensors)
    for (const WeightTensor& w : weights)
      if (w.name == base_tensor(name)) {
        j.k = int(w.rows);
        j.n += int(w.cols);
      }
  j.shards = lay.shards;
  for (GemmShard& s : j.shards)
    if (s.n_count > 0) s.k_count = j.k;
  return j;
}

}  // namespace

OperatorLayout operator_layout(const ModelConfig& m, const MemoryMap& map, int layer, const LayerOperator& op) {
  return layout_of(m, map.layer_columns.at(size_t(layer)), map.pes, "layer " + std::to_string(layer), op);
}

GemmJob operator_gemm(const ModelConfig& m, DType t, const MemoryMap& map, const LayerOperator& op, int rows,
                      const std::string& phase, int layer) {
  return plain_gemm(layer_weights(m), t, operator_layout(m, map, layer, op), op, rows, phase);
}

LayerOperator lm_head_operator(const ModelConfig& m) {
  return {"lm_head", {m.tie_word_embeddings ? "embed_tokens" : "lm_head"}};
}

GemmJob lm_head_gemm(const ModelConfig& m, DType t, const MemoryMap& map, int rows, const std::string& phase) {
  const LayerOperator op = lm_head_operator(m);
  GemmJob j = plain_gemm(global_weights(m), t, layout_of(m, map.model_columns, map.pes, "the model", op), op, rows, phase);
  j.fused.rms_norm = true;  // the final norm, the prologue as the layers' input norms are
  j.fused.rms_eps = m.rms_norm_eps;
  return j;
}

namespace {
// Per column of qkv_proj's fused N, the column's dimension in its head for the q and k columns
// (tensors 0 and 1; the v columns -1): where RoPE rotates, fused or as a kernel.
std::vector<int> qkv_rope_cols(const ModelConfig& m, const MemoryMap& map, int layer) {
  const OperatorLayout lay = operator_layout(m, map, layer, layer_operators()[0]);
  std::vector<int> out(lay.column.size());
  for (size_t c = 0; c < out.size(); ++c) out[c] = lay.tensor[c] < 2 ? lay.column[c] % m.head_dim : -1;
  return out;
}
}  // namespace

GemmJob layer_operator_gemm(const ModelConfig& m, DType t, const MemoryMap& map, const LayerOperator& op,
                   const std::vector<int64_t>& positions, const std::string& phase, int layer, const ModelFusion& fusion) {
  GemmJob j = operator_gemm(m, t, map, op, int(positions.size()), phase, layer);
  GemmFusion& f = j.fused;
  if (fusion.norm && (op.name == "qkv_proj" || op.name == "gate_up_proj" || op.name == "router")) {
    f.rms_norm = true;
    f.rms_eps = m.rms_norm_eps;
  }
  if (fusion.linear_rope && op.name == "qkv_proj") {
    f.rope_col = qkv_rope_cols(m, map, layer);
    f.positions = positions;
    f.head_dim = m.head_dim;
    f.rope_theta = m.rope_theta;
  }
  if (op.name == "gate_up_proj") {
    f.gated_act = true;
    f.act = m.hidden_act;
  }
  f.residual = op.name == "o_proj" || op.name == "down_proj";
  return j;
}

VectorKernelJob norm_kernel(const ModelConfig& m, DType t, const MemoryMap& map, const std::string& op, int rows,
                            const std::string& phase, int layer) {
  VectorKernelJob k;
  k.op = op;
  k.phase = phase;
  k.m = rows;
  k.n = int(m.hidden_size);
  k.in_dtype = DType::fp32;  // the residual stream
  k.out_dtype = t;           // the next GEMM's X
  k.fused.rms_norm = true;
  k.fused.rms_eps = m.rms_norm_eps;
  // The residual stream lies where o_proj (and down_proj) leave it: o_proj's column shards.
  k.shards = operator_layout(m, map, layer, layer_operators()[1]).shards;
  return k;
}

VectorKernelJob rope_kernel(const ModelConfig& m, const MemoryMap& map, const std::vector<int64_t>& positions,
                            const std::string& phase, int layer) {
  VectorKernelJob k;
  k.op = "rope";
  k.phase = phase;
  k.m = int(positions.size());
  k.fused.rope_col = qkv_rope_cols(m, map, layer);
  k.n = int(k.fused.rope_col.size());
  k.in_dtype = k.out_dtype = DType::fp32;  // qkv_proj's Y, rotated in place
  k.fused.positions = positions;
  k.fused.head_dim = m.head_dim;
  k.fused.rope_theta = m.rope_theta;
  k.shards = operator_layout(m, map, layer, layer_operators()[0]).shards;
  return k;
}

std::vector<GemmJob> layer_gemms(const ModelConfig& m, DType t, const MemoryMap& map,
                                 const std::vector<int64_t>& positions, const std::string& phase, int layer) {
  if (m.moe())
    throw InputError("model: an MoE layer (num_local_experts = " + std::to_string(m.num_local_experts) +
                     ") has no single FFN GEMM (allowed here: a dense model, num_local_experts = 1; an MoE layer's "
                     "runs come from layer_runs with a routing)");
  std::vector<GemmJob> out;
  for (const LayerOperator& op : layer_operators()) out.push_back(layer_operator_gemm(m, t, map, op, positions, phase, layer));
  return out;
}

LayerOperator moe_router_operator() { return {"router", {"mlp.router"}}; }

std::vector<LayerOperator> moe_expert_operators(int e) {
  return {{"gate_up_proj", {expert_tensor("mlp.gate_proj", e), expert_tensor("mlp.up_proj", e)}},
          {"down_proj", {expert_tensor("mlp.down_proj", e)}}};
}

std::vector<std::string> layer_run_names(const ModelConfig& m, const ModelFusion& fusion) {
  std::vector<std::string> out;
  if (!fusion.norm) out.push_back("input_norm");
  out.push_back("qkv_proj");
  if (!fusion.linear_rope) out.push_back("rope");
  out.push_back("o_proj");
  if (!fusion.norm) out.push_back("post_attention_norm");
  if (m.moe()) out.push_back("router");
  out.push_back("gate_up_proj");
  out.push_back("down_proj");
  return out;
}

std::vector<LayerRun> layer_runs(const ModelConfig& m, DType t, const MemoryMap& map, const std::vector<int64_t>& positions,
                                 const std::string& phase, int layer, const Routing* routing, const ModelFusion& fusion) {
  // An expert-parallel chip's routing is over the experts it holds, of the rows it received (every
  // rank's rows routed to them), not of the layer's rows.
  if (m.moe() && (!routing || routing->experts != m.local_experts() ||
                  (m.expert_parallel == 1 && routing->rows() != int(positions.size()))))
    throw std::logic_error("layer_runs: an MoE layer needs the routing of its rows");
  const int rows = int(positions.size());
  std::vector<LayerRun> out;
  auto gemm = [&](const LayerOperator& op) {
    out.push_back({op.name, {layer_operator_gemm(m, t, map, op, positions, phase, layer, fusion)}, {}, {}});
  };
  auto kernel = [&](VectorKernelJob k) {
    const std::string name = k.op;
    out.push_back({name, {}, {}, {std::move(k)}});
  };
  const std::vector<LayerOperator> dense = layer_operators();
  if (!fusion.norm) kernel(norm_kernel(m, t, map, "input_norm", rows, phase, layer));
  gemm(dense[0]);
  if (!fusion.linear_rope) kernel(rope_kernel(m, map, positions, phase, layer));
  gemm(dense[1]);
  if (!fusion.norm) kernel(norm_kernel(m, t, map, "post_attention_norm", rows, phase, layer));
  if (!m.moe()) {
    gemm(dense[2]);
    gemm(dense[3]);
    return out;
  }
  gemm(moe_router_operator());
  LayerRun gate_up{"gate_up_proj", {}, {}, {}}, down{"down_proj", {}, {}, {}};
  const std::vector<int> expert_rows = routing->expert_rows();
  for (int e = 0; e < m.local_experts(); ++e) {
    if (expert_rows[size_t(e)] == 0) continue;
    const std::vector<int64_t> expert_positions(size_t(expert_rows[size_t(e)]), 0);  // no RoPE in the FFN
    const std::vector<LayerOperator> ops = moe_expert_operators(e);
    gate_up.jobs.push_back(layer_operator_gemm(m, t, map, ops[0], expert_positions, phase, layer, fusion));
    down.jobs.push_back(layer_operator_gemm(m, t, map, ops[1], expert_positions, phase, layer, fusion));
    gate_up.experts.push_back(e);
    down.experts.push_back(e);
  }
  out.push_back(std::move(gate_up));
  out.push_back(std::move(down));
  return out;
}

std::vector<GemmJob> layer_gemms(const ModelConfig& m, DType t, const MemoryMap& map, int rows, const std::string& phase,
                                 int layer) {
  std::vector<int64_t> positions(static_cast<size_t>(rows));
  for (int r = 0; r < rows; ++r) positions[size_t(r)] = r;
  return layer_gemms(m, t, map, positions, phase, layer);
}

}  // namespace ahbm
