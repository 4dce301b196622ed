// The one (m, l, o) merge: any reduction-tree shape gives the same result within fp32
// rounding, and the merged, normalised result equals a float64 softmax computed directly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "hw/common/model/attn_state.h"
#include "hw/common/model/engines.h"

using namespace ahbm;

namespace {

struct Blocks {
  int rows = 12, d = 16;
  std::vector<MatrixRM> scores, v;  // 32 shards of varying width
};

Blocks make_blocks(unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.f, 2.f);
  Blocks b;
  for (int p = 0; p < 32; ++p) {
    const int n = 1 + int(rng() % 40);
    MatrixRM s(b.rows, n), v(n, b.d);
    for (int i = 0; i < s.size(); ++i) s.data()[i] = nd(rng);
    for (int i = 0; i < v.size(); ++i) v.data()[i] = nd(rng);
    // Row 3 sees nothing in odd shards; row 5 sees nothing anywhere (must come out as zeros).
    for (int c = 0; c < n; ++c) {
      if (p % 2) s(3, c) = -std::numeric_limits<float>::infinity();
      s(5, c) = -std::numeric_limits<float>::infinity();
    }
    b.scores.push_back(s);
    b.v.push_back(v);
  }
  return b;
}

std::vector<AttnState> states(const Blocks& b) {
  std::vector<AttnState> out;
  for (size_t p = 0; p < b.scores.size(); ++p)
    out.push_back(block_state(b.scores[p], ConstMapRM(b.v[p].data(), b.v[p].rows(), b.v[p].cols())));
  return out;
}

AttnState fold_left(std::vector<AttnState> s) {
  AttnState acc = s[0];
  for (size_t i = 1; i < s.size(); ++i) merge_into(acc, s[i]);
  return acc;
}

AttnState tree(const std::vector<AttnState>& s, size_t lo, size_t hi) {
  if (hi - lo == 1) return s[lo];
  AttnState left = tree(s, lo, (lo + hi) / 2);
  merge_into(left, tree(s, (lo + hi) / 2, hi));
  return left;
}

// 8 PEs per CUBE, then 4 CUBEs (the hardware's hierarchy).
AttnState hierarchical(const std::vector<AttnState>& s) {
  std::vector<AttnState> cubes;
  for (int c = 0; c < 4; ++c) cubes.push_back(fold_left({s.begin() + c * 8, s.begin() + (c + 1) * 8}));
  AttnState root = cubes[0];
  merge_into(root, cubes[1]);
  AttnState right = cubes[2];
  merge_into(right, cubes[3]);
  merge_into(root, right);
  return root;
}

}  // namespace

TEST(AttnState, TreeShapeDoesNotChangeResult) {
  const Blocks b = make_blocks(11);
  const std::vector<AttnState> s = states(b);
  std::vector<AttnState> shuffled = s;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(4));
  std::vector<AttnState> reversed(s.rbegin(), s.rend());
  const MatrixRM ref = normalise(fold_left(s));
  for (const MatrixRM& other : {normalise(tree(s, 0, s.size())), normalise(hierarchical(s)),
                                normalise(fold_left(shuffled)), normalise(fold_left(reversed))}) {
    ASSERT_TRUE(other.allFinite());
    EXPECT_LT((other - ref).cwiseAbs().maxCoeff(), 1e-5f);
  }
}

TEST(AttnState, MergedStateEqualsFloat64Softmax) {
  const Blocks b = make_blocks(12);
  const MatrixRM o = normalise(hierarchical(states(b)));
  for (int r = 0; r < b.rows; ++r) {
    // Independent float64 softmax over the concatenation of all shards.
    std::vector<double> sc, w;
    std::vector<const float*> vrows;
    for (size_t p = 0; p < b.scores.size(); ++p)
      for (int c = 0; c < b.scores[p].cols(); ++c) {
        sc.push_back(b.scores[p](r, c));
        vrows.push_back(&b.v[p](c, 0));
      }
    const double mx = *std::max_element(sc.begin(), sc.end());
    std::vector<double> ref(size_t(b.d), 0.0);
    if (std::isfinite(mx)) {
      double sum = 0;
      for (double x : sc) sum += std::exp(x - mx);
      for (size_t j = 0; j < sc.size(); ++j)
        for (int i = 0; i < b.d; ++i) ref[size_t(i)] += std::exp(sc[j] - mx) / sum * vrows[j][i];
    }
    for (int i = 0; i < b.d; ++i) EXPECT_NEAR(o(r, i), ref[size_t(i)], 1e-5) << "row " << r;
  }
  EXPECT_EQ(o.row(5).cwiseAbs().maxCoeff(), 0.f);  // no visible key: zeros, not NaN
}

TEST(AttnState, EmptyStateIsMergeIdentity) {
  const Blocks b = make_blocks(13);
  const AttnState s = states(b)[0];
  AttnState acc = AttnState::empty(b.rows, b.d);
  merge_into(acc, s);
  EXPECT_EQ(normalise(acc), normalise(s));
  AttnState same = s;
  merge_into(same, AttnState::empty(b.rows, b.d));
  EXPECT_EQ(normalise(same), normalise(s));
}
