// A whole dense model (issue 16): one decoder layer with values through the simulated hardware
// against its float64 reference (runtime/model/layer_values.h), and every layer of every step on
// the step timeline (runtime/step/model_steps.h): TTFT and TPOT are sums of the steps'
// simulated times, each step is its operators plus its attention for every layer, one track per
// operator, and reusing identical layers gives what simulating every layer gives.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>

#include "hw/chip/energy.h"
#include "runtime/run/driver.h"
#include "runtime/model/layer_plan.h"
#include "runtime/model/layer_values.h"
#include "runtime/model/memory_map.h"
#include "runtime/step/model_steps.h"
#include "runtime/scenario/scenario.h"
#include "test_model_support.h"
#include "test_outputs_common.h"
#include "test_runtime_support.h"
#include "test_support.h"

using namespace ahbm;

namespace {

// The small config of the issue: hidden 256, 4 heads of 64, 2 KV heads, FFN 512, 2 layers.
Json small_model(const char* dtype = "fp16") {
  return Json{{"hidden_size", 256}, {"intermediate_size", 512}, {"num_attention_heads", 4},
              {"num_key_value_heads", 2}, {"num_hidden_layers", 2}, {"vocab_size", 1000},
              {"rope_theta", 10000.0}, {"dtype", dtype}};
}

ModelConfig small_config() { return test::small_model_config(); }

// 2 branches over a 64-token prefix: prefill 32, fan-out 2 × 4, 3 decode steps, a join.
Scenario small_scenario(int layers = 2) {
  Json m = small_model();
  m["num_hidden_layers"] = layers;
  const Json j = {{"name", "small_model"},
                  {"model", m},
                  {"shared_prefix_tokens", 64},
                  {"seed", 3},
                  {"agents", {{{"name", "a0"}, {"new_tokens", 4}}, {{"name", "a1"}, {"new_tokens", 4}}}},
                  {"phases", {{{"type", "prefill"}, {"tokens", 32}}, {{"type", "fanout"}},
                              {{"type", "decode"}, {"steps", 3}}, {{"type", "join"}, {"tokens", 8}}}}};
  return parse_scenario(j, "small.json");
}

}  // namespace

TEST(ModelLayer, ValuesMatchFloat64WithinTheDtypeTolerance) {
  const HwConfig hw;  // the default chip: 32 PEs, 8 or 16 columns of each tensor per PE
  const ModelConfig m = small_config();
  for (DType t : {DType::fp32, DType::fp16, DType::bf16}) {
    SCOPED_TRACE(dtype_name(t));
    const LayerValues v = run_layer_values(m, t, hw, 16, /*seed=*/7);
    const double rel = v.max_abs_err / v.ref_max_abs;
    std::cout << dtype_name(t) << ": max |err| " << v.max_abs_err << " of max |ref| " << v.ref_max_abs << " (" << rel
              << " relative, tolerance " << layer_tolerance(t) << "), simulated " << v.sim_ns << " ns\n";
    EXPECT_LE(rel, layer_tolerance(t));
    EXPECT_GT(v.max_abs_err, 0.0);  // real numbers compared
    EXPECT_GT(v.ref_max_abs, 0.5);  // the layer's output is O(1), not collapsed
    // The comparison can fail: another layer's reference (other weights) is far outside it.
    const Eigen::MatrixXd other = reference_layer(m, t, 16, 7, /*layer=*/1);
    EXPECT_GT((v.out.cast<double>() - other).cwiseAbs().maxCoeff(), 10 * layer_tolerance(t) * v.ref_max_abs);
  }
}

TEST(ModelLayer, ActivationAndRowsChangeTheLayer) {
  // GELU instead of SiLU, and 5 ragged rows: still within the fp16 tolerance, and the SiLU
  // reference is outside it (the activation is really applied).
  ModelConfig m = small_config();
  m.hidden_act = HiddenAct::gelu_pytorch_tanh;
  const LayerValues v = run_layer_values(m, DType::fp16, HwConfig{}, 5, 2);
  EXPECT_LE(v.max_abs_err / v.ref_max_abs, layer_tolerance(DType::fp16));
  m.hidden_act = HiddenAct::silu;
  EXPECT_GT((v.out.cast<double>() - reference_layer(m, DType::fp16, 5, 2)).cwiseAbs().maxCoeff(),
            10 * layer_tolerance(DType::fp16) * v.ref_max_abs);
}

