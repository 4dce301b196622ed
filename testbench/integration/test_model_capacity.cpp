// A whole-model scenario through the runtime: the memory map in summary.json against the
// planner and the KV page statistics, the KV pool shrunk by the weights, and the KV shortfall
// naming the weights; attention-only scenarios carry no memory map.
#include <gtest/gtest.h>

#include "hw/common/base/error.h"
#include "runtime/run/driver.h"
#include "test_runtime_support.h"
#include "runtime/model/memory_map.h"
#include "test_support.h"

using namespace ahbm;

namespace {

RunOutput run(const Scenario& sc, const HwConfig& hw = {}) { return test::timing_only_run(sc, hw); }

}  // namespace

TEST(ModelCapacity, MemoryMapOfLlama3OnTheDefaultChip) {
  const Scenario sc = load_scenario(test::source_path("traces/llama3_8b.json"));
  const HwConfig hw;
  const RunOutput r = run(sc, hw);
  ASSERT_TRUE(r.summary.memory_map.is_object());
  const Json& mm = r.summary.memory_map;
  const Json kv = to_json(r.summary)["kv"];
  const MemoryMap plan = plan_memory(*sc.model.full, DType::fp16, hw);
  EXPECT_EQ(mm["params"].get<int64_t>(), 8030261248);
  EXPECT_EQ(mm["weights"]["bytes"].get<uint64_t>(), 2 * uint64_t(8030261248));
  EXPECT_EQ(mm["pes"].get<int>(), 32);
  const uint64_t cap = hw.pe.hbm.capacity_bytes, slot = kv["page_slot_bytes"].get<uint64_t>();
  EXPECT_EQ(slot, 16u * 128 * 2 * 2 * 32 * 8);  // page_tokens x d x (K, V) x fp16 x layers x KV heads
  // The KV pool is what the weights leave on the most loaded PE.
  EXPECT_EQ(kv["pages_per_pe_capacity"].get<int64_t>(), int64_t((cap - plan.weight_bytes_max_pe) / slot));
  EXPECT_EQ(mm["kv"]["pages_per_pe_capacity"], kv["pages_per_pe_capacity"]);
  // Per PE: weights as planned, KV at its page peak, the rest free.
  const auto w = mm["per_pe"]["weight_bytes"].get<std::vector<uint64_t>>();
  const auto k = mm["per_pe"]["kv_peak_bytes"].get<std::vector<uint64_t>>();
  const auto f = mm["per_pe"]["free_bytes"].get<std::vector<uint64_t>>();
  const auto peak_pages = kv["peak_pages_per_pe"].get<std::vector<int64_t>>();
  ASSERT_EQ(w.size(), 32u);
  EXPECT_EQ(w, plan.weight_bytes_per_pe);
  uint64_t kv_sum = 0;
  for (size_t p = 0; p < 32; ++p) {
    EXPECT_EQ(k[p], uint64_t(peak_pages[p]) * slot) << p;
    EXPECT_EQ(f[p], cap - w[p] - k[p]) << p;
    kv_sum += k[p];
  }
  EXPECT_EQ(mm["kv"]["pe_peak_bytes_sum"].get<uint64_t>(), kv_sum);
  // Each PE at its own peak: at least the peak of the total (one group holds every KV head here).
  EXPECT_GE(kv_sum, kv["peak_bytes"].get<uint64_t>());
  EXPECT_EQ(mm["free_bytes"].get<uint64_t>(), 32 * cap - mm["weights"]["bytes"].get<uint64_t>() - kv_sum);
  EXPECT_GT(kv_sum, 0u);
}

TEST(ModelCapacity, WeightsLeaveTooLittleForTheKvCache) {
  const Scenario sc = load_scenario(test::source_path("traces/llama3_8b.json"));
  HwConfig hw;
  const MemoryMap plan = plan_memory(*sc.model.full, DType::fp16, hw);
  // Room for the weights and 3 page slots of 2 MiB per PE; the 4096-token prefix needs 8 per PE.
  hw.pe.hbm.capacity_bytes = plan.weight_bytes_max_pe + 3 * (uint64_t(2) << 20);
  const std::string m = test::refusal_of(sc, hw);
  ASSERT_FALSE(m.empty()) << "accepted";
  EXPECT_NE(m.find("KV capacity exceeded"), std::string::npos) << m;
  EXPECT_NE(m.find("less " + std::to_string(plan.weight_bytes_max_pe) + " bytes of model weights"), std::string::npos) << m;
  EXPECT_NE(m.find("holds 3 pages of 2097152 bytes"), std::string::npos) << m;
}

TEST(ModelCapacity, AttentionOnlyScenarioHasNoMemoryMap) {
  const Scenario sc = load_scenario(test::source_path("traces/llama_gqa.json"));
  const RunOutput r = run(sc);
  EXPECT_FALSE(r.summary.memory_map.is_object());
  EXPECT_FALSE(sc.model.full);
  // The same attention core from the whole model: the same simulated attention in every step
  // (the whole model adds every layer's operators around it, docs/models.md).
  const RunOutput full = run(load_scenario(test::source_path("traces/llama3_8b.json")));
  ASSERT_EQ(full.summary.steps.size(), r.summary.steps.size());
  for (size_t i = 0; i < r.summary.steps.size(); ++i)
    EXPECT_NEAR(full.summary.steps[i].layers["attention_ns"].get<double>(),
                32 * r.summary.steps[i].ns, 1e-9 * full.summary.steps[i].ns);
  EXPECT_NEAR(full.summary.model.attention_ns_all_layers,
              r.summary.model.attention_ns_all_layers,
              1e-9 * r.summary.model.attention_ns_all_layers);
  EXPECT_GT(full.summary.total_ns, r.summary.total_ns);
}
