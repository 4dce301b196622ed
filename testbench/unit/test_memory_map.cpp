// Capacity planning (runtime/model/memory_map.h): the weight placement over the chip's PEs
// against a hand-worked small case and against its bounds on real models; the shortfall
// message and that the parameter change it proposes makes the model fit.
#include <numeric>
#include <regex>

#include <gtest/gtest.h>

#include "hw/common/base/error.h"
#include "hw/common/base/timing.h"
#include "runtime/model/memory_map.h"
#include "test_support.h"

using namespace ahbm;

namespace {

ModelConfig load_model(const std::string& name) {
  return load_model_config(test::source_path("traces/models/" + name + ".json"));
}

// The KV page slot of one PE for `groups` groups (the scenario's kv_page_bytes with 16-token pages).
uint64_t slot(const ModelConfig& m, DType t, int groups) {
  const uint64_t heads = ceil_div(uint64_t(m.num_key_value_heads), uint64_t(groups));
  return 16 * uint64_t(m.head_dim) * 2 * dtype_bytes(t) * uint64_t(m.num_hidden_layers) * heads;
}

std::string shortfall(const MemoryMap& map, uint64_t slot_bytes) {
  try {
    check_weights_fit(map, slot_bytes, "hw.json", "sc.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(MemoryMap, SmallModelPlacementByHand) {
  // h 8, f 16, 2 heads of 4, 1 KV head, 1 layer, vocabulary 10, tied: 680 parameters.
  ModelConfig m;
  m.hidden_size = 8, m.intermediate_size = 16, m.num_attention_heads = 2, m.num_key_value_heads = 1;
  m.head_dim = 4, m.num_hidden_layers = 1, m.vocab_size = 10, m.tie_word_embeddings = true;
  HwConfig hw;
  hw.group.cubes = 1, hw.cube.pes = 3;
  const MemoryMap map = plan_memory(m, DType::fp32, hw);
  ASSERT_EQ(map.params, 680);
  ASSERT_EQ(map.pes, 3);
  // Every tensor gives each PE floor(cols / 3) columns; its cols mod 3 extra columns (of `rows`
  // elements, 4 bytes each) go to the least loaded PEs, lower index first on ties. Extra
  // elements so far [PE0, PE1, PE2] after each tensor:
  //   ln (1x8) +1 PE0 PE1 [1,1,0] | q (8x8) +8 PE2 PE0 [9,1,8] | k (8x4) +8 PE1 [9,9,8]
  //   v (8x4) +8 PE2 [9,9,16] | o (8x8) +8 PE0 PE1 [17,17,16] | post ln (1x8) +1 PE2 PE0 [18,17,17]
  //   gate (8x16) +8 PE1 [18,25,17] | up (8x16) +8 PE2 [18,25,25] | down (16x8) +16 PE0 PE1 [34,41,25]
  //   embed (8x10) +8 PE2 [34,41,33] | norm (1x8) +1 PE2 PE0 [35,41,34]; the even part is 190 per PE.
  EXPECT_EQ(map.weight_bytes_per_pe, (std::vector<uint64_t>{4 * (190 + 35), 4 * (190 + 41), 4 * (190 + 34)}));
  EXPECT_EQ(map.weight_bytes_max_pe, 4u * 231);
  EXPECT_EQ(map.kv_bytes_per_token, 1u * 4 * 2 * 4);  // 1 layer x 1 KV head x d 4 x (K, V) x fp32
}

TEST(MemoryMap, RealModelsSpreadEvenlyOverTheChip) {
  for (const char* name : {"llama-3-8b", "mistral-7b", "qwen2.5-7b", "mixtral-8x7b", "llama-3.2-1b"}) {
    const ModelConfig m = load_model(name);
    for (int groups : {1, 3, 8}) {
      HwConfig hw;
      hw.groups = groups;
      const MemoryMap map = plan_memory(m, DType::fp16, hw);
      ASSERT_EQ(map.pes, groups * 32) << name;
      const uint64_t sum = std::accumulate(map.weight_bytes_per_pe.begin(), map.weight_bytes_per_pe.end(), uint64_t(0));
      EXPECT_EQ(sum, uint64_t(total_params(m)) * 2) << name;
      EXPECT_EQ(map.weight_bytes, sum) << name;
      // No PE holds more than the even share plus one column of the tallest tensor (the FFN's
      // down projection, intermediate_size rows), nor less than the share minus one.
      const uint64_t share = sum / uint64_t(map.pes), column = uint64_t(m.intermediate_size) * 2;
      const auto [lo, hi] = std::minmax_element(map.weight_bytes_per_pe.begin(), map.weight_bytes_per_pe.end());
      EXPECT_LE(*hi, share + column) << name << " groups " << groups;
      EXPECT_GE(*lo + column, share) << name << " groups " << groups;
      EXPECT_EQ(map.weight_bytes_max_pe, *hi);
      EXPECT_EQ(map.kv_bytes_per_token, uint64_t(m.num_hidden_layers) * uint64_t(m.num_key_value_heads) *
                                            uint64_t(m.head_dim) * 2 * 2);
    }
  }
}

TEST(MemoryMap, ShortfallNamesBytesAndTheFix) {
  const ModelConfig m = load_model("mixtral-8x7b");
  HwConfig hw;  // one group: 32 PEs x 2 GiB = 64 GiB, less than Mixtral's 93.4 GB in fp16
  const MemoryMap map = plan_memory(m, DType::fp16, hw);
  const uint64_t s = slot(m, DType::fp16, 1);
  const std::string e = shortfall(map, s);
  ASSERT_NE(e, "");
  const uint64_t need = map.weight_bytes_max_pe + s;
  EXPECT_NE(e.find("model weights do not fit"), std::string::npos) << e;
  EXPECT_NE(e.find("46702792704 parameters are 93405585408 bytes over 32 PEs"), std::string::npos) << e;
  EXPECT_NE(e.find("hw.json: pe.hbm.capacity_bytes = 2147483648: short by " + std::to_string(need - hw.pe.hbm.capacity_bytes) +
                   " bytes per PE; raise pe.hbm.capacity_bytes to at least " + std::to_string(need)),
            std::string::npos) << e;
  // Both proposed changes make it fit.
  HwConfig bigger = hw;
  bigger.pe.hbm.capacity_bytes = need;
  EXPECT_EQ(shortfall(plan_memory(m, DType::fp16, bigger), s), "");
  std::smatch g;
  ASSERT_TRUE(std::regex_search(e, g, std::regex("groups to about ([0-9]+)"))) << e;
  HwConfig more = hw;
  more.groups = std::stoi(g[1]);
  EXPECT_EQ(more.groups, 2);  // 93.4 GB over 64 PEs: 1.46 GB per PE
  EXPECT_EQ(shortfall(plan_memory(m, DType::fp16, more), slot(m, DType::fp16, more.groups)), "");
  // LLaMA-3-8B fits one group even in fp32 (32.1 GB over 64 GiB).
  const ModelConfig llama = load_model("llama-3-8b");
  EXPECT_EQ(shortfall(plan_memory(llama, DType::fp32, hw), slot(llama, DType::fp32, 1)), "");
}