TEST(ModelHead, LogitsMatchFloat64WithinTheDtypeTolerance) {
  // The final norm and LM head with values (vocab 1000 over 32 PEs: ragged 31- and 32-column
  // shards) against float64. X is rounded to the storage type once (the broadcast), fewer times
  // than in a layer, so the layer's bound holds.
  const HwConfig hw;
  ModelConfig m = small_config();
  for (DType t : {DType::fp32, DType::fp16, DType::bf16}) {
    SCOPED_TRACE(dtype_name(t));
    const HeadValues v = run_head_values(m, t, hw, 5, /*seed=*/11);
    ASSERT_EQ(v.logits.rows(), 5);
    ASSERT_EQ(v.logits.cols(), 1000);
    const double rel = v.max_abs_err / v.ref_max_abs;
    std::cout << dtype_name(t) << " logits: max |err| " << v.max_abs_err << " of max |ref| " << v.ref_max_abs << " ("
              << rel << " relative), simulated " << v.sim_ns << " ns\n";
    EXPECT_LE(rel, layer_tolerance(t));
    EXPECT_GT(v.max_abs_err, 0.0);
    EXPECT_GT(v.ref_max_abs, 1.0);  // logits of O(1)-scaled weights over a normed row: not collapsed
    // The comparison can fail: the final norm left out, or the tied embedding's weights, is far off.
    ModelConfig no_norm_scale = m;
    no_norm_scale.rms_norm_eps = 1e3;  // the norm's scale all but removed
    EXPECT_GT((v.logits.cast<double>() - reference_head(no_norm_scale, t, 5, 11)).cwiseAbs().maxCoeff(),
              10 * layer_tolerance(t) * v.ref_max_abs);
    ModelConfig tied = m;
    tied.tie_word_embeddings = true;
    EXPECT_GT((v.logits.cast<double>() - reference_head(tied, t, 5, 11)).cwiseAbs().maxCoeff(),
              10 * layer_tolerance(t) * v.ref_max_abs);
    const HeadValues vt = run_head_values(tied, t, hw, 5, 11);  // a tied head through the hardware
    EXPECT_LE(vt.max_abs_err / vt.ref_max_abs, layer_tolerance(t));
  }
}

TEST(ModelSteps, StepsRunEveryLayerAndTtftTpotAreSumsOfStepTimes) {
  const Scenario sc = small_scenario();
  const RunOutput r = test::timing_only_run(sc);
  const Json s = to_json(r.summary);
  ASSERT_TRUE(s.contains("operators"));
  const Json& ops = s["operators"];
  EXPECT_EQ(ops["layers"], 2);
  // Each step: its time is the operators and the attention of every layer, and the steps tile the run.
  double sum = 0, decode = 0, ttft = -1;
  int decode_steps = 0;
  for (const Json& st : s["steps"]) {
    const Json& l = st["layers"];
    EXPECT_NEAR(st["ns"].get<double>(), l["operators_ns"].get<double>() + l["attention_ns"].get<double>(),
                1e-6 * st["ns"].get<double>())
        << st["label"];
    EXPECT_NEAR(st["start_ns"].get<double>(), sum, 1e-6 * (sum + 1)) << st["label"];
    sum += st["ns"].get<double>();
    if (st["phase"] == "decode") {
      decode += st["ns"].get<double>();
      ++decode_steps;
      if (ttft < 0) ttft = sum;
    }
  }
  EXPECT_NEAR(s["total_ns"].get<double>(), sum, 1e-6 * sum);
  ASSERT_EQ(decode_steps, 3);
  EXPECT_EQ(ops["ttft_step"], "decode[0]");
  EXPECT_NEAR(ops["ttft_ns"].get<double>(), ttft, 1e-6 * ttft);
  EXPECT_NEAR(ops["tpot_ns"].get<double>(), decode / 3, 1e-6 * decode);
  // The attention is one step's attention per layer; the operators (simulated per row count)
  // add time to every layer.
  for (const Json& st : ops["by_step"]) EXPECT_GT(st["operators_ns"].get<double>(), 0.0);
  // One track per operator (and the attention of layers after the first): 2 layers x steps.
  std::map<std::string, int> spans;
  for (const Span& sp : r.sim.spans->spans()) spans[r.sim.spans->name(sp.component)]++;
  const int steps = int(s["steps"].size());
  for (const char* op : {"runtime.layer.qkv_proj", "runtime.layer.o_proj", "runtime.layer.gate_up_proj", "runtime.layer.down_proj"})
    EXPECT_EQ(spans[op], 2 * steps) << op;
  EXPECT_EQ(spans["runtime.layer.attention"], 2 * steps);  // layer 0's too: the step's own attention
  EXPECT_EQ(spans["runtime.lm_head"], steps);  // once per step, after the last layer
}

