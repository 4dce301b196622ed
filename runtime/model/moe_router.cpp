#include "runtime/model/moe_router.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "runtime/numerics/tensor_gen.h"

namespace ahbm {

std::vector<std::vector<int>> Routing::rows_of_expert() const {
  std::vector<std::vector<int>> out(static_cast<size_t>(experts));
  for (int r = 0; r < rows(); ++r)
    for (int i = 0; i < top_k; ++i) out[size_t(expert[size_t(r * top_k + i)])].push_back(r);
  for (auto& rows : out) std::sort(rows.begin(), rows.end());
  return out;
}

std::vector<int> Routing::expert_rows() const {
  std::vector<int> n(size_t(experts), 0);
  for (int e : expert) ++n[size_t(e)];
  return n;
}

float Routing::weight_of(int r, int e) const {
  for (int i = 0; i < top_k; ++i)
    if (expert[size_t(r * top_k + i)] == e) return weight[size_t(r * top_k + i)];
  return 0.0f;
}

Routing route(const float* logits, int rows, int experts, int top_k) {
  if (experts < 1 || top_k < 1 || top_k > experts) throw std::invalid_argument("route: top_k must be in [1, experts]");
  Routing r;
  r.experts = experts;
  r.top_k = top_k;
  std::vector<int> order(static_cast<size_t>(experts));
  std::vector<double> p(static_cast<size_t>(experts));
  for (int row = 0; row < rows; ++row) {
    const float* l = logits + size_t(row) * size_t(experts);
    // Softmax in float64 (the router's few values: host arithmetic), then the k largest.
    const double mx = *std::max_element(l, l + experts);
    double sum = 0;
    for (int e = 0; e < experts; ++e) sum += (p[size_t(e)] = std::exp(double(l[e]) - mx));
    for (double& v : p) v /= sum;
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return p[size_t(a)] > p[size_t(b)]; });
    double kept = 0;
    for (int i = 0; i < top_k; ++i) kept += p[size_t(order[size_t(i)])];
    for (int i = 0; i < top_k; ++i) {
      r.expert.push_back(order[size_t(i)]);
      r.weight.push_back(float(p[size_t(order[size_t(i)])] / kept));
    }
  }
  return r;
}

std::vector<float> seeded_router_logits(uint64_t seed, int layer, const std::vector<TokenId>& tokens, int experts) {
  std::vector<float> out;
  out.reserve(tokens.size() * size_t(experts));
  // Generator "head" numbers the layer (negative: apart from the operators' ids, layer_plan.h).
  for (const TokenId& t : tokens)
    for (int e = 0; e < experts; ++e) out.push_back(tensor_value(seed, TensorKind::activation, -1 - layer, t.seq, t.position, e));
  return out;
}

}  // namespace ahbm
