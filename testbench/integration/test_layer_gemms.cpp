// The weight GEMMs of a decoder layer from the memory map (runtime/model/layer_plan.h) on the
// default chip: the worked example of docs/model.md "Weight GEMMs" (LLaMA-3-8B q_proj at M = 1,
// 16 and 160: engine-bound, batching up to 16 rows free), the fused operators' shapes and the
// summary's `operators` of a whole-model scenario.
#include <gtest/gtest.h>

#include <iostream>
#include <map>

#include "hw/chip/simulate.h"
#include "hw/common/engines.h"
#include "hw/common/error.h"
#include "runtime/driver.h"
#include "runtime/model/layer_plan.h"
#include "runtime/scenario.h"
#include "test_gemm_support.h"
#include "test_runtime_support.h"
#include "test_support.h"

using namespace ahbm;

namespace {
ModelConfig llama3_8b() { return load_model_config(test::source_path("traces/models/llama-3-8b.json")); }
}  // namespace

TEST(LayerGemms, QProjWorkedExampleOnTheDefaultChip) {
  const HwConfig hw;  // the default chip: one group of 32 PEs
  const ModelConfig m = llama3_8b();
  const MemoryMap map = plan_memory(m, DType::fp16, hw);
  const LayerOperator q{"q_proj", {"self_attn.q_proj"}};
  std::map<int, double> end;
  for (int rows : {1, 16, 160}) {
    const GemmJob j = operator_gemm(m, DType::fp16, map, q, rows, "decode");
    ASSERT_EQ(j.k, 4096);
    ASSERT_EQ(j.n, 4096);
    for (const GemmShard& s : j.shards) ASSERT_EQ(s.n_count, 128);  // N_p = 4096 / 32
    const SimResult r = Simulator(hw).run_gemms({j});
    const GemmOpStats& st = r.gemms.at(0);
    const uint64_t engine = gemm_cycles(hw.pe.gemm, uint64_t(rows), 128, 4096, DType::fp16);
    EXPECT_NEAR(st.gemm_busy_ns, 32.0 * double(engine), 1e-3);  // per PE: the engine closed form
    EXPECT_EQ(st.w_bytes_read, 4096ull * 4096ull * 2ull);        // one M-block: each W byte once
    EXPECT_EQ(st.macs, uint64_t(rows) * 4096ull * 4096ull);
    // Engine-bound: every PE ends at the closed form (X in, then per W tile its X block out
    // of the Q buffer and its engine tiles, the drain, the Y write).
    const auto plans = gemm_pe_plans(hw, {j});
    for (int p = 0; p < 32; ++p)
      EXPECT_NEAR(st.pe_end_ns[size_t(p)], test::compute_bound_ns(hw, j, plans[0][size_t(p)]), test::kTimeTolNs) << p;
    end[rows] = st.end_ns;
    std::cout << "q_proj M=" << rows << ": engine " << engine << " cycles/PE, op " << st.end_ns << " ns, W read "
              << st.w_bytes_read << " B, busy " << st.gemm_busy_ns / 32 << " ns/PE\n";
  }
  EXPECT_EQ(gemm_cycles(hw.pe.gemm, 1, 128, 4096, DType::fp16), 32800u);
  EXPECT_EQ(gemm_cycles(hw.pe.gemm, 160, 128, 4096, DType::fp16), 327712u);
  // 16 rows take the engine time of 1 row (the 16-row engine tile is padded at M = 1): only X's
  // transfer and Q-buffer reads grow (11 % here); 160 rows take 10 times the engine time.
  EXPECT_LT(end[16], 1.15 * end[1]);
  EXPECT_GT(end[160], 9.0 * end[1]);
}

TEST(LayerGemms, FusedOperatorsOfADenseLayer) {
  const HwConfig hw;
  const ModelConfig m = llama3_8b();
  const MemoryMap map = plan_memory(m, DType::fp16, hw);
  const std::vector<GemmJob> ops = layer_gemms(m, DType::fp16, map, 8, "decode");
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[0].op, "qkv_proj");
  EXPECT_EQ(ops[0].n, 4096 + 2 * 1024);
  EXPECT_EQ(ops[1].k, 4096);
  EXPECT_EQ(ops[2].n, 2 * 14336);
  EXPECT_EQ(ops[3].k, 14336);
  for (const GemmJob& j : ops) {
    check_gemm_jobs(hw, {j}, "test");  // the shards cover the fused weight exactly
    int columns = 0;
    for (const GemmShard& s : j.shards) columns += s.n_count;
    EXPECT_EQ(columns, j.n);
  }
  // MoE routing is not modelled yet: a clear error.
  ModelConfig moe = load_model_config(test::source_path("traces/models/mixtral-8x7b.json"));
  EXPECT_THROW(layer_gemms(moe, DType::fp16, plan_memory(moe, DType::fp16, hw), 8, "decode"), InputError);
}

TEST(LayerGemms, WholeModelScenarioReportsOperatorsPerStep) {
  const Scenario sc = load_scenario(test::source_path("traces/llama3_8b.json"));
  const HwConfig hw;
  const RunOutput r = test::timing_only_run(sc, hw);
  ASSERT_TRUE(r.summary.contains("operators"));
  const Json& ops = r.summary["operators"];
  EXPECT_EQ(ops["layers_simulated"], Json::array({0}));  // every layer has the same shards
  const Json& steps = ops["by_step"];
  ASSERT_FALSE(steps.empty());
  // Selective batching: a step's M is the Σ of its branches' new tokens (8 × 20 at the fan-out).
  uint64_t rows = 0;
  for (const Json& s : steps) {
    rows += s["rows"].get<uint64_t>();
    if (s["step"] == "fanout") {
      EXPECT_EQ(s["rows"], 160);
    }
  }
  const Json& qkv = ops["by_operator"][0];
  EXPECT_EQ(qkv["name"], "qkv_proj");
  EXPECT_EQ(qkv["rows"].get<uint64_t>(), 32 * rows);  // every one of the 32 layers
  EXPECT_EQ(qkv["macs"].get<uint64_t>(), 32 * rows * 4096ull * 6144ull);
  // A step's operator time is the operator simulated alone for its rows, once per layer.
  const MemoryMap map = plan_memory(*sc.model.full, DType::fp16, hw);
  const SimResult alone = Simulator(hw).run_gemms({layer_gemms(*sc.model.full, DType::fp16, map, 160, "fanout")[0]});
  for (const Json& s : steps)
    if (s["step"] == "fanout") {
      EXPECT_NEAR(s["qkv_proj_ns"].get<double>(), 32 * alone.end_ns, 1e-9 * 32 * alone.end_ns);
    }
  // Attention-only scenarios have no operators.
  EXPECT_FALSE(test::timing_only_run(load_scenario(test::source_path("traces/llama_gqa.json")), hw).summary.contains("operators"));
}