// The operator track tiles every step: its spans follow one another with no gap or overlap from
// the step's start to its end, in the order qkv_proj, attention, o_proj, gate_up_proj,
// down_proj per layer, then lm_head. waves.vcd shows the same as host.operator (named through
// operators.gtkw-filter) and host.layer.
TEST(ModelSteps, TheOperatorTrackTilesEveryStepAndTheVcdShowsIt) {
  const Scenario sc = small_scenario();
  test::ScratchDir dir("model-vcd");
  RunOptions opt;
  opt.values = false;
  const RunOutput r = execute(sc, HwConfig{}, opt);
  write_run_dir(dir.path("run"), r, opt);
  struct Op {
    double start, end;
    std::string name;
    int layer;
  };
  std::vector<Op> track;
  const SpanRecorder& sp = *r.sim.spans;
  for (const Span& s : sp.spans()) {
    const std::string c = sp.name(s.component), a = sp.name(s.activity);
    const bool layer_op = c.rfind("runtime.layer.", 0) == 0;
    if (!layer_op && c != "runtime.lm_head") continue;
    track.push_back({to_ns(s.start), to_ns(s.end), layer_op ? c.substr(14) : "lm_head",
                     layer_op ? std::stoi(a.substr(5)) : 2});
  }
  std::stable_sort(track.begin(), track.end(), [](const Op& x, const Op& y) { return x.start < y.start; });
  const std::vector<std::string> layer_ops = {"qkv_proj", "attention", "o_proj", "gate_up_proj", "down_proj"};
  size_t k = 0;
  for (const StepSummary& st : r.summary.steps) {
    const double start = st.start_ns, end = start + st.ns;
    double at = start;
    for (int l = 0; l < 2; ++l)
      for (const std::string& op : layer_ops) {
        ASSERT_LT(k, track.size());
        EXPECT_EQ(track[k].name, op) << st.label << " layer " << l;
        EXPECT_EQ(track[k].layer, l) << st.label << ' ' << op;
        EXPECT_NEAR(track[k].start, at, 1e-3) << st.label << ' ' << op;
        at = track[k++].end;
      }
    ASSERT_LT(k, track.size());
    EXPECT_EQ(track[k].name, "lm_head");
    EXPECT_NEAR(track[k].start, at, 1e-3);
    EXPECT_NEAR(track[k++].end, end, 1e-3) << st.label;
  }
  EXPECT_EQ(k, track.size());

  const std::string vcd = test::read_file(dir.path("run/waves.vcd"));
  const auto signals = test::vcd_signals(vcd);
  ASSERT_TRUE(signals.count("ahbm.host.operator[7:0]"));
  ASSERT_TRUE(signals.count("ahbm.host.layer[15:0]"));
  // The filter names the codes in order of first appearance: 1 qkv_proj, 2 attention, ...
  const std::string filter = test::read_file(dir.path("run/operators.gtkw-filter"));
  std::map<uint64_t, std::string> name_of;
  std::istringstream fin(filter);
  for (std::string line; std::getline(fin, line);)
    if (!line.empty() && line[0] != '#') name_of[std::stoull(line.substr(0, line.find(' ')), nullptr, 16)] = line.substr(line.find(' ') + 1);
  EXPECT_EQ(name_of, (std::map<uint64_t, std::string>{{0, "-"}, {1, "qkv_proj"}, {2, "attention"}, {3, "o_proj"},
                                                      {4, "gate_up_proj"}, {5, "down_proj"}, {6, "lm_head"}}));
  // The waveform: the operator named at each span's start (the VCD has 1 ns steps) and none
  // after the last; the layer with it (the LM head's: the layer count).
  auto value_at = [](const std::vector<std::pair<uint64_t, uint64_t>>& ch, uint64_t t) {
    uint64_t v = 0;
    for (const auto& [when, val] : ch)
      if (when <= t) v = val;
    return v;
  };
  const auto op_changes = test::vcd_changes(vcd, signals.at("ahbm.host.operator[7:0]"));
  const auto layer_changes = test::vcd_changes(vcd, signals.at("ahbm.host.layer[15:0]"));
  for (const Op& op : track) {
    const uint64_t t = uint64_t(std::llround(op.start));
    EXPECT_EQ(name_of[value_at(op_changes, t)], op.name) << "at " << t;
    EXPECT_EQ(value_at(layer_changes, t), uint64_t(op.layer)) << "at " << t;
  }
  EXPECT_EQ(value_at(op_changes, uint64_t(std::llround(track.back().end))), 0u);
  // An attention-only run has neither the signals nor the filter file.
  test::ScratchDir plain("attention-vcd");
  test::default_run(plain.path("run"));
  EXPECT_FALSE(test::vcd_signals(test::read_file(plain.path("run/waves.vcd"))).count("ahbm.host.operator[7:0]"));
  EXPECT_FALSE(std::filesystem::exists(plain.path("run/operators.gtkw-filter")));
}

