#pragma once
// The router of an MoE layer (docs/models.md "MoE layers"): per token row, a softmax over the E
// expert logits (the router GEMM's output, M × E), the top k experts (ties: the lower index) and
// their weights renormalised over the k (Mixtral's router: softmax, top-k, divide by the sum).
// Timing-only runs have no router GEMM values: their logits come from the seeded generator per
// (layer, token), so the same seed routes the same tokens to the same experts in every run.
#include <cstdint>
#include <vector>

namespace ahbm {

struct Routing {
  int experts = 0, top_k = 0;
  std::vector<int> expert;    // rows × top_k, the highest probability first
  std::vector<float> weight;  // rows × top_k, each row summing to 1
  int rows() const { return top_k ? int(expert.size()) / top_k : 0; }
  // Per expert, the rows routed to it in increasing order (the rows its FFN GEMMs take).
  std::vector<std::vector<int>> rows_of_expert() const;
  // Per expert, how many rows were routed to it (Σ = rows × top_k).
  std::vector<int> expert_rows() const;
  // Row r's weight for expert e (0 when r is not routed to e).
  float weight_of(int r, int e) const;
};

// Routes `rows` rows of `experts` logits each (row-major). top_k in [1, experts].
Routing route(const float* logits, int rows, int experts, int top_k);

// A token's identity for the seeded router: its sequence and position in it.
struct TokenId {
  int64_t seq = 0, position = 0;
};
// Router logits of layer `layer` for `tokens` from the seeded generator (N(0, 1) per expert),
// row-major tokens × experts.
std::vector<float> seeded_router_logits(uint64_t seed, int layer, const std::vector<TokenId>& tokens, int experts);

}  // namespace ahbm
