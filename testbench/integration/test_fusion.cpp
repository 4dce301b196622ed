// The fusion choices of a whole model (docs/models.md "Fusion choices", the scenario's
// model.fusion): unfused RMSNorm and RoPE as kernels of their own (hw/common/contract/vector_kernel.h)
// and attention with its scores through HBM (AttentionJob::scores_in_hbm). Closed forms of the
// kernels and of the unfused layer's time difference on an aligned and a ragged shape, values
// against float64 both ways, the summary's operators, and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>

#include "hw/chip/simulate.h"
#include "hw/common/base/error.h"
#include "hw/common/contract/vector_kernel.h"
#include "runtime/run/driver.h"
#include "runtime/model/layer_plan.h"
#include "runtime/model/layer_values.h"
#include "runtime/scenario/scenario.h"
#include "test_gemm_support.h"
#include "test_model_support.h"
#include "test_runtime_support.h"
#include "test_support.h"

using namespace ahbm;

namespace {

constexpr double kLaunchNs = 3000.0;

HwConfig launching_hw() {
  HwConfig hw;  // the default chip: one group of 32 PEs, the simple HBM model
  hw.host.kernel_launch_ns = kLaunchNs;
  return hw;
}

// hidden 200 (o_proj's and down_proj's 200 columns: 6 or 7 per PE) with 4 heads of 64: the
// residual stream's shards are ragged, qkv_proj's (256 + 2 · 128 columns) are not.
ModelConfig ragged_model() {
  ModelConfig m = test::small_model_config();
  m.hidden_size = 200;
  return m;
}

ModelFusion unfused() {
  ModelFusion f;
  f.linear_rope = f.norm = f.attention = false;
  return f;
}

// Kernel j of its run on chip PE p, by its closed form (vector_kernel.h): its launch, then per
// row block the read (latency + bytes / bandwidth), the vector cycles (1 GHz), the write (its
// latency hidden).
double kernel_closed_form(const HwConfig& hw, const VectorKernelJob& k, const VectorKernelPlan& pl, size_t j) {
  double t = double(j + 1) * hw.host.kernel_launch_ns;
  const uint64_t cols = uint64_t(pl.cols);
  for (int r0 = 0; r0 < k.m; r0 += pl.rb) {
    const uint64_t rows = uint64_t(std::min(pl.rb, k.m - r0));
    t += hw.pe.hbm.latency_ns + test::ns_of_bytes(rows * cols * dtype_bytes(k.in_dtype), hw.pe.hbm.bandwidth_gbps);
    t += double(vector_kernel_cycles(hw.pe.vector, k, rows, cols)) / hw.clock_ghz;
    t += test::ns_of_bytes(rows * cols * dtype_bytes(k.out_dtype), hw.pe.hbm.bandwidth_gbps);
  }
  return t;
}

// Σ over a layer's runs of their simulated times (one Simulator: each run from its own epoch).
struct LayerTimes {
  double total = 0, closed = 0;  // simulated; by the closed forms (kernels, and GEMMs by PE)
  std::vector<std::string> ops;
};
LayerTimes layer_times(const ModelConfig& m, const HwConfig& hw, int rows, const ModelFusion& f) {
  const MemoryMap map = plan_memory(m, DType::fp16, hw);
  std::vector<int64_t> pos;
  for (int r = 0; r < rows; ++r) pos.push_back(r);
  Simulator sim(hw);
  LayerTimes out;
  for (const LayerRun& run : layer_runs(m, DType::fp16, map, pos, "prefill", 0, nullptr, f)) {
    out.ops.push_back(run.op);
    double closed = 0;
    if (run.kernel()) {
      const SimResult r = sim.run_vector_kernels(run.kernels);
      const auto plans = vector_kernel_plans(hw, run.kernels);
      for (size_t p = 0; p < plans[0].size(); ++p) {
        if (!plans[0][p].active()) continue;
        const double cf = kernel_closed_form(hw, run.kernels[0], plans[0][p], 0);
        EXPECT_NEAR(r.kernels[0].pe_end_ns[p], cf, test::kTimeTolNs) << run.op << " PE " << p;
        closed = std::max(closed, cf);
      }
      out.total += r.end_ns;
    } else {
      const SimResult r = sim.run_gemms(run.jobs);
      const auto plans = gemm_pe_plans(hw, run.jobs);
      for (size_t p = 0; p < plans[0].size(); ++p)
        if (plans[0][p].active()) closed = std::max(closed, test::compute_bound_ns(hw, run.jobs[0], plans[0][p]));
      out.total += r.end_ns;
    }
    out.closed += closed;
  }
  return out;
}

}  // namespace