TEST(ModelSteps, EveryStepEndsWithTheLmHeadOnEachAgentsLastRow) {
  // The final norm and LM head: one logit row per agent of the step (prefill and join: the
  // parent; fan-out and decode: the 2 branches), its time the head simulated alone for those
  // rows, counted in the step's operators (so in TTFT and TPOT), its energy read like the other
  // operators'.
  const Scenario sc = small_scenario();
  const RunOutput r = test::timing_only_run(sc);
  const Json& ops = r.summary.operators->totals;
  const Json& head = ops["by_operator"].back();
  ASSERT_EQ(head["name"], "lm_head");
  EXPECT_EQ(head["k"], 256);
  EXPECT_EQ(head["n"], 1000);
  const HwConfig hw;
  const MemoryMap map = plan_memory(*sc.model.full, sc.model.dtype, hw);
  std::map<int, double> alone;
  for (int rows : {1, 2}) alone[rows] = Simulator(hw).run_gemms({lm_head_gemm(*sc.model.full, sc.model.dtype, map, rows, "")}).end_ns;
  EXPECT_LT(alone[1], alone[2]);  // X of two rows takes longer to stream in
  uint64_t runs = 0, rows = 0;
  double ns = 0;
  for (const Json& st : ops["by_step"]) {
    const int want = st["phase"] == "fanout" || st["phase"] == "decode" ? 2 : 1;
    double layer_ops = 0;
    for (const char* op : {"qkv_proj", "o_proj", "gate_up_proj", "down_proj"}) layer_ops += st[std::string(op) + "_ns"].get<double>();
    EXPECT_DOUBLE_EQ(st["lm_head_ns"].get<double>(), alone[want]) << st["step"];
    EXPECT_NEAR(st["operators_ns"].get<double>(), layer_ops + alone[want], 1e-9 * layer_ops) << st["step"];
    ++runs;
    rows += uint64_t(want);
    ns += alone[want];
  }
  for (const StepSummary& st : r.summary.steps) EXPECT_GT(st.layers["lm_head_rows"].get<int>(), 0);
  EXPECT_EQ(head["runs"].get<uint64_t>(), runs);
  EXPECT_EQ(head["rows"].get<uint64_t>(), rows);
  EXPECT_NEAR(head["time_ns"].get<double>(), ns, 1e-9 * ns);
  EXPECT_EQ(head["macs"].get<uint64_t>(), rows * 256ull * 1000ull);
  EXPECT_EQ(head["w_bytes_read"].get<uint64_t>(), runs * 256ull * 1000ull * 2ull);
  EXPECT_GT(r.summary.energy.by_operator_dynamic_j.at("lm_head"), 0.0);
}

