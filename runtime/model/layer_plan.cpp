#include "runtime/model/layer_plan.h"

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

GemmJob operator_gemm(const ModelConfig& m, DType t, const MemoryMap& map, const LayerOperator& op, int rows,
                      const std::string& phase) {
  const std::vector<WeightTensor> weights = layer_weights(m);
  GemmJob j;
  j.op = op.name;
  j.phase = phase;
  j.m = rows;
  j.dtype = t;
  j.n = 0;
  std::vector<int> columns(size_t(map.pes), 0);
  for (const std::string& name : op.tensors) {
    for (const WeightTensor& w : weights)
      if (w.name == name) {
        j.k = int(w.rows);
        j.n += int(w.cols);
      }
    const std::vector<int>& c = map.layer0_columns.at(name);
    for (size_t p = 0; p < columns.size(); ++p) columns[p] += c[p];
  }
  int next = 0;
  for (int c : columns) {
    j.shards.push_back(c > 0 ? GemmShard{next, c, 0, j.k} : GemmShard{});
    next += c;
  }
  return j;
}

std::vector<GemmJob> layer_gemms(const ModelConfig& m, DType t, const MemoryMap& map, int rows, const std::string& phase) {
  if (m.moe())
    throw InputError("model: the weight GEMMs of an MoE layer (num_local_experts = " + std::to_string(m.num_local_experts) +
                     ") are not simulated yet (allowed: a dense model, num_local_experts = 1)");
  std::vector<GemmJob> out;
  for (const LayerOperator& op : layer_operators()) out.push_back(operator_gemm(m, t, map, op, rows, phase));
  return out;
}

LayerOperatorReport::LayerOperatorReport(const ModelConfig& m, DType t, const MemoryMap& map, const HwConfig& hw,
                                         SimulatorPool& sims, const SimOptions& opt)
    : m_(m), t_(t), map_(map), hw_(hw), sims_(sims), opt_(opt) {
  opt_.vcd = false;
  opt_.progress = nullptr;
  for (const GemmJob& j : layer_gemms(m, t, map, 1, "")) {
    OpTotals o;
    o.name = j.op;
    o.k = j.k;
    o.n = j.n;
    totals_.push_back(o);
  }
}

const std::vector<GemmOpStats>& LayerOperatorReport::simulate(int rows) {
  auto it = by_rows_.find(rows);
  if (it != by_rows_.end()) return it->second;
  std::vector<GemmOpStats> ops;
  // Each operator needs the previous one's Y: one run each.
  for (const GemmJob& j : layer_gemms(m_, t_, map_, rows, ""))
    ops.push_back(sims_.run_gemms(hw_, {j}, opt_).gemms.at(0));
  return by_rows_.emplace(rows, std::move(ops)).first->second;
}

void LayerOperatorReport::add_step(const std::string& label, const std::string& phase, int rows) {
  if (rows <= 0) return;
  const std::vector<GemmOpStats>& ops = simulate(rows);
  Json step = {{"step", label}, {"phase", phase}, {"rows", rows}};
  double total = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    OpTotals& o = totals_[i];
    o.runs += 1;
    o.rows += uint64_t(rows);
    o.time_ns += ops[i].end_ns;
    o.w_bytes_read += ops[i].w_bytes_read;
    o.y_bytes_written += ops[i].y_bytes_written;
    o.x_bytes_read += ops[i].x_bytes_read;
    o.macs += ops[i].macs;
    o.gemm_busy_ns += ops[i].gemm_busy_ns;
    o.dma_busy_ns += ops[i].dma_busy_ns;
    step[o.name + "_ns"] = ops[i].end_ns;
    total += ops[i].end_ns;
  }
  step["layer_gemms_ns"] = total;
  steps_.push_back(step);
}

Json LayerOperatorReport::json() const {
  Json ops = Json::array();
  for (const OpTotals& o : totals_)
    ops.push_back({{"name", o.name},
                   {"k", o.k},
                   {"n", o.n},
                   {"steps", o.runs},
                   {"rows", o.rows},
                   {"time_ns", o.time_ns},
                   {"w_bytes_read", o.w_bytes_read},
                   {"y_bytes_written", o.y_bytes_written},
                   {"x_bytes_read", o.x_bytes_read},
                   {"macs", o.macs},
                   {"gemm_busy_ns", o.gemm_busy_ns},
                   {"dma_busy_ns", o.dma_busy_ns}});
  return {{"mapping", "w_stationary"},
          {"layers_simulated", 1},
          {"scope", "the weight GEMMs of one decoder layer per step, simulated beside the step's attention (not on its timeline)"},
          {"by_operator", ops},
          {"by_step", steps_}};
}

}  // namespace ahbm