// Each unfused kernel ends, on every PE, at its closed form; the unfused layer's time differs from
// the fused one's by the closed form: the kernels' launches and HBM round trips and vector passes,
// less the fused prologue and epilogue work each GEMM no longer does (docs/models.md).
TEST(Fusion, UnfusedLayerTimeDiffersByTheClosedForm) {
  const HwConfig hw = launching_hw();
  struct Case {
    const char* name;
    ModelConfig m;
    int rows;
    ModelFusion f;
  };
  ModelFusion norm_only;
  norm_only.norm = false;
  // Aligned: every shard even, 16 rows; ragged: 6 or 7 columns of the residual stream per PE and
  // 5 rows (its qkv_proj keeps RoPE fused: only the norms are unfused).
  for (const Case& c : {Case{"aligned", test::small_model_config(), 16, unfused()}, Case{"ragged", ragged_model(), 5, norm_only}}) {
    const LayerTimes fused = layer_times(c.m, hw, c.rows, {});
    const LayerTimes split = layer_times(c.m, hw, c.rows, c.f);
    EXPECT_NEAR(fused.total, fused.closed, 4 * test::kTimeTolNs) << c.name;
    EXPECT_NEAR(split.total, split.closed, 8 * test::kTimeTolNs) << c.name;
    EXPECT_NEAR(split.total - fused.total, split.closed - fused.closed, 12 * test::kTimeTolNs) << c.name;
    std::cout << c.name << " (" << c.rows << " rows): fused " << fused.total << " ns, unfused " << split.total
              << " ns, difference " << split.total - fused.total << " ns (closed form " << split.closed - fused.closed
              << ")\n";
  }
  const std::vector<std::string> want = {"input_norm", "qkv_proj", "rope", "o_proj", "post_attention_norm", "gate_up_proj", "down_proj"};
  EXPECT_EQ(layer_times(test::small_model_config(), hw, 1, unfused()).ops, want);
  EXPECT_EQ(layer_run_names(test::small_model_config(), unfused()), want);
}

// The kernels' bytes through the slices: the norm reads the residual rows in fp32 and writes X in
// the storage type; RoPE reads and writes the rotated Q and K columns in fp32.
TEST(Fusion, KernelBytesAndLaunches) {
  const HwConfig hw = launching_hw();
  const ModelConfig m = ragged_model();
  const MemoryMap map = plan_memory(m, DType::bf16, hw);
  const VectorKernelJob norm = norm_kernel(m, DType::bf16, map, "input_norm", 5, "decode", 0);
  std::vector<int64_t> pos = {0, 1, 2, 3, 4};
  const VectorKernelJob rope = rope_kernel(m, map, pos, "decode", 0);
  // One run of both: the second kernel waits for its own launch, after the first's.
  const SimResult r = Simulator(hw).run_vector_kernels({norm, rope});
  EXPECT_EQ(r.kernels[0].kernel_bytes_read, 5u * 200u * 4u);
  EXPECT_EQ(r.kernels[0].y_bytes_written, 5u * 200u * 2u);
  EXPECT_EQ(r.kernels[1].kernel_bytes_read, 5u * (256u + 128u) * 4u);  // Q and K columns, not V
  EXPECT_EQ(r.kernels[1].y_bytes_written, 5u * (256u + 128u) * 4u);
  EXPECT_DOUBLE_EQ(r.kernels[0].launch_ns, kLaunchNs);
  EXPECT_DOUBLE_EQ(r.kernels[1].launch_ns, 2 * kLaunchNs);
  const auto plans = vector_kernel_plans(hw, {norm, rope});
  for (size_t p = 0; p < plans[1].size(); ++p)
    EXPECT_NEAR(r.kernels[1].pe_end_ns[p], kernel_closed_form(hw, rope, plans[1][p], 1), test::kTimeTolNs) << p;
}