TEST(ModelSteps, ReusingIdenticalLayersEqualsSimulatingEveryLayer) {
  const Scenario sc = small_scenario(3);
  RunOptions opt = test::in_memory_options();
  opt.values = false;
  const RunOutput reused = execute(sc, HwConfig{}, opt);
  opt.every_layer = true;
  const RunOutput every = execute(sc, HwConfig{}, opt);
  const Json& a = reused.summary.operators->totals;
  const Json& b = every.summary.operators->totals;
  EXPECT_EQ(a["layers_simulated"], Json::array({0}));
  EXPECT_EQ(b["layers_simulated"], Json::array({0, 1, 2}));
  EXPECT_EQ(a["by_operator"], b["by_operator"]);
  EXPECT_EQ(a["by_step"], b["by_step"]);
  EXPECT_EQ(reused.summary.operators->ttft_ns, every.summary.operators->ttft_ns);
  EXPECT_EQ(reused.summary.operators->tpot_ns, every.summary.operators->tpot_ns);
  EXPECT_EQ(to_json(reused.summary)["steps"], to_json(every.summary)["steps"]);
  EXPECT_EQ(reused.summary.total_ns, every.summary.total_ns);
  for (size_t l = 0; l < 3; ++l) {
    EXPECT_EQ(a["by_layer"][l]["ns"], b["by_layer"][l]["ns"]);
    EXPECT_EQ(a["by_layer"][l]["runs_operators_of_layer"], 0);
    EXPECT_EQ(b["by_layer"][l]["runs_operators_of_layer"], int(l));
  }
}

TEST(ModelSteps, EachOperatorsEnergyIsTheFormulaOfItsCounters) {
  // docs/energy.md: an operator's dynamic energy over every layer and step reads its counters
  // (W, Y, residual bytes in HBM and staged; X out of the Q buffers and staged; MACs; vector
  // element-ops) with the default fp16 costs; the attention's is the rest of the dynamic energy.
  const RunOutput r = test::timing_only_run(small_scenario());
  const Json e = report::to_json(r.summary.energy);
  const EnergyConfig k;
  double ops_j = 0;
  for (const Json& op : r.summary.operators->totals["by_operator"]) {
    const double w = op["w_bytes_read"].get<double>(), y = op["y_bytes_written"].get<double>(),
                 res = op["residual_bytes_read"].get<double>(), x = op["x_bytes_read"].get<double>();
    const double want = ((w + y + res) * 8 * (k.hbm_activate_pj_per_bit + k.hbm_access_pj_per_bit + k.hbm_bank_group_pj_per_bit) +
                         op["macs"].get<double>() * k.mac_fp16_pj + op["vector_ops"].get<double>() * k.vector_op_pj +
                         (w + y + res + x) * 2 * k.sram_pj_per_byte + x * k.sram_pj_per_byte) * 1e-12;
    const double got = e["by_operator_dynamic_j"][op["name"].get<std::string>()].get<double>();
    EXPECT_NEAR(got, want, 1e-9 * want) << op["name"];
    EXPECT_GT(got, 0.0);
    ops_j += got;
  }
  EXPECT_NEAR(e["by_operator_dynamic_j"]["attention"].get<double>(), e["dynamic_j"].get<double>() - ops_j,
              1e-9 * e["dynamic_j"].get<double>());
  EXPECT_GT(e["by_operator_dynamic_j"]["attention"].get<double>(), 0.0);
}

