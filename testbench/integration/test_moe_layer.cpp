// MoE layers (issue 16): a tiny MoE config (4 experts, top 2) with values through the simulated
// hardware — router GEMM, routing, each expert's gate_up and down on its routed rows only, the
// weighted combine into the residual — against float64; the experts' GEMMs from the memory map's
// per-expert shards; a whole MoE model on the step timeline with the seeded router (same seed,
// same rows to the same experts) and per-expert row counts in the summary.
#include <gtest/gtest.h>

#include <iostream>
#include <numeric>

#include "hw/chip/simulate.h"
#include "runtime/run/driver.h"
#include "runtime/model/layer_plan.h"
#include "runtime/model/layer_values.h"
#include "runtime/scenario/scenario.h"
#include "test_model_support.h"
#include "test_runtime_support.h"
#include "test_support.h"

using namespace ahbm;

namespace {

// hidden 256, 4 heads of 64, 2 KV heads, 4 experts of FFN 512 each, top 2, 2 layers.
ModelConfig tiny_moe() {
  ModelConfig m = test::small_model_config();
  m.num_local_experts = 4;
  m.num_experts_per_tok = 2;
  return m;
}

Scenario moe_scenario(uint64_t seed) {
  const Json model = {{"hidden_size", 256}, {"intermediate_size", 512}, {"num_attention_heads", 4},
                      {"num_key_value_heads", 2}, {"num_hidden_layers", 2}, {"vocab_size", 1000},
                      {"num_local_experts", 4}, {"num_experts_per_tok", 2}, {"dtype", "fp16"}};
  const Json j = {{"name", "tiny_moe"},
                  {"model", model},
                  {"shared_prefix_tokens", 64},
                  {"seed", seed},
                  {"agents", {{{"name", "a0"}, {"new_tokens", 4}}, {{"name", "a1"}, {"new_tokens", 4}}}},
                  {"phases", {{{"type", "prefill"}, {"tokens", 32}}, {{"type", "fanout"}},
                              {{"type", "decode"}, {"steps", 3}}, {{"type", "join"}, {"tokens", 8}}}}};
  return parse_scenario(j, "tiny_moe.json");
}

}  // namespace

TEST(MoeLayer, ValuesMatchFloat64WithinTheDtypeTolerance) {
  const HwConfig hw;
  const ModelConfig m = tiny_moe();
  for (DType t : {DType::fp32, DType::fp16, DType::bf16}) {
    SCOPED_TRACE(dtype_name(t));
    const LayerValues v = run_layer_values(m, t, hw, 16, /*seed=*/7);
    const double rel = v.max_abs_err / v.ref_max_abs;
    const std::vector<int> n = v.routing.expert_rows();
    std::cout << dtype_name(t) << " MoE layer: max |err| " << v.max_abs_err << " of max |ref| " << v.ref_max_abs << " ("
              << rel << " relative), rows per expert " << n[0] << " " << n[1] << " " << n[2] << " " << n[3]
              << ", simulated " << v.sim_ns << " ns\n";
    EXPECT_TRUE(v.routing_matches_reference);  // the hardware's router picks the float64 router's experts
    EXPECT_EQ(std::accumulate(n.begin(), n.end(), 0), 2 * 16);
    for (int e = 0; e < 4; ++e) EXPECT_GT(n[size_t(e)], 0) << e;  // every expert's GEMMs ran
    EXPECT_LE(rel, layer_tolerance(t));
    EXPECT_GT(v.max_abs_err, 0.0);
    EXPECT_GT(v.ref_max_abs, 0.5);
    // The comparison can fail: routing every row to its other experts (the combine really
    // weights the chosen ones) is far outside the tolerance.
    Routing other = v.routing;
    for (int r = 0; r < other.rows(); ++r)
      for (int i = 0; i < 2; ++i) other.expert[size_t(r * 2 + i)] = 3 - other.expert[size_t(r * 2 + i)];
    EXPECT_GT((v.out.cast<double>() - reference_layer(m, t, 16, 7, 0, &other)).cwiseAbs().maxCoeff(),
              10 * layer_tolerance(t) * v.ref_max_abs);
  }
}

