#include "runtime/model/layer_plan.h"

#include <stdexcept>

#include "hw/common/error.h"

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

GemmJob layer_operator_gemm(const ModelConfig& m, DType t, const MemoryMap& map, const LayerOperator& op,
                   const std::vector<int64_t>& positions, const std::string& phase, int layer) {
  GemmJob j = operator_gemm(m, t, map, op, int(positions.size()), phase, layer);
  GemmFusion& f = j.fused;
  if (op.name == "qkv_proj" || op.name == "gate_up_proj" || op.name == "router") {
    f.rms_norm = true;
    f.rms_eps = m.rms_norm_eps;
  }
  if (op.name == "qkv_proj") {
    // RoPE on the q and k columns (tensors 0 and 1): the column's dimension in its head.
    const OperatorLayout lay = operator_layout(m, map, layer, op);
    f.rope_col.resize(size_t(j.n));
    for (size_t c = 0; c < f.rope_col.size(); ++c) f.rope_col[c] = lay.tensor[c] < 2 ? lay.column[c] % m.head_dim : -1;
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

std::vector<std::string> layer_run_names(const ModelConfig& m) {
  if (m.moe()) return {"qkv_proj", "o_proj", "router", "gate_up_proj", "down_proj"};
  std::vector<std::string> out;
  for (const LayerOperator& op : layer_operators()) out.push_back(op.name);
  return out;
}

std::vector<LayerRun> layer_runs(const ModelConfig& m, DType t, const MemoryMap& map, const std::vector<int64_t>& positions,
                                 const std::string& phase, int layer, const Routing* routing) {
  std::vector<LayerRun> out;
  if (!m.moe()) {
    for (GemmJob& j : layer_gemms(m, t, map, positions, phase, layer)) {
      LayerRun r;
      r.op = j.op;
      r.jobs.push_back(std::move(j));
      out.push_back(std::move(r));
    }
    return out;
  }
  if (!routing || routing->experts != m.num_local_experts || routing->rows() != int(positions.size()))
    throw std::logic_error("layer_runs: an MoE layer needs the routing of its rows");
  const std::vector<LayerOperator> dense = layer_operators();
  for (const LayerOperator& op : {dense[0], dense[1], moe_router_operator()})
    out.push_back({op.name, {layer_operator_gemm(m, t, map, op, positions, phase, layer)}, {}});
  LayerRun gate_up{"gate_up_proj", {}, {}}, down{"down_proj", {}, {}};
  const std::vector<int> rows = routing->expert_rows();
  for (int e = 0; e < m.num_local_experts; ++e) {
    if (rows[size_t(e)] == 0) continue;
    const std::vector<int64_t> expert_positions(size_t(rows[size_t(e)]), 0);  // no RoPE in the FFN
    const std::vector<LayerOperator> ops = moe_expert_operators(e);
    gate_up.jobs.push_back(layer_operator_gemm(m, t, map, ops[0], expert_positions, phase, layer));
    down.jobs.push_back(layer_operator_gemm(m, t, map, ops[1], expert_positions, phase, layer));
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