TEST(ModelSteps, TheOperatorGridInterpolatesBetweenSimulatedPointsAndChecksASample) {
  // Sampled serving's operator grid (docs/serving.md, "Sampled serving"): row counts up to
  // exact_up_to, and those on the grid (per_octave points per power of two), are simulated as
  // without a grid; the others are the linear interpolation of the grid points around them; the
  // checked ones (period 2, doubling after 8 checks) are simulated and their error recorded.
  const ModelConfig m = small_config();
  const HwConfig hw;
  const MemoryMap map = plan_memory(m, DType::fp16, hw);
  SimulatorPool sims;
  SimOptions so;
  ModelSteps exact(m, DType::fp16, map, hw, sims, so, false);
  ModelSteps grid(m, DType::fp16, map, hw, sims, so, false);
  ModelSteps checked(m, DType::fp16, map, hw, sims, so, false);
  grid.set_operator_grid({4, 8, 0});  // 9..15 every 2 rows, 16..31 every 4, 32..63 every 8
  checked.set_operator_grid({4, 8, 2});
  const auto step = [](int rows) {
    Step s;
    s.phase = PhaseType::prefill;
    s.agents.push_back({"a", -1, 0, 0, rows, rows});
    return s;
  };
  const auto ns = [&](ModelSteps& at, int rows) { return at.step_ns(step(rows), 0.0); };
  const auto spacing = [](int rows) { return rows < 16 ? 2 : rows < 32 ? 4 : 8; };
  for (int rows : {1, 5, 8, 10, 16, 20, 24, 32, 40, 48}) EXPECT_EQ(ns(grid, rows), ns(exact, rows)) << rows;
  EXPECT_EQ(grid.grid_stats().interpolated, 0u);
  const std::vector<int> off = {9, 11, 13, 18, 19, 22, 33, 36, 45, 47};
  for (int rows : off) {
    const int lo = rows / spacing(rows) * spacing(rows), hi = lo + spacing(rows);
    const double t = double(rows - lo) / spacing(rows);
    const double want = ns(exact, lo) + t * (ns(exact, hi) - ns(exact, lo));
    EXPECT_NEAR(ns(grid, rows), want, 1e-9 * want) << rows;
    EXPECT_NE(ns(exact, rows), want) << rows << ": an interpolation equal to the simulation tests nothing";
  }
  EXPECT_EQ(grid.grid_stats().interpolated, off.size());  // each once: the result is cached
  EXPECT_TRUE(grid.grid_stats().checks.empty());
  EXPECT_EQ(exact.grid_stats().interpolated, 0u);  // no grid: every row count simulated
  // Checked: the 2nd, 4th, .., 16th interpolated counts, then every 4th (20, 24, ..) are
  // simulated (equal to the exact run) and their (interpolated, simulated) layer times recorded.
  std::vector<int> odd;
  for (int rows = 33; rows < 64; ++rows)
    if (rows % 8 != 0) odd.push_back(rows);
  for (size_t i = 0; i < odd.size(); ++i) {
    const size_t n = i + 1;
    const bool is_checked = n <= 16 ? n % 2 == 0 : (n - 16) % 4 == 0;
    if (is_checked) EXPECT_EQ(ns(checked, odd[i]), ns(exact, odd[i])) << odd[i];
    else EXPECT_NE(ns(checked, odd[i]), ns(exact, odd[i])) << odd[i];
  }
  const ModelSteps::GridStats& g = checked.grid_stats();
  EXPECT_EQ(g.interpolated, odd.size());
  ASSERT_EQ(g.checks.size(), 8u + (odd.size() - 16) / 4);
  for (const auto& [interp, sim] : g.checks) {
    EXPECT_GT(sim, 0.0);
    EXPECT_LT(std::fabs(interp / sim - 1.0), 0.2);  // a smooth cost between grid points
  }
}