TEST(MoeLayer, ExpertGemmsTakeOnlyTheirRowsFromTheirShards) {
  // Every expert's weights are placed (memory map: each expert split over every PE); an expert's
  // gate_up and down jobs take its M_e rows and read its own shards; experts with no rows run
  // nothing. MACs and weight bytes are the closed forms of the routed rows.
  const HwConfig hw;
  const ModelConfig m = tiny_moe();
  const MemoryMap map = plan_memory(m, DType::fp16, hw);
  for (int e = 0; e < 4; ++e)
    for (const char* t : {"mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"}) {
      const std::vector<int>& cols = map.layer_columns[1].at(expert_tensor(t, e));
      EXPECT_EQ(std::accumulate(cols.begin(), cols.end(), 0), std::string(t) == "mlp.down_proj" ? 256 : 512) << t << e;
    }
  Routing r;  // 6 rows: expert 0 gets 5, expert 2 gets 4, expert 3 gets 3, expert 1 none
  r.experts = 4;
  r.top_k = 2;
  r.expert = {0, 2, 0, 2, 0, 3, 0, 3, 2, 3, 0, 2};
  r.weight.assign(12, 0.5f);
  const std::vector<LayerRun> runs = layer_runs(m, DType::fp16, map, std::vector<int64_t>(6, 0), "decode", 1, &r);
  ASSERT_EQ(runs.size(), 5u);
  EXPECT_EQ(runs[2].op, "router");
  EXPECT_EQ(runs[2].jobs[0].n, 4);
  EXPECT_TRUE(runs[2].jobs[0].fused.rms_norm);
  for (size_t i : {3u, 4u}) {
    ASSERT_EQ(runs[i].experts, (std::vector<int>{0, 2, 3}));
    const SimResult res = Simulator(hw).run_gemms(runs[i].jobs);
    const int rows[] = {5, 4, 3};
    for (size_t k = 0; k < 3; ++k) {
      const GemmJob& j = runs[i].jobs[k];
      EXPECT_EQ(j.m, rows[k]);
      const LayerOperator op = moe_expert_operators(runs[i].experts[k])[i - 3];
      const std::vector<GemmShard> own = operator_layout(m, map, 1, op).shards;  // its own columns, all of K
      ASSERT_EQ(j.shards.size(), own.size());
      for (size_t p = 0; p < own.size(); ++p) {
        EXPECT_EQ(j.shards[p].n_begin, own[p].n_begin);
        EXPECT_EQ(j.shards[p].n_count, own[p].n_count);
        EXPECT_EQ(j.shards[p].k_count, j.k);
      }
      EXPECT_EQ(res.gemms[k].macs, uint64_t(rows[k]) * uint64_t(j.k) * uint64_t(j.n));
      EXPECT_EQ(res.gemms[k].w_bytes_read, uint64_t(j.k) * uint64_t(j.n) * 2);  // one M-block
    }
    EXPECT_EQ(runs[i].jobs[0].fused.gated_act, i == 3);
    EXPECT_EQ(runs[i].jobs[0].fused.residual, i == 4);
  }
}

TEST(MoeSteps, SeededRouterOnTheStepTimeline) {
  // A whole MoE model runs every layer with its router and routed experts: the summary counts the
  // rows each expert got (Σ = rows × top_k × layers over the steps), the same seed routes the
  // same, another seed differently; the experts' MACs are the routed rows' closed forms.
  const RunOutput a = test::timing_only_run(moe_scenario(3));
  const Json& ops = a.summary.operators->totals;
  ASSERT_TRUE(ops.contains("moe"));
  std::vector<std::string> names;
  for (const Json& o : ops["by_operator"]) names.push_back(o["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"qkv_proj", "o_proj", "router", "gate_up_proj", "down_proj", "lm_head"}));
  uint64_t rows = 0;
  std::vector<uint64_t> per_expert(4, 0);
  for (const Json& st : ops["by_step"]) {
    rows += st["rows"].get<uint64_t>();
    const std::vector<uint64_t> e = st["expert_rows"];
    EXPECT_EQ(std::accumulate(e.begin(), e.end(), uint64_t(0)), st["rows"].get<uint64_t>() * 2 * 2) << st["step"];
    for (size_t i = 0; i < 4; ++i) per_expert[i] += e[i];
  }
  const std::vector<uint64_t> total = ops["moe"]["expert_rows"];
  EXPECT_EQ(total, per_expert);
  const uint64_t routed = std::accumulate(total.begin(), total.end(), uint64_t(0));
  EXPECT_EQ(routed, rows * 2 * 2);  // top 2, 2 layers
  EXPECT_EQ(ops["by_operator"][3]["rows"].get<uint64_t>(), routed);
  EXPECT_EQ(ops["by_operator"][3]["macs"].get<uint64_t>(), routed * 256 * 1024);
  EXPECT_EQ(ops["by_operator"][4]["macs"].get<uint64_t>(), routed * 512 * 256);
  EXPECT_EQ(ops["by_operator"][2]["macs"].get<uint64_t>(), 2 * rows * 256 * 4);  // the router: every row, E = 4
  const RunOutput again = test::timing_only_run(moe_scenario(3));
  EXPECT_EQ(again.summary.operators->totals, ops);
  EXPECT_EQ(again.summary.total_ns, a.summary.total_ns);
  EXPECT_NE(test::timing_only_run(moe_scenario(4)).summary.operators->totals["moe"]["expert_rows"], ops["moe"]["expert_rows"]);
  // Every step's time is its runs' and the attention's, as for a dense model.
  for (const StepSummary& st : a.summary.steps)
    EXPECT_NEAR(st.ns, st.layers["operators_ns"].get<double>() + st.layers["attention_ns"].get<double>(), 1e-6 * st.ns);
}
