#include "runtime/step/model_steps.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>

namespace ahbm {

namespace {

int step_rows(const Step& step) {
  int rows = 0;
  for (const StepAgent& a : step.agents) rows += a.new_tokens;
  return rows;
}

// Rows of the final norm and LM head: every agent of a step with new rows emits one token, from
// its last row (a decode step's one row; a prefill's, fan-out branch's or join's last new token).
int logit_rows(const Step& step) {
  int rows = 0;
  for (const StepAgent& a : step.agents) rows += a.new_tokens > 0;
  return rows;
}

// Every counter of a run's stats, pairwise with another's, through f(into's, s's): the one list
// of the fields that summing runs (add_counters) and interpolating them (lerp_counters) share.
template <class F>
void each_counter(GemmOpStats& into, const GemmOpStats& s, F f) {
  f(into.end_ns, s.end_ns);
  f(into.w_bytes_read, s.w_bytes_read);
  f(into.y_bytes_written, s.y_bytes_written);
  f(into.x_bytes_read, s.x_bytes_read);
  f(into.macs, s.macs);
  f(into.gemm_tiles, s.gemm_tiles);
  f(into.gemm_busy_ns, s.gemm_busy_ns);
  f(into.dma_busy_ns, s.dma_busy_ns);
  f(into.norm_busy_ns, s.norm_busy_ns);
  f(into.rope_busy_ns, s.rope_busy_ns);
  f(into.act_busy_ns, s.act_busy_ns);
  f(into.residual_busy_ns, s.residual_busy_ns);
  f(into.vector_ops, s.vector_ops);
  f(into.residual_bytes_read, s.residual_bytes_read);
  f(into.x_link_bytes, s.x_link_bytes);
  f(into.w_multicast_bytes, s.w_multicast_bytes);
  f(into.y_gather_bytes, s.y_gather_bytes);
  f(into.x_hbm_bytes_read, s.x_hbm_bytes_read);
  f(into.w_noc_delivered_bytes, s.w_noc_delivered_bytes);
  f(into.x_noc_delivered_bytes, s.x_noc_delivered_bytes);
  f(into.k_reduce_bytes, s.k_reduce_bytes);
  f(into.k_reduce_busy_ns, s.k_reduce_busy_ns);
  f(into.w_tiles_streamed, s.w_tiles_streamed);
  f(into.w_slot_wait_ns, s.w_slot_wait_ns);
  f(into.kernel_bytes_read, s.kernel_bytes_read);
  f(into.launch_ns, s.launch_ns);
}

void add_counters(GemmOpStats& into, const GemmOpStats& s) {
  each_counter(into, s, [](auto& a, const auto& b) { a += b; });
}

// into + t (s - into), every counter (the integer ones rounded), per-PE end times included.
void lerp_counters(GemmOpStats& into, const GemmOpStats& s, double t) {
  each_counter(into, s, [t](auto& a, const auto& b) {
    using T = std::decay_t<decltype(a)>;
    if constexpr (std::is_integral_v<T>)
      a = T(std::llround(double(a) + t * (double(b) - double(a))));
    else
      a += t * (b - a);
  });
  if (into.pe_end_ns.size() == s.pe_end_ns.size())
    for (size_t i = 0; i < s.pe_end_ns.size(); ++i) into.pe_end_ns[i] += t * (s.pe_end_ns[i] - into.pe_end_ns[i]);
}

// The token rows of a step in order (each agent's new tokens): their sequences and positions.
std::vector<TokenId> step_tokens(const Step& step) {
  std::vector<TokenId> out;
  for (const StepAgent& a : step.agents)
    for (int r = 0; r < a.new_tokens; ++r) out.push_back({a.seq, int64_t(a.length) - a.new_tokens + r});
  return out;
}

// A routing that gives every expert one row: the runs that read every expert's shards.
Routing every_expert_once(int experts) {
  Routing r;
  r.experts = experts;
  r.top_k = 1;
  for (int e = 0; e < experts; ++e) r.expert.push_back(e), r.weight.push_back(1.0f);
  return r;
}

}  // namespace

ModelSteps::ModelSteps(const ModelConfig& m, DType t, const MemoryMap& map, const HwConfig& hw, SimulatorPool& sims,
                       const SimOptions& opt, bool every_layer, uint64_t seed, GemmMapping mapping,
                       const ModelFusion& fusion, SplitCollectives split, int layers)
    : m_(m), t_(t), map_(map), hw_(hw), sims_(sims), opt_(opt), seed_(seed), mapping_(mapping), fusion_(fusion),
      expert_rows_(size_t(m.moe() ? m.num_local_experts : 0), 0), split_(std::move(split)) {
  opt_.vcd = false;
  opt_.progress = nullptr;
  opt_.keep_spans = false;  // the operators' runs give their counters; model_steps places their spans itself
  // The whole model's layers over the pipeline stages; each stage's chip runs m's first layers.
  if (split_.split.pp > 1 && layers < split_.split.pp)
    throw std::logic_error("ModelSteps: " + std::to_string(split_.split.pp) + " stages need the whole model's layers");
  const std::vector<int> stages =
      split_.split.pp == 1 ? std::vector<int>{m.num_hidden_layers} : pipeline_stage_layers(layers, split_.split.pp);
  for (size_t st = 0; st < stages.size(); ++st) {
    if (stages[st] > m.num_hidden_layers)
      throw std::logic_error("ModelSteps: stage " + std::to_string(st) + " has more layers than the chip's model");
    stage_first_.push_back(int(stage_of_.size()));
    for (int l = 0; l < stages[st]; ++l) stage_of_.push_back(int(st)), local_.push_back(l);
  }
  layer_ns_.assign(stage_of_.size(), 0.0);
  pp_totals_.busy_ns.assign(stages.size(), 0.0);
  // Layers with the same shards for every operator (every expert's) run the same jobs.
  const Routing all = every_expert_once(m.local_experts());  // the experts the chip holds
  const std::vector<int64_t> one_each(size_t(m.local_experts()), 0);
  std::vector<std::vector<std::vector<GemmShard>>> shards;  // per layer, per job of its runs
  for (int l = 0; l < m.num_hidden_layers; ++l) {
    std::vector<std::vector<GemmShard>> ops;
    for (const LayerRun& run : layer_runs(m, t, map, one_each, "", l, &all))
      for (const GemmJob& j : run.jobs) ops.push_back(j.shards);
    int rep = l;
    if (!every_layer)
      for (int e = 0; e < l && rep == l; ++e)
        if (rep_[size_t(e)] == e && shards[size_t(e)] == ops) rep = e;
    rep_.push_back(rep);
    shards.push_back(std::move(ops));
  }
  // One entry per run (an MoE run's first expert: K, N of every expert), then the head's runs
  // (once per step, not per layer).
  std::vector<LayerRun> runs = layer_runs(m, t, map, one_each, "", 0, &all, fusion);
  layer_ops_ = runs.size();
  before_attention_ = size_t(std::find_if(runs.begin(), runs.end(), [](const LayerRun& r) { return r.op == "o_proj"; }) -
                             runs.begin());
  if (!fusion.norm) runs.push_back({"final_norm", {}, {}, {norm_kernel(m, t, map, "final_norm", 1, "", m.num_hidden_layers - 1)}});
  runs.push_back({"lm_head", {lm_head_gemm(m, t, map, 1, "")}, {}, {}});
  for (const LayerRun& r : runs) {
    OpTotals o;
    o.name = r.op;
    o.kernel = r.kernel();
    o.k = r.kernel() ? 0 : r.jobs.front().k;
    o.n = r.kernel() ? r.kernels.front().n : r.jobs.front().n;
    o.sum.op = r.op;
    totals_.push_back(o);
  }
}

Routing ModelSteps::routing(const Step& step, int layer) const {
  const std::vector<TokenId> tokens = step_tokens(step);
  const std::vector<float> logits = seeded_router_logits(seed_, layer, tokens, m_.num_local_experts);
  return route(logits.data(), int(tokens.size()), m_.num_local_experts, m_.num_experts_per_tok);
}

GemmOpStats ModelSteps::run(const LayerRun& run) {
  if (run.kernel()) return sims_.run_vector_kernels(hw_, run.kernels, opt_).kernels.at(0);
  if (run.jobs.empty()) {  // an expert-parallel rank none of whose experts got a row: nothing runs
    GemmOpStats none;
    none.op = run.op;
    return none;
  }
  std::vector<GemmJob> jobs = run.jobs;
  for (GemmJob& j : jobs) j.mapping = mapping_;
  const SimResult res = sims_.run_gemms(hw_, jobs, opt_);
  if (jobs.size() == 1) return res.gemms.at(0);
  GemmOpStats sum;
  sum.op = run.op;
  for (const GemmOpStats& g : res.gemms) add_counters(sum, g);
  sum.end_ns = 0;  // the run ends with its last expert's job, not at the sum of theirs
  for (const GemmOpStats& g : res.gemms) sum.end_ns = std::max(sum.end_ns, g.end_ns);
  return sum;
}

const std::vector<GemmOpStats>& ModelSteps::head(int rows) {
  auto it = heads_.find(rows);
  if (it != heads_.end()) return it->second;
  std::vector<GemmOpStats> out;
  if (!fusion_.norm)
    out.push_back(run({"final_norm", {}, {}, {norm_kernel(m_, t_, map_, "final_norm", rows, "", m_.num_hidden_layers - 1)}}));
  GemmJob lm = lm_head_gemm(m_, t_, map_, rows, "");
  lm.fused.rms_norm = fusion_.norm;  // unfused: the final_norm kernel above normed the rows
  out.push_back(run({"lm_head", {std::move(lm)}, {}, {}}));
  return heads_.emplace(rows, std::move(out)).first->second;
}

// Each operator needs the previous one's Y: one run each (an MoE run: every expert's job, one
// after another on the PEs). Timing does not depend on the rows' positions (RoPE's angles) or
// which rows an expert gets, only on their counts.
ModelSteps::LayerStats ModelSteps::run_layer(int rows, int rep, const Routing* r) {
  LayerStats out;
  const std::vector<int64_t> positions(size_t(rows), 0);
  for (const LayerRun& lr : layer_runs(m_, t_, map_, positions, "", rep, r, fusion_)) out.ops.push_back(run(lr));
  return out;
}

int ModelSteps::grid_spacing(int rows) const {
  if (grid_.per_octave <= 0 || rows <= grid_.exact_up_to) return 0;
  int octave = 1;  // the largest power of two <= rows
  while (octave <= rows / 2) octave *= 2;
  const int spacing = std::max(1, octave / grid_.per_octave);
  return rows % spacing == 0 ? 0 : spacing;
}

// A dense layer's runs for `rows` rows: simulated, or (sampled serving's operator grid) the
// linear interpolation of the two grid points around `rows`, each simulated; a systematic
// sample of the interpolated row counts (period `check_period`, doubling every 8) is simulated
// as well and the interpolation's error of the layer's time recorded (the simulated runs are
// then the ones used).
const ModelSteps::LayerStats& ModelSteps::dense(int rows, int rep) {
  const RunKey key{rows, rep, {}};
  auto it = runs_.find(key);
  if (it != runs_.end()) return it->second;
  const int spacing = grid_spacing(rows);
  if (spacing == 0) {
    ++grid_stats_.simulated;
    return runs_.emplace(key, run_layer(rows, rep, nullptr)).first->second;
  }
  const int lo = rows / spacing * spacing, hi = lo + spacing;
  LayerStats out = dense(lo, rep);
  const LayerStats& upper = dense(hi, rep);  // std::map: `out`'s source stays valid
  const double t = double(rows - lo) / double(spacing);
  for (size_t i = 0; i < out.ops.size(); ++i) lerp_counters(out.ops[i], upper.ops[i], t);
  ++grid_stats_.interpolated;
  if (grid_.check_period > 0 && grid_stats_.interpolated == next_check_) {
    // A systematic sample whose period doubles every 8 checks: the checks' cost stays
    // logarithmic in the row counts a long run meets (each one a layer's simulation).
    ++checks_;
    next_check_ += uint64_t(grid_.check_period) << std::min<uint64_t>(checks_ / 8, 40);
    LayerStats exact = run_layer(rows, rep, nullptr);
    ++grid_stats_.simulated;
    const auto layer_ns = [](const LayerStats& l) {
      double ns = 0;
      for (const GemmOpStats& op : l.ops) ns += op.end_ns;
      return ns;
    };
    grid_stats_.checks.emplace_back(layer_ns(out), layer_ns(exact));
    out = std::move(exact);
  }
  return runs_.emplace(key, std::move(out)).first->second;
}

const ModelSteps::LayerStats& ModelSteps::simulate(const Step& step, int layer) {
  const int rows = step_rows(step);
  if (!m_.moe()) return dense(rows, rep_[size_t(local_[size_t(layer)])]);
  const Routing r = routing(step, layer);
  const RunKey key{rows, rep_[size_t(local_[size_t(layer)])], r.expert_rows()};
  auto it = runs_.find(key);
  if (it != runs_.end()) return it->second;
  if (!expert_parallel()) {
    LayerStats out = run_layer(rows, std::get<1>(key), &r);
    out.expert_rows = std::get<2>(key);
    return runs_.emplace(key, std::move(out)).first->second;
  }
  LayerStats out;
  out.expert_rows = std::get<2>(key);
  const std::vector<int64_t> positions(size_t(rows), 0);
  // Expert parallelism: the runs before the experts are every rank's alike (rank 0's simulated);
  // each rank's experts run on its own chip for the rows the router sent them (the chip holds
  // experts 0 .. E/ep - 1 of the same shapes, so rank k's are its experts' row counts there), and
  // the combine waits for the slowest: its runs are the layer's.
  const int per = m_.local_experts();
  double slowest = -1;
  for (int k = 0; k < split_.split.ep; ++k) {
    const std::vector<int> counts(out.expert_rows.begin() + k * per, out.expert_rows.begin() + (k + 1) * per);
    const int received = std::accumulate(counts.begin(), counts.end(), 0);
    const std::pair<int, std::vector<int>> rank_key{std::get<1>(key), counts};
    auto done = rank_experts_.find(rank_key);
    if (done == rank_experts_.end() || k == 0) {
      Routing local;  // the rows it received, in expert order (timing reads only the counts)
      local.experts = per;
      local.top_k = 1;
      for (int e = 0; e < per; ++e)
        for (int i = 0; i < counts[size_t(e)]; ++i) local.expert.push_back(e), local.weight.push_back(1.0f);
      const std::vector<LayerRun> runs = layer_runs(m_, t_, map_, positions, "", std::get<1>(key), &local, fusion_);
      const size_t experts_at = runs.size() - 2;  // gate_up_proj, down_proj last
      if (k == 0)
        for (size_t i = 0; i < experts_at; ++i) out.ops.push_back(run(runs[i]));
      if (done == rank_experts_.end())
        done = rank_experts_.emplace(rank_key, std::make_pair(run(runs[experts_at]), run(runs[experts_at + 1]))).first;
    }
    const double ns = done->second.first.end_ns + done->second.second.end_ns;
    if (ns > slowest) {
      slowest = ns;
      out.rank = k;
      out.rank_rows = received;
    }
  }
  const auto& experts = rank_experts_.at({std::get<1>(key), std::vector<int>(out.expert_rows.begin() + out.rank * per,
                                                                             out.expert_rows.begin() + (out.rank + 1) * per)});
  out.ops.push_back(experts.first);
  out.ops.push_back(experts.second);
  return runs_.emplace(key, std::move(out)).first->second;
}

uint64_t ModelSteps::rows_bytes(int rows) const {
  return uint64_t(rows) * uint64_t(m_.hidden_size) * dtype_bytes(t_);
}

uint64_t ModelSteps::logits_bytes(int logit_rows) const {
  // Every rank's logits of its vocabulary rows (the shard's vocab_size each), gathered on every rank.
  return uint64_t(logit_rows) * uint64_t(m_.vocab_size) * uint64_t(split_.split.tp) * dtype_bytes(t_);
}

double ModelSteps::all_reduce_ns(int rows, int stage) {
  if (split_.split.tp == 1 || rows <= 0) return 0;
  return split_.all_reduce_ns(stage, rows_bytes(rows));
}

double ModelSteps::logits_gather_ns(int logit_rows) {
  if (split_.split.tp == 1 || logit_rows <= 0) return 0;
  return split_.all_gather_ns(split_.split.pp - 1, logits_bytes(logit_rows));
}

double ModelSteps::send_ns(int rows, int stage) {
  if (split_.split.pp == 1 || rows <= 0) return 0;
  return split_.send_ns(stage, rows_bytes(rows));
}

uint64_t ModelSteps::ep_all_to_all_bytes(int rows) const {
  const uint64_t slice = (uint64_t(rows) + uint64_t(split_.split.ep) - 1) / uint64_t(split_.split.ep);
  return slice * uint64_t(m_.num_experts_per_tok) * uint64_t(m_.hidden_size) * dtype_bytes(t_);
}

uint64_t ModelSteps::ep_gather_bytes(int rows) const {
  const uint64_t ep = uint64_t(split_.split.ep), slice = (uint64_t(rows) + ep - 1) / ep;
  return slice * ep * uint64_t(m_.hidden_size) * dtype_bytes(t_);
}

double ModelSteps::ep_all_to_all_ns(int rows, int stage) {
  if (!expert_parallel() || rows <= 0) return 0;
  return split_.all_to_all_ns(stage, ep_all_to_all_bytes(rows));
}

double ModelSteps::ep_gather_ns(int rows, int stage) {
  if (!expert_parallel() || rows <= 0) return 0;
  return split_.all_gather_ns(stage, ep_gather_bytes(rows));
}

void NetworkUse::add(const NetworkUse& u) {
  for (const auto& [name, l] : u.links) {
    Link& to = links[name];
    to.bytes += l.bytes;
    to.busy_ns += l.busy_ns;
  }
  energy_pj += u.energy_pj;
}

void ModelSteps::count_use(CollectiveKind kind, int stage, uint64_t bytes) {
  if (split_.use) network_.add(split_.use(kind, stage, bytes));
}

bool ModelSteps::sends_after(int layer) const {
  const int st = stage_of_[size_t(layer)];
  return st + 1 < int(stage_first_.size()) && layer + 1 == stage_first_[size_t(st) + 1];
}

void ModelSteps::place(Timeline& tl, const std::string& component, double ns, const Step& step, int rows, int layer) {
  mark(tl, component, tl.advance(ns), step, rows, layer);
}

void ModelSteps::mark(Timeline& tl, const std::string& component, const sc_core::sc_time& start, const Step& step,
                      int rows, int layer) {
  SpanRecorder& spans = tl.spans();
  spans.record(start, tl.now(), spans.intern(component), spans.intern(layer < 0 ? "head" : "layer" + std::to_string(layer)),
               spans.intern(phase_name(step.phase)), spans.intern("*"), rows, 0);
}

void ModelSteps::before_attention(const Step& step, Timeline& tl) {
  const int rows = step_rows(step);
  if (rows <= 0) return;
  const std::vector<GemmOpStats>& ops = simulate(step, 0).ops;
  for (size_t i = 0; i < before_attention_; ++i) place(tl, "runtime.layer." + ops[i].op, ops[i].end_ns, step, rows, 0);
}

Json ModelSteps::after_attention(const Step& step, Timeline& tl, double attention_ns) {
  const int rows = step_rows(step);
  Json j = {{"rows", rows}, {"attention_ns", attention_ns}};
  if (rows <= 0) return j;
  // Layer 0's attention was placed by the step itself (its hardware spans, just before now());
  // mark it on the operator track so the track has every layer's.
  mark(tl, "runtime.layer.attention", tl.now() - sc_core::sc_time(attention_ns, sc_core::SC_NS), step, rows, 0);
  for (int l = 0; l < layers(); ++l) {
    const std::vector<GemmOpStats>& ops = simulate(step, l).ops;
    // Layer 0's runs before attention (qkv_proj, the unfused norm and RoPE kernels) and its
    // attention are placed already (before_attention, the step itself).
    if (l > 0) {
      for (size_t i = 0; i < before_attention_; ++i) place(tl, "runtime.layer." + ops[i].op, ops[i].end_ns, step, rows, l);
      place(tl, "runtime.layer.attention", attention_ns, step, rows, l);
    }
    const int stage = stage_of_[size_t(l)];
    for (size_t i = before_attention_; i < ops.size(); ++i) {
      place(tl, "runtime.layer." + ops[i].op, ops[i].end_ns, step, rows, l);
      if (is_tp_point(ops[i].op)) place(tl, "runtime.layer.tp_all_reduce", all_reduce_ns(rows, stage), step, rows, l);
      if (is_ep_dispatch(ops[i].op)) place(tl, "runtime.layer.ep_dispatch", ep_all_to_all_ns(rows, stage), step, rows, l);
      if (is_ep_combine(ops[i].op)) {
        place(tl, "runtime.layer.ep_combine", ep_all_to_all_ns(rows, stage), step, rows, l);
        place(tl, "runtime.layer.ep_all_gather", ep_gather_ns(rows, stage), step, rows, l);
      }
    }
    if (sends_after(l)) place(tl, "runtime.pp_send", send_ns(rows, stage), step, rows, l);
  }
  const StepOps c = count(step, rows, attention_ns);
  // The final norm and LM head on the last row of each agent, after the last layer.
  const std::vector<GemmOpStats>& head_ops = head(c.logits);
  for (size_t i = 0; i < head_ops.size(); ++i) place(tl, "runtime." + head_ops[i].op, head_ops[i].end_ns, step, c.logits, -1);
  if (split_.split.tp > 1) place(tl, "runtime.tp_logits_all_gather", logits_gather_ns(c.logits), step, c.logits, -1);
  j["lm_head_rows"] = c.logits;
  Json s = {{"step", step.label()}, {"phase", phase_name(step.phase)}, {"rows", rows}};
  double ops_total = 0;
  for (size_t i = 0; i < totals_.size(); ++i) {
    s[totals_[i].name + "_ns"] = c.op_ns[i];
    j[totals_[i].name + "_ns"] = c.op_ns[i];
    ops_total += c.op_ns[i];
  }
  const double attention_all = attention_ns * layers();
  s["w_bytes_read"] = c.w_bytes;
  j["w_bytes_read"] = c.w_bytes;
  if (m_.moe()) {
    s["expert_rows"] = c.expert_rows;
    j["expert_rows"] = c.expert_rows;
  }
  s["operators_ns"] = ops_total;
  s["attention_ns"] = attention_all;
  s["ns"] = ops_total + attention_all + c.tp_ns + c.pp_ns + c.ep_a2a_ns + c.ep_gather_ns;
  j["operators_ns"] = ops_total;
  j["attention_ns"] = attention_all;
  if (split_.split.tp > 1) {
    s["tp_collectives_ns"] = c.tp_ns;
    j["tp_collectives_ns"] = c.tp_ns;
  }
  if (split_.split.pp > 1) {
    s["pp_send_ns"] = c.pp_ns;
    j["pp_send_ns"] = c.pp_ns;
  }
  if (expert_parallel()) {
    for (Json* o : {&s, &j}) {
      (*o)["ep_all_to_all_ns"] = c.ep_a2a_ns;
      (*o)["ep_all_gather_ns"] = c.ep_gather_ns;
    }
  }
  steps_.push_back(s);
  return j;
}

ModelSteps::StepOps ModelSteps::count(const Step& step, int rows, double attention_ns) {
  StepOps c;
  c.op_ns.assign(totals_.size(), 0.0);
  c.expert_rows.assign(expert_rows_.size(), 0);
  double step_total = 0;  // the step's time: every layer, the sends between stages, the head
  for (int l = 0; l < layers(); ++l) {
    const LayerStats& layer = simulate(step, l);
    const std::vector<GemmOpStats>& ops = layer.ops;
    const int stage = stage_of_[size_t(l)];
    for (size_t e = 0; e < layer.expert_rows.size(); ++e) c.expert_rows[e] += layer.expert_rows[e];
    // The layer's time in the order it runs: the runs before attention (qkv_proj, the unfused
    // norm and RoPE kernels), attention, the rest.
    attention_ns_ += attention_ns;
    // Each term into the layer's running total in this order (a sum's rounding follows it).
    const auto add = [&](double t) {
      layer_ns_[size_t(l)] += t;
      pp_totals_.busy_ns[size_t(stage)] += t;
      step_total += t;
    };
    for (size_t i = 0; i < before_attention_; ++i) add(ops[i].end_ns);
    add(attention_ns);
    for (size_t i = before_attention_; i < ops.size(); ++i) {
      add(ops[i].end_ns);
      // Expert parallelism's collectives: into the layer's time, the step's share and the totals.
      const auto ep_collective = [&](CollectiveKind kind, double ns, uint64_t bytes, double& share, Tally& tally) {
        add(ns);
        share += ns;
        count_use(kind, stage, bytes);
        tally.calls += 1;
        tally.bytes += bytes;
        tally.ns += ns;
      };
      if (is_ep_dispatch(ops[i].op) || is_ep_combine(ops[i].op))
        ep_collective(CollectiveKind::all_to_all, ep_all_to_all_ns(rows, stage), ep_all_to_all_bytes(rows), c.ep_a2a_ns,
                      ep_totals_.all_to_all);
      if (is_ep_combine(ops[i].op))
        ep_collective(CollectiveKind::all_gather, ep_gather_ns(rows, stage), ep_gather_bytes(rows), c.ep_gather_ns,
                      ep_totals_.all_gather);
      if (!is_tp_point(ops[i].op)) continue;
      const double ar = all_reduce_ns(rows, stage);
      add(ar);
      c.tp_ns += ar;
      count_use(CollectiveKind::all_reduce, stage, rows_bytes(rows));
      tp_totals_.all_reduces += 1;
      tp_totals_.all_reduce_bytes += rows_bytes(rows);
      tp_totals_.all_reduce_ns += ar;
    }
    if (sends_after(l)) {
      const double send = send_ns(rows, stage);
      c.pp_ns += send;
      step_total += send;
      count_use(CollectiveKind::p2p, stage, rows_bytes(rows));
      pp_totals_.sends += 1;
      pp_totals_.send_bytes += rows_bytes(rows);
      pp_totals_.send_ns += send;
    }
    // An MoE layer's expert runs (gate_up_proj, down_proj) take the routed rows.
    // Expert parallelism: the rows of the rank whose experts were timed.
    const uint64_t routed = expert_parallel() ? uint64_t(layer.rank_rows)
                                              : uint64_t(std::accumulate(layer.expert_rows.begin(), layer.expert_rows.end(), 0));
    if (expert_parallel()) {
      const int per = m_.local_experts();
      ep_totals_.rank_rows.resize(size_t(split_.split.ep), 0);
      for (size_t e = 0; e < layer.expert_rows.size(); ++e) ep_totals_.rank_rows[e / size_t(per)] += uint64_t(layer.expert_rows[e]);
      ep_totals_.simulated_rank_rows += routed;
    }
    for (size_t i = 0; i < ops.size(); ++i) {
      c.op_ns[i] += ops[i].end_ns;
      c.w_bytes += ops[i].w_bytes_read;
      add_counters(totals_[i].sum, ops[i]);
      totals_[i].runs += 1;
      const bool experts = m_.moe() && (ops[i].op == "gate_up_proj" || ops[i].op == "down_proj");
      totals_[i].rows += experts ? routed : uint64_t(rows);
    }
  }
  // The final norm (a kernel of its own when unfused) and the LM head, after the last layer.
  c.logits = logit_rows(step);
  const std::vector<GemmOpStats>& head_ops = head(c.logits);
  for (size_t i = 0; i < head_ops.size(); ++i) {
    const GemmOpStats& op = head_ops[i];
    OpTotals& total = totals_[layer_ops_ + i];
    c.op_ns[layer_ops_ + i] = op.end_ns;
    step_total += op.end_ns;
    pp_totals_.busy_ns.back() += op.end_ns;
    c.w_bytes += op.w_bytes_read;
    add_counters(total.sum, op);
    total.runs += 1;
    total.rows += uint64_t(c.logits);
  }
  if (split_.split.tp > 1 && c.logits > 0) {
    const double ag = logits_gather_ns(c.logits);
    c.tp_ns += ag;
    step_total += ag;
    pp_totals_.busy_ns.back() += ag;
    count_use(CollectiveKind::all_gather, split_.split.pp - 1, logits_bytes(c.logits));
    tp_totals_.all_gathers += 1;
    tp_totals_.all_gather_bytes += logits_bytes(c.logits);
    tp_totals_.all_gather_ns += ag;
  }
  pp_totals_.steps_ns += step_total;
  for (size_t e = 0; e < c.expert_rows.size(); ++e) expert_rows_[e] += uint64_t(c.expert_rows[e]);
  return c;
}

ModelSteps::Accounted ModelSteps::account(const Step& step, double attention_ns) {
  Accounted a;
  const int rows = step_rows(step);
  if (rows > 0) a.w_bytes_read = count(step, rows, attention_ns).w_bytes;  // (a run counts no step without rows either)
  a.ns = step_ns(step, attention_ns);
  return a;
}

double ModelSteps::step_ns(const Step& step, double attention_ns) {
  const int rows = step_rows(step);
  double ns = 0;
  for (int l = 0; l < layers(); ++l) {
    ns += attention_ns;
    if (rows <= 0) continue;
    const int stage = stage_of_[size_t(l)];
    for (const GemmOpStats& op : simulate(step, l).ops) {
      ns += op.end_ns + (is_tp_point(op.op) ? all_reduce_ns(rows, stage) : 0.0);
      if (is_ep_dispatch(op.op)) ns += ep_all_to_all_ns(rows, stage);
      if (is_ep_combine(op.op)) ns += ep_all_to_all_ns(rows, stage) + ep_gather_ns(rows, stage);
    }
    if (sends_after(l)) ns += send_ns(rows, stage);
  }
  if (rows > 0) {
    for (const GemmOpStats& op : head(logit_rows(step))) ns += op.end_ns;
    ns += logits_gather_ns(logit_rows(step));
  }
  return ns;
}

void ModelSteps::for_each_operator(const Step& step, const std::function<void(const GemmOpStats&)>& f) {
  if (step_rows(step) <= 0) return;
  for (int l = 0; l < layers(); ++l)
    for (const GemmOpStats& op : simulate(step, l).ops) f(op);
  for (const GemmOpStats& op : head(logit_rows(step))) f(op);
}

EnergyReading ModelSteps::operators_energy(const Step& step) {
  EnergyReading e;
  // "layer." marks an operator's energy (report/energy_json.cpp), the head's too.
  for_each_operator(step, [&](const GemmOpStats& op) { e.add("layer." + op.op, dynamic_energy(gemm_activity(op), hw_.energy, t_)); });
  return e;
}

Activity ModelSteps::operators_activity(const Step& step) {
  Activity a;
  for_each_operator(step, [&](const GemmOpStats& op) { a += gemm_activity(op); });
  return a;
}

Json ModelSteps::system_energy(const EnergyReading& chip) const {
  // The simulated chip is one TP rank running every stage's layers: its dynamic energy is one
  // rank's share of the whole pipeline, its static energy one chip's over the run.
  const int tp = split_.split.tp, chips = split_.split.chips();
  const double dynamic = double(tp) * chip.dynamic_j(), statik = double(chips) * chip.static_j();
  const double network = network_.energy_pj * 1e-12;
  return {{"chips", chips},
          {"dynamic_j", dynamic},
          {"static_j", statik},
          {"network_j", network},
          {"total_j", dynamic + statik + network},
          {"note", "the whole system of the split: the simulated chip (one tensor-parallel rank running every pipeline "
                   "stage's layers; the rest of this block) has its dynamic energy counted tp times and its static "
                   "energy once per chip (every chip is powered for the whole run, idle in the pipeline's bubbles), "
                   "plus the system network's link energy (operators.system_network)"}};
}

Json ModelSteps::tally_json(const Tally& t) { return {{"calls", t.calls}, {"bytes", t.bytes}, {"time_ns", t.ns}}; }

Json ModelSteps::json() const {
  Json ops = Json::array();
  for (const OpTotals& o : totals_) {
    const GemmOpStats& s = o.sum;
    if (o.kernel) {
      // An unfused vector operator's kernel (vector_kernel.h): its HBM round trip and launches.
      ops.push_back({{"name", o.name},
                     {"kernel", "vector"},
                     {"n", o.n},
                     {"runs", o.runs},
                     {"rows", o.rows},
                     {"time_ns", s.end_ns},
                     {"launch_ns", s.launch_ns},
                     {"hbm_bytes_read", s.kernel_bytes_read},
                     {"hbm_bytes_written", s.y_bytes_written},
                     {"dma_busy_ns", s.dma_busy_ns},
                     {"vector_ops", s.vector_ops},
                     {"vector_busy_ns", s.vector_busy_ns()}});
      continue;
    }
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
    // What the mappings move (gemm_job.h GemmOpStats), with x_stationary only: a w_stationary
    // summary stays as it was before the second mapping existed.
    if (mapping_ != GemmMapping::w_stationary)
      ops.back().update({{"x_hbm_bytes_read", s.x_hbm_bytes_read},
                         {"moved_bytes", {{"x_link", s.x_link_bytes},
                                          {"w_multicast", s.w_multicast_bytes},
                                          {"y_gather", s.y_gather_bytes},
                                          {"total", s.moved_bytes()}}},
                         {"w_stream", {{"tiles", s.w_tiles_streamed}, {"slot_wait_ns", s.w_slot_wait_ns}}}});
  }
  std::vector<int> simulated;
  for (size_t l = 0; l < rep_.size(); ++l)
    if (rep_[l] == int(l)) simulated.push_back(int(l));
  Json by_layer = Json::array();
  const bool pipelined = split_.split.pp > 1;
  for (size_t l = 0; l < layer_ns_.size(); ++l) {
    // Pipelined: the layer of its own stage whose runs it takes (every stage's chip has the same shards).
    const size_t local = size_t(local_[l]);
    by_layer.push_back({{"layer", l}, {"ns", layer_ns_[l]}, {"runs_operators_of_layer", l - local + size_t(rep_[local])}});
    if (pipelined) by_layer.back()["stage"] = stage_of_[l];
  }
  Json out = {{"mapping", choice_name(mapping_)},
          {"layers", layers()},
          {"layers_simulated", simulated},
          {"scope", "every step runs every layer: qkv_proj (input RMSNorm, RoPE fused), attention, o_proj (+ residual), "
                    "gate_up_proj (post-attention RMSNorm, activation fused), down_proj (+ residual); then once per step "
                    "lm_head (the final RMSNorm fused) on the last row of each agent that emits a token"},
          {"attention_ns", attention_ns_},
          {"by_operator", ops},
          {"by_layer", by_layer},
          {"by_step", steps_}};
  // What a reader of these numbers should know stands behind them (issue 41 item 5).
  out["modelled"] = {
      {"simulated",
       "each operator's run on the chip (W reads, X delivery, MACs, the fused vector work, Y written back) once per "
       "distinct layer and row count (layers_simulated); each step's attention; every kernel launch "
       "(host.kernel_launch_ns: each weight-GEMM run and vector kernel, the attention per its launch schedule), an "
       "operator's input upload overlapping its launch"},
      {"closed_forms", split_.split.chips() > 1 ? "the collectives between chips over the system network "
                                                   "(tensor_parallel, pipeline_parallel, expert_parallel blocks)"
                                                 : "none"},
      {"not_modelled",
       std::string("the activations' path between operators: each operator's Y is written to the slices and the "
                   "next operator's X taken as a fresh input, ") +
           (mapping_ == GemmMapping::w_stationary ? "uploaded from the host (as the attention's Q is)"
                                                  : "read from the slices where it is assumed to be") +
           ", with no gather or exchange between them timed; the unfused norm's partial-sum exchange between PEs"}};
  if (!fusion_.all()) {
    // Only when something is unfused: an all-fused summary stays as it was before the choice existed.
    out["fusion"] = to_json(fusion_);
    out["scope"] = std::string(out["scope"]) + "; unfused operators run as kernels of their own (by_operator entries "
                   "with \"kernel\": input_norm, rope, post_attention_norm, final_norm), each after a host launch, "
                   "with an HBM round trip of its rows; attention: false writes each KV block's scores to HBM and reads "
                   "them back (two kernels per attention launch)";
  }
  if (split_.split.tp > 1) {
    out["tensor_parallel"] = {
        {"tp", split_.split.tp},
        {"ranks_simulated", 1},
        {"network", split_.network},
        {"all_reduce", {{"calls", tp_totals_.all_reduces}, {"bytes", tp_totals_.all_reduce_bytes}, {"time_ns", tp_totals_.all_reduce_ns}}},
        {"logits_all_gather",
         {{"calls", tp_totals_.all_gathers}, {"bytes", tp_totals_.all_gather_bytes}, {"time_ns", tp_totals_.all_gather_ns}}},
        {"note", "one rank simulated: every rank runs a shard of the same shape (runtime/model/parallel.h), so the same "
                 "time; after o_proj and down_proj of every layer an all-reduce of rows x hidden_size x element bytes per "
                 "rank, and once per step an all-gather of the LM head's logits, each timed on the system network"}};
  }
  if (expert_parallel()) {
    const int per = m_.local_experts();
    Json ranks = Json::array();
    for (int k = 0; k < split_.split.ep; ++k) {
      std::vector<int> experts(static_cast<size_t>(per), 0);
      std::iota(experts.begin(), experts.end(), k * per);
      ranks.push_back({{"rank", k}, {"experts", experts},
                       {"rows", k < int(ep_totals_.rank_rows.size()) ? ep_totals_.rank_rows[size_t(k)] : uint64_t(0)}});
    }
    out["expert_parallel"] = {
        {"ep", split_.split.ep},
        {"experts_per_chip", per},
        {"ranks", ranks},
        {"network", split_.network},
        {"all_to_all", tally_json(ep_totals_.all_to_all)},
        {"rows_all_gather", tally_json(ep_totals_.all_gather)},
        {"simulated_rank_rows", ep_totals_.simulated_rank_rows},
        {"note", "the experts of every MoE layer over the tensor-parallel group's chips (rank r holds experts r x "
                 "experts_per_chip onward, whole); attention and the router stay tensor-parallel. Per MoE layer each "
                 "rank keeps ceil(rows / ep) of the rows after o_proj's all-reduce and dispatches their top-k copies to "
                 "the experts' ranks, an all-to-all of ceil(rows / ep) x experts_per_token x hidden_size x element "
                 "bytes per rank (equal blocks to every rank: the uniform expectation), and the combine brings them "
                 "back (the same bytes); then an all-gather of the ep slices of rows x hidden_size x element bytes "
                 "(no down_proj all-reduce: each expert is whole). Every rank's experts are simulated on its own chip "
                 "for the rows the seeded router sent them; a layer takes the slowest rank's (by_operator's "
                 "gate_up_proj and down_proj, their rows: simulated_rank_rows); ranks[].rows: every rank's, Σ over "
                 "layers and steps"}};
  }
  if (!split_.split.none()) {
    Json links = Json::array();
    uint64_t bytes = 0;
    for (const auto& [name, l] : network_.links) {
      links.push_back({{"link", name}, {"bytes", l.bytes}, {"busy_ns", l.busy_ns}});
      bytes += l.bytes;
    }
    out["system_network"] = {
        {"chips", split_.split.chips()},
        {"link_bytes", bytes},
        {"energy_j", network_.energy_pj * 1e-12},
        {"links", links},
        {"note", "every collective of every step on the system network (each timed alone on an idle network): the "
                 "bytes each directed link carried and its busy time, summed; energy: bytes over links x "
                 "energy_pj_per_byte"}};
  }
  if (pipelined) {
    Json stages = Json::array();
    double busy = 0;
    for (size_t st = 0; st < stage_first_.size(); ++st) {
      const int first = stage_first_[st];
      const int n = (st + 1 < stage_first_.size() ? stage_first_[st + 1] : layers()) - first;
      std::vector<int> chips;
      for (int r = 0; r < split_.split.tp; ++r) chips.push_back(int(st) * split_.split.tp + r);
      stages.push_back({{"stage", st}, {"first_layer", first}, {"layers", n}, {"chips", chips},
                        {"busy_ns", pp_totals_.busy_ns[st]}});
      busy += pp_totals_.busy_ns[st];
    }
    const double chip_ns = pp_totals_.steps_ns * double(stage_first_.size());
    out["pipeline_parallel"] = {
        {"pp", split_.split.pp},
        {"micro_batches", 1},
        {"stages", stages},
        {"network", split_.network},
        {"sends", {{"calls", pp_totals_.sends}, {"bytes", pp_totals_.send_bytes}, {"time_ns", pp_totals_.send_ns}}},
        {"bubble_fraction", chip_ns > 0 ? 1.0 - busy / chip_ns : 0.0},
        {"note", "one micro-batch per step: a step's rows pass the stages in order, each stage's chips idle while the "
                 "others run (bubble_fraction: 1 - Σ stage busy time / (pp x Σ step time); a send counts as idle); "
                 "between stages every rank sends rows x hidden_size x element bytes to its counterpart of the next "
                 "stage, timed on the system network; one chip per stage simulated (each stage's chip runs the first "
                 "layers of the largest stage's model: layers_simulated and runs_operators_of_layer index those)"}};
  }
  if (m_.moe())
    out["moe"] = {{"experts", m_.num_local_experts},
                  {"experts_per_token", m_.num_experts_per_tok},
                  {"expert_rows", expert_rows_},
                  {"router", "softmax over the router's expert logits, top experts_per_token per row (ties: lower "
                             "index), weights renormalised over them; timing-only runs draw the logits from the seeded "
                             "generator per (layer, sequence, position)"},
                  {"note", "expert_rows: rows routed to each expert, summed over every layer and step"}};
  return out;
}

}  // namespace ahbm
