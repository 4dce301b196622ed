// The weight GEMMs of a decoder layer from the memory map (runtime/model/layer_plan.h) on the
// default chip: the worked example of docs/model.md "Weight GEMMs" (LLaMA-3-8B q_proj at M = 1,
// 16 and 160: engine-bound, batching up to 16 rows free), the fused operators' shapes and the
// summary's `operators` of a whole-model scenario.
#include <gtest/gtest.h>

#include <iostream>
#include <map>

#include "hw/chip/simulate.h"
#include "hw/common/model/engines.h"
#include "hw/common/base/error.h"
#include "hw/common/model/vector_ops.h"
#include "runtime/run/driver.h"
#include "runtime/model/layer_plan.h"
#include "runtime/scenario/scenario.h"
#include "test_gemm_support.h"
#include "test_model_support.h"
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
  // transfer, its write into the Q buffer (store and forward: the Q path) and the Q-buffer reads
  // grow (17 % here); 160 rows take 10 times the engine time.
  EXPECT_LT(end[16], 1.2 * end[1]);
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
  ASSERT_TRUE(r.summary.operators.has_value());
  const Json& ops = r.summary.operators->totals;
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
  EXPECT_FALSE(test::timing_only_run(load_scenario(test::source_path("traces/llama_gqa.json")), hw).summary.operators.has_value());
}

TEST(LayerGemms, LmHeadOnTheDefaultChip) {
  // The final norm and LM head of LLaMA-3-8B: h × V = 4096 × 128256, W-stationary on the
  // memory map's lm_head shards (N_p = 4008 columns per PE), the final RMSNorm fused.
  const HwConfig hw;
  const ModelConfig m = llama3_8b();
  const MemoryMap map = plan_memory(m, DType::fp16, hw);
  for (int rows : {1, 8}) {
    SCOPED_TRACE(rows);
    const GemmJob j = lm_head_gemm(m, DType::fp16, map, rows, "decode");
    EXPECT_EQ(j.op, "lm_head");
    ASSERT_EQ(j.k, 4096);
    ASSERT_EQ(j.n, 128256);
    EXPECT_TRUE(j.fused.rms_norm);
    EXPECT_EQ(j.fused.rms_eps, m.rms_norm_eps);
    check_gemm_jobs(hw, {j}, "test");
    ASSERT_EQ(j.shards.size(), 32u);
    for (size_t p = 0; p < 32; ++p) EXPECT_EQ(j.shards[p].n_count, map.model_columns.at("lm_head")[p]);
    const SimResult r = Simulator(hw).run_gemms({j});
    const GemmOpStats& st = r.gemms.at(0);
    EXPECT_EQ(st.w_bytes_read, 4096ull * 128256ull * 2ull);  // one M-block: each W byte once
    EXPECT_EQ(st.macs, uint64_t(rows) * 4096ull * 128256ull);
    // Per PE (one M-block), per Y block of Nb columns: per X block of Kb its RMSNorm prologue
    // and engine tiles, then the drain and the Y rows' RMSNorm scaling (vector_ops.h).
    double engine_ns = 0, norm_ns = 0, slowest_w = 0;
    const auto plans = gemm_pe_plans(hw, {j});
    for (const GemmPePlan& pl : plans[0]) {
      ASSERT_EQ(pl.m_blocks(rows), 1);
      for (int n0 = 0; n0 < pl.shard.n_count; n0 += pl.blk.nb) {
        const uint64_t nb = uint64_t(std::min(pl.blk.nb, pl.shard.n_count - n0));
        for (int k0 = 0; k0 < 4096; k0 += pl.blk.kb) {
          const uint64_t kb = uint64_t(std::min(pl.blk.kb, 4096 - k0));
          engine_ns += double(gemm_tiles(hw.pe.gemm, uint64_t(rows), nb, kb) * gemm_issue_interval(hw.pe.gemm, DType::fp16));
          norm_ns += double(rms_prologue_cycles(hw.pe.vector, uint64_t(rows), kb));
        }
        engine_ns += double(hw.pe.gemm.pipeline_latency);
        norm_ns += double(rms_scale_cycles(hw.pe.vector, uint64_t(rows), nb));
      }
      slowest_w = std::max(slowest_w, test::ns_of_bytes(4096ull * uint64_t(pl.shard.n_count) * 2, hw.pe.hbm.bandwidth_gbps));
    }
    EXPECT_NEAR(st.gemm_busy_ns, engine_ns, 1e-3);
    EXPECT_NEAR(st.norm_busy_ns, norm_ns, 1e-3);
    // Engine-bound like the layers' GEMMs: at least the engine time of the widest shard, and
    // more than the W stream of any PE.
    EXPECT_GE(st.end_ns, engine_ns / 32);
    EXPECT_GT(st.end_ns, slowest_w);
    std::cout << "lm_head M=" << rows << ": " << st.end_ns << " ns, W read " << st.w_bytes_read << " B (W stream "
              << slowest_w << " ns/PE), engine " << engine_ns / 32 << " ns/PE\n";
  }
}