// Values: every fusion choice against the float64 layer within the documented tolerance; an
// unfused RoPE or attention changes no value at all (the same fp32 arithmetic), an unfused norm
// rounds the normed rows instead of the raw ones (one rounding of X either way).
TEST(Fusion, ValuesMatchFloat64EitherWay) {
  const HwConfig hw = launching_hw();
  const ModelConfig m = test::small_model_config();
  for (DType t : {DType::fp32, DType::fp16, DType::bf16}) {
    const LayerValues fused = run_layer_values(m, t, hw, 16, 7);
    const LayerValues split = run_layer_values(m, t, hw, 16, 7, 0, unfused());
    const double rel = split.max_abs_err / split.ref_max_abs;
    std::cout << dtype_name(t) << ": fused " << fused.max_abs_err / fused.ref_max_abs << ", unfused " << rel
              << " of max |ref| " << split.ref_max_abs << " (tolerance " << layer_tolerance(t) << "); simulated "
              << fused.sim_ns << " / " << split.sim_ns << " ns\n";
    EXPECT_LE(rel, layer_tolerance(t)) << dtype_name(t);
    EXPECT_GT(split.sim_ns, fused.sim_ns) << dtype_name(t);  // three launches and the round trips
    if (t != DType::fp16) continue;
    ModelFusion rope_attention;
    rope_attention.linear_rope = rope_attention.attention = false;
    const LayerValues same = run_layer_values(m, t, hw, 16, 7, 0, rope_attention);
    EXPECT_TRUE(same.out == fused.out);  // bit for bit
  }
}

// Attention fusion off: each KV block's scores go to the slice and back, and the job's kernel is
// two launches; with one KV block on one PE the run is longer by exactly launch + write + read.
TEST(Fusion, UnfusedAttentionAddsTheScoresRoundTrip) {
  HwConfig hw = test::small_hw(1, 1);
  hw.host.kernel_launch_ns = kLaunchNs;
  const int rows = 16, tokens = 48;  // one KV block (kv_tile_tokens = 64)
  AttentionJob fused = test::random_job(hw, rows, tokens, 64, 3);
  AttentionJob split = fused;
  split.scores_in_hbm = true;
  const SimResult a = Simulator(hw).run({fused});
  const SimResult b = Simulator(hw).run({split});
  const uint64_t s_bytes = uint64_t(rows) * tokens * 4;
  const double expect = kLaunchNs + 2 * test::ns_of_bytes(s_bytes, hw.pe.hbm.bandwidth_gbps) + hw.pe.hbm.latency_ns;
  EXPECT_NEAR(b.end_ns - a.end_ns, expect, test::kTimeTolNs);
  EXPECT_TRUE(a.outputs.at(0) == b.outputs.at(0));  // values unchanged, bit for bit
  // Several KV blocks: at least one round trip per block (the slice also serves the KV reads).
  AttentionJob longer = test::random_job(hw, rows, 200, 64, 4);
  const double base = Simulator(hw).run({longer}).end_ns;
  longer.scores_in_hbm = true;
  const SimResult c = Simulator(hw).run({longer});
  double round_trips = kLaunchNs;
  for (int n : {64, 64, 64, 8}) round_trips += 2 * test::ns_of_bytes(uint64_t(rows) * uint64_t(n) * 4, hw.pe.hbm.bandwidth_gbps) + hw.pe.hbm.latency_ns;
  EXPECT_GE(c.end_ns - base, round_trips - test::kTimeTolNs);
  EXPECT_EQ(kernel_start_ns({longer}, 0, kLaunchNs), 2 * kLaunchNs);
}

