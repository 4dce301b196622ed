#include "runtime/model/model_steps.h"

namespace ahbm {

namespace {

int step_rows(const Step& step) {
  int rows = 0;
  for (const StepAgent& a : step.agents) rows += a.new_tokens;
  return rows;
}

void add_counters(GemmOpStats& into, const GemmOpStats& s) {
  into.end_ns += s.end_ns;
  into.w_bytes_read += s.w_bytes_read;
  into.y_bytes_written += s.y_bytes_written;
  into.x_bytes_read += s.x_bytes_read;
  into.macs += s.macs;
  into.gemm_tiles += s.gemm_tiles;
  into.gemm_busy_ns += s.gemm_busy_ns;
  into.dma_busy_ns += s.dma_busy_ns;
  into.norm_busy_ns += s.norm_busy_ns;
  into.rope_busy_ns += s.rope_busy_ns;
  into.act_busy_ns += s.act_busy_ns;
  into.residual_busy_ns += s.residual_busy_ns;
  into.vector_ops += s.vector_ops;
  into.residual_bytes_read += s.residual_bytes_read;
}

}  // namespace

ModelSteps::ModelSteps(const ModelConfig& m, DType t, const MemoryMap& map, const HwConfig& hw, SimulatorPool& sims,
                       const SimOptions& opt, bool every_layer)
    : m_(m), t_(t), map_(map), hw_(hw), sims_(sims), opt_(opt), layer_ns_(size_t(m.num_hidden_layers), 0.0) {
  opt_.vcd = false;
  opt_.progress = nullptr;
  // Layers with the same shards for every operator run the same jobs.
  std::vector<std::vector<std::vector<GemmShard>>> shards;  // per layer, per operator
  for (int l = 0; l < m.num_hidden_layers; ++l) {
    std::vector<std::vector<GemmShard>> ops;
    for (const GemmJob& j : layer_gemms(m, t, map, 1, "", l)) ops.push_back(j.shards);
    int rep = l;
    if (!every_layer)
      for (int e = 0; e < l && rep == l; ++e)
        if (rep_[size_t(e)] == e && shards[size_t(e)] == ops) rep = e;
    rep_.push_back(rep);
    shards.push_back(std::move(ops));
  }
  for (const GemmJob& j : layer_gemms(m, t, map, 1, "")) {
    OpTotals o;
    o.name = j.op;
    o.k = j.k;
    o.n = j.n;
    o.sum.op = j.op;
    totals_.push_back(o);
  }
}

const std::vector<GemmOpStats>& ModelSteps::simulate(int rows, int layer) {
  const std::pair<int, int> key{rows, rep_[size_t(layer)]};
  auto it = runs_.find(key);
  if (it != runs_.end()) return it->second;
  std::vector<GemmOpStats> ops;
  // Each operator needs the previous one's Y: one run each. Timing does not depend on the rows'
  // positions (RoPE's angles), only on their count.
  for (const GemmJob& j : layer_gemms(m_, t_, map_, rows, "", key.second))
    ops.push_back(sims_.run_gemms(hw_, {j}, opt_).gemms.at(0));
  return runs_.emplace(key, std::move(ops)).first->second;
}

void ModelSteps::place(Timeline& tl, const std::string& component, double ns, const Step& step, int rows, int layer) {
  const sc_core::sc_time start = tl.advance(ns);
  SpanRecorder& spans = tl.spans();
  spans.record(start, tl.now(), spans.intern(component), spans.intern("layer" + std::to_string(layer)),
               spans.intern(phase_name(step.phase)), spans.intern("*"), rows, 0);
  layer_ns_[size_t(layer)] += ns;
}

void ModelSteps::before_attention(const Step& step, Timeline& tl) {
  const int rows = step_rows(step);
  if (rows > 0) place(tl, "runtime.layer.qkv_proj", simulate(rows, 0)[0].end_ns, step, rows, 0);
}

Json ModelSteps::after_attention(const Step& step, Timeline& tl, double attention_ns) {
  const int rows = step_rows(step);
  Json j = {{"rows", rows}, {"attention_ns", attention_ns}};
  if (rows <= 0) return j;
  // Layer 0's attention was placed by the step itself; count it with the layer.
  layer_ns_[0] += attention_ns;
  attention_ns_ += attention_ns;
  std::vector<double> op_ns(totals_.size(), 0.0);
  uint64_t w_bytes = 0;
  for (int l = 0; l < m_.num_hidden_layers; ++l) {
    const std::vector<GemmOpStats>& ops = simulate(rows, l);
    // Layer 0's qkv_proj and attention are placed already (before_attention, the step itself).
    if (l > 0) {
      place(tl, "runtime.layer." + ops[0].op, ops[0].end_ns, step, rows, l);
      place(tl, "runtime.layer.attention", attention_ns, step, rows, l);
      attention_ns_ += attention_ns;
    }
    for (size_t i = 1; i < ops.size(); ++i) place(tl, "runtime.layer." + ops[i].op, ops[i].end_ns, step, rows, l);
    for (size_t i = 0; i < ops.size(); ++i) {
      op_ns[i] += ops[i].end_ns;
      w_bytes += ops[i].w_bytes_read;
      add_counters(totals_[i].sum, ops[i]);
      totals_[i].runs += 1;
      totals_[i].rows += uint64_t(rows);
    }
  }
  Json s = {{"step", step.label()}, {"phase", phase_name(step.phase)}, {"rows", rows}};
  double ops_total = 0;
  for (size_t i = 0; i < totals_.size(); ++i) {
    s[totals_[i].name + "_ns"] = op_ns[i];
    j[totals_[i].name + "_ns"] = op_ns[i];
    ops_total += op_ns[i];
  }
  const double attention_all = attention_ns * m_.num_hidden_layers;
  s["w_bytes_read"] = w_bytes;
  j["w_bytes_read"] = w_bytes;
  s["operators_ns"] = ops_total;
  s["attention_ns"] = attention_all;
  s["ns"] = ops_total + attention_all;
  j["operators_ns"] = ops_total;
  j["attention_ns"] = attention_all;
  steps_.push_back(s);
  return j;
}

double ModelSteps::step_ns(const Step& step, double attention_ns) {
  const int rows = step_rows(step);
  double ns = 0;
  for (int l = 0; l < m_.num_hidden_layers; ++l) {
    ns += attention_ns;
    if (rows > 0)
      for (const GemmOpStats& op : simulate(rows, l)) ns += op.end_ns;
  }
  return ns;
}

EnergyReading ModelSteps::operators_energy(const Step& step) {
  EnergyReading e;
  const int rows = step_rows(step);
  if (rows <= 0) return e;
  for (int l = 0; l < m_.num_hidden_layers; ++l)
    for (const GemmOpStats& op : simulate(rows, l)) e.add("layer." + op.op, dynamic_energy(gemm_activity(op), hw_.energy, t_));
  return e;
}

Json ModelSteps::json() const {
  Json ops = Json::array();
  for (const OpTotals& o : totals_) {
    const GemmOpStats& s = o.sum;
    ops.push_back({{"name", o.name},
                   {"k", o.k},
                   {"n", o.n},
                   {"runs", o.runs},
                   {"rows", o.rows},
                   {"time_ns", s.end_ns},
                   {"w_bytes_read", s.w_bytes_read},
                   {"y_bytes_written", s.y_bytes_written},
                   {"x_bytes_read", s.x_bytes_read},
                   {"residual_bytes_read", s.residual_bytes_read},
                   {"macs", s.macs},
                   {"gemm_busy_ns", s.gemm_busy_ns},
                   {"dma_busy_ns", s.dma_busy_ns},
                   {"vector_ops", s.vector_ops},
                   {"vector_busy_ns", {{"rms_norm", s.norm_busy_ns},
                                       {"rope", s.rope_busy_ns},
                                       {"act", s.act_busy_ns},
                                       {"residual", s.residual_busy_ns}}}});
  }
  std::vector<int> simulated;
  for (size_t l = 0; l < rep_.size(); ++l)
    if (rep_[l] == int(l)) simulated.push_back(int(l));
  Json layers = Json::array();
  for (size_t l = 0; l < layer_ns_.size(); ++l)
    layers.push_back({{"layer", l}, {"ns", layer_ns_[l]}, {"runs_operators_of_layer", rep_[l]}});
  return {{"mapping", "w_stationary"},
          {"layers", m_.num_hidden_layers},
          {"layers_simulated", simulated},
          {"scope", "every step runs every layer: qkv_proj (input RMSNorm, RoPE fused), attention, o_proj (+ residual), "
                    "gate_up_proj (post-attention RMSNorm, activation fused), down_proj (+ residual); the final norm and "
                    "LM head are not modelled"},
          {"attention_ns", attention_ns_},
          {"by_operator", ops},
          {"by_layer", layers},
          {"by_step", steps_}};
}

}  // namespace ahbm