TEST(LayerGemms, LmHeadRaggedShardsMatchTheClosedForm) {
  // A small model: V = 1000 over 32 PEs gives 31 or 32 columns per PE (ragged), one block each:
  // every PE ends at the engine-bound closed form with the final RMSNorm fused (test_gemm_support.h).
  const HwConfig hw;
  const ModelConfig m = test::small_model_config();
  const MemoryMap map = plan_memory(m, DType::fp16, hw);
  for (int rows : {1, 3, 17}) {
    SCOPED_TRACE(rows);
    const GemmJob j = lm_head_gemm(m, DType::fp16, map, rows, "decode");
    const auto plans = gemm_pe_plans(hw, {j});
    std::map<int, int> widths;
    const GemmOpStats st = Simulator(hw).run_gemms({j}).gemms.at(0);
    for (size_t p = 0; p < 32; ++p) {
      const GemmPePlan& pl = plans[0][p];
      ASSERT_EQ(pl.n_blocks(), 1);
      ASSERT_EQ(pl.m_blocks(rows), 1);
      widths[pl.shard.n_count]++;
      EXPECT_NEAR(st.pe_end_ns[p], test::compute_bound_ns(hw, j, pl), test::kTimeTolNs) << p;
    }
    EXPECT_EQ(widths, (std::map<int, int>{{31, 24}, {32, 8}}));
  }
}

TEST(LayerGemms, TiedLmHeadReadsTheEmbeddingShards) {
  // tie_word_embeddings: no lm_head tensor in the memory map; the LM head GEMM reads the
  // embedding table's shards, the same bytes an untied head would read from its own copy.
  const HwConfig hw;
  ModelConfig tied = load_model_config(test::source_path("traces/models/llama-3.2-1b.json"));
  ASSERT_TRUE(tied.tie_word_embeddings);
  ModelConfig untied = tied;
  untied.tie_word_embeddings = false;
  const MemoryMap a = plan_memory(tied, DType::bf16, hw), b = plan_memory(untied, DType::bf16, hw);
  EXPECT_EQ(a.model_columns.count("lm_head"), 0u);
  EXPECT_EQ(b.weight_bytes - a.weight_bytes, 2ull * 2048ull * 128256ull);  // the untied head's own copy
  const GemmJob ja = lm_head_gemm(tied, DType::bf16, a, 4, "decode"), jb = lm_head_gemm(untied, DType::bf16, b, 4, "decode");
  for (size_t p = 0; p < 32; ++p) {
    EXPECT_EQ(ja.shards[p].n_count, a.model_columns.at("embed_tokens")[p]);
    EXPECT_EQ(jb.shards[p].n_count, b.model_columns.at("lm_head")[p]);
  }
  const uint64_t wa = Simulator(hw).run_gemms({ja}).gemms.at(0).w_bytes_read;
  EXPECT_EQ(wa, 2ull * 2048ull * 128256ull);
  EXPECT_EQ(wa, Simulator(hw).run_gemms({jb}).gemms.at(0).w_bytes_read);
}