// The summary: each unfused kernel is an operator with its time, bytes and launches, the choice
// is named, and the all-fused default reports exactly what it did before the choice existed.
TEST(Fusion, SummaryNamesTheChoiceAndEachKernel) {
  const char* text = R"({"name": "tiny", "model": {"hidden_size": 256, "intermediate_size": 512,
      "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "num_hidden_layers": 2,
      "vocab_size": 1000, "dtype": "fp16"%s},
      "shared_prefix_tokens": 64, "agents": [{"name": "a", "new_tokens": 4}, {"name": "b", "new_tokens": 4}],
      "phases": [{"type": "prefill"}, {"type": "fanout"}, {"type": "decode", "steps": 2}]})";
  auto scenario = [&](const std::string& fusion) {
    std::vector<char> buf(4096);
    std::snprintf(buf.data(), buf.size(), text, fusion.c_str());
    return parse_scenario(Json::parse(buf.data()), "tiny.json");
  };
  const HwConfig hw = launching_hw();
  const RunOutput fused = test::timing_only_run(scenario(""), hw);
  const RunOutput split =
      test::timing_only_run(scenario(R"(, "fusion": {"linear_rope": false, "norm": false, "attention": false})"), hw);
  const Json& fo = fused.summary.operators->totals;
  const Json& so = split.summary.operators->totals;
  EXPECT_FALSE(fo.contains("fusion"));
  EXPECT_FALSE(fused.summary.config.scenario["model"].contains("fusion"));
  EXPECT_EQ(so["fusion"], Json({{"linear_rope", false}, {"norm", false}, {"attention", false}}));
  EXPECT_EQ(split.summary.config.scenario["model"]["fusion"], so["fusion"]);
  std::vector<std::string> names;
  for (const Json& o : so["by_operator"]) names.push_back(o["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"input_norm", "qkv_proj", "rope", "o_proj", "post_attention_norm",
                                             "gate_up_proj", "down_proj", "final_norm", "lm_head"}));
  for (const Json& o : so["by_operator"]) {
    if (!o.contains("kernel")) continue;
    const uint64_t rows = o["rows"], runs = o["runs"];
    EXPECT_DOUBLE_EQ(o["launch_ns"].get<double>(), double(runs) * kLaunchNs) << o["name"];
    EXPECT_GT(o["time_ns"].get<double>(), double(runs) * kLaunchNs) << o["name"];
    const uint64_t cols = o["name"] == "rope" ? 256 + 128 : 256;  // rotated Q, K columns; or h
    EXPECT_EQ(o["hbm_bytes_read"].get<uint64_t>(), rows * cols * 4) << o["name"];
    EXPECT_EQ(o["hbm_bytes_written"].get<uint64_t>(), rows * cols * (o["name"] == "rope" ? 4 : 2)) << o["name"];
  }
  // The fused operators lost their fused vector work; the run got longer by the launches.
  EXPECT_EQ(so["by_operator"][1]["vector_busy_ns"]["rms_norm"], 0.0);
  EXPECT_EQ(so["by_operator"][1]["vector_busy_ns"]["rope"], 0.0);
  EXPECT_GT(so["attention_ns"].get<double>(), fo["attention_ns"].get<double>());
  EXPECT_NE(std::string(so["scope"]).find("kernels of their own"), std::string::npos);
}

TEST(Fusion, BadInputNamesTheField) {
  auto refusal = [](const std::string& model_extra, const std::string& model_base) {
    const std::string text = R"({"name": "x", "model": {)" + model_base + model_extra +
                             R"(}, "shared_prefix_tokens": 8, "agents": [{"name": "a", "new_tokens": 1}]})";
    try {
      parse_scenario(Json::parse(text), "sc.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string whole = R"("hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4, "num_hidden_layers": 1, "vocab_size": 100)";
  const std::string unknown = refusal(R"(, "fusion": {"linear_rop": false})", whole);
  EXPECT_NE(unknown.find("model.fusion.linear_rop"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("linear_rope"), std::string::npos) << unknown;  // did you mean
  const std::string type = refusal(R"(, "fusion": {"norm": "no"})", whole);
  EXPECT_NE(type.find("model.fusion.norm"), std::string::npos) << type;
  const std::string not_object = refusal(R"(, "fusion": true)", whole);
  EXPECT_NE(not_object.find("model.fusion"), std::string::npos) << not_object;
  const std::string attention_only = refusal(R"(, "fusion": {"norm": false})", R"("head_dim": 64)");
  EXPECT_NE(attention_only.find("model.fusion"), std::string::npos) << attention_only;
  EXPECT_NE(attention_only.find("whole model"), std::string::npos) << attention_only;
  // A kernel job that names no operator, or both, is refused before it runs.
  const HwConfig hw;
  VectorKernelJob none;
  none.shards = gemm_even_shards(1, 1, hw.pes_per_group(), 1);
  EXPECT_THROW(Simulator(hw).run_vector_kernels({none}), InputError);
}
