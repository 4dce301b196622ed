// The MoE router (runtime/model/moe_router.h): softmax, top-k and the renormalised weights
// against hand-computed values, ties, the per-expert rows; the seeded logits depend on the
// token alone (same seed -> same experts, whatever the batch), and the expert names of the
// memory map (runtime/model/memory_map.h).
#include <cmath>
#include <numeric>

#include <gtest/gtest.h>

#include "runtime/model/memory_map.h"
#include "runtime/model/moe_router.h"

using namespace ahbm;

TEST(MoeRouter, TopKOfTheSoftmaxWithWeightsRenormalised) {
  // 3 rows, 4 experts, top 2.
  const std::vector<float> logits = {1.0f, 3.0f, 2.0f, 0.0f,    // experts 1 (3), 2 (2)
                                     0.5f, 0.5f, 0.5f, 0.5f,    // a 4-way tie: the lower indices 0, 1
                                     -1.0f, 4.0f, -2.0f, 4.5f};  // 3 (4.5), 1 (4)
  const Routing r = route(logits.data(), 3, 4, 2);
  ASSERT_EQ(r.rows(), 3);
  EXPECT_EQ(r.expert, (std::vector<int>{1, 2, 0, 1, 3, 1}));
  // Over the kept two the softmax is 1 / (1 + e^(l2 - l1)): the dropped experts cancel.
  const auto w = [](double a, double b) { return 1.0 / (1.0 + std::exp(b - a)); };
  EXPECT_NEAR(r.weight[0], w(3, 2), 1e-7);
  EXPECT_NEAR(r.weight[1], w(2, 3), 1e-7);
  EXPECT_NEAR(r.weight[2], 0.5, 1e-7);
  EXPECT_NEAR(r.weight[3], 0.5, 1e-7);
  EXPECT_NEAR(r.weight[4], w(4.5, 4), 1e-7);
  EXPECT_NEAR(r.weight[5], w(4, 4.5), 1e-7);
  EXPECT_EQ(r.expert_rows(), (std::vector<int>{1, 3, 1, 1}));
  EXPECT_EQ(r.rows_of_expert(), (std::vector<std::vector<int>>{{1}, {0, 1, 2}, {0}, {2}}));
  EXPECT_FLOAT_EQ(r.weight_of(2, 3), r.weight[4]);
  EXPECT_EQ(r.weight_of(2, 0), 0.0f);
  // top_k = E keeps every expert with its plain softmax weight.
  const Routing all = route(logits.data(), 1, 4, 4);
  const double z = std::exp(1.0) + std::exp(3.0) + std::exp(2.0) + std::exp(0.0);
  EXPECT_NEAR(all.weight_of(0, 3), std::exp(0.0) / z, 1e-7);
  EXPECT_THROW(route(logits.data(), 1, 4, 5), std::invalid_argument);
}

TEST(MoeRouter, SeededLogitsFollowTheTokenNotTheBatch) {
  // Same seed -> the same experts for a token, alone or in any batch; another seed or layer
  // routes differently; over many tokens every expert gets about its share (8 experts, top 2).
  const std::vector<TokenId> a = {{0, 5}, {1, 5}, {0, 6}};
  const std::vector<TokenId> b = {{0, 6}, {2, 9}, {0, 5}};
  const std::vector<float> la = seeded_router_logits(7, 3, a, 8), lb = seeded_router_logits(7, 3, b, 8);
  for (int e = 0; e < 8; ++e) {
    EXPECT_EQ(la[size_t(e)], lb[size_t(16 + e)]);      // token (0, 5)
    EXPECT_EQ(la[size_t(16 + e)], lb[size_t(e)]);      // token (0, 6)
  }
  EXPECT_EQ(seeded_router_logits(7, 3, a, 8), la);
  EXPECT_NE(seeded_router_logits(8, 3, a, 8), la);
  EXPECT_NE(seeded_router_logits(7, 4, a, 8), la);
  std::vector<TokenId> many;
  for (int p = 0; p < 4096; ++p) many.push_back({p % 3, p});
  const std::vector<float> l = seeded_router_logits(1, 0, many, 8);
  const Routing r = route(l.data(), 4096, 8, 2);
  const std::vector<int> n = r.expert_rows();
  EXPECT_EQ(std::accumulate(n.begin(), n.end(), 0), 2 * 4096);
  for (int e = 0; e < 8; ++e) {  // 1024 each on average; binomial sd ≈ 28
    EXPECT_GT(n[size_t(e)], 900) << e;
    EXPECT_LT(n[size_t(e)], 1150) << e;
  }
}

TEST(MoeRouter, ExpertTensorNames) {
  EXPECT_EQ(expert_tensor("mlp.gate_proj", 3), "mlp.experts.3.gate_proj");
  EXPECT_EQ(base_tensor("mlp.experts.3.gate_proj"), "mlp.gate_proj");
  EXPECT_EQ(base_tensor("mlp.experts.12.down_proj"), "mlp.down_proj");
  EXPECT_EQ(base_tensor("self_attn.q_proj"), "self_attn.q_proj");
}
