// The float64 reference (runtime/numerics/reference.cpp: one pass over the keys with running maxima and
// sums) against the textbook definition computed here directly, score row by score row with a
// two-pass softmax in long double: within 1e-12 of the largest output on random inputs that
// cross its pass and block boundaries, with masked keys, rows that see nothing, rows whose
// first visible key comes late, and scores large enough that exp() overflows without a max.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "runtime/numerics/reference.h"

using namespace ahbm;

namespace {

// softmax(q k^T * scale, masked) v for one row at a time, long double, no blocking.
Eigen::MatrixXd textbook(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                         const std::vector<uint8_t>& mask, int d, double scale) {
  const size_t rows = q.size() / size_t(d), keys = k.size() / size_t(d);
  Eigen::MatrixXd out = Eigen::MatrixXd::Zero(long(rows), d);
  std::vector<long double> score(keys);
  for (size_t r = 0; r < rows; ++r) {
    long double top = -INFINITY;
    for (size_t c = 0; c < keys; ++c) {
      if (!mask[r * keys + c]) continue;
      long double dot = 0;
      for (int x = 0; x < d; ++x) dot += (long double)q[r * size_t(d) + size_t(x)] * k[c * size_t(d) + size_t(x)];
      score[c] = dot * scale;
      top = std::max(top, score[c]);
    }
    if (top == -INFINITY) continue;
    long double total = 0;
    for (size_t c = 0; c < keys; ++c)
      if (mask[r * keys + c]) total += (score[c] = std::exp(score[c] - top));
    for (int x = 0; x < d; ++x) {
      long double o = 0;
      for (size_t c = 0; c < keys; ++c)
        if (mask[r * keys + c]) o += score[c] / total * v[c * size_t(d) + size_t(x)];
      out(long(r), x) = double(o);
    }
  }
  return out;
}

struct Case {
  int rows, keys, d;
};

}  // namespace

TEST(Reference, OnePassAgreesWithTheTextbookSoftmax) {
  std::mt19937_64 rng(20);
  // Sizes around the pass (256 keys) and row-block (256 rows) boundaries.
  for (const Case& c : std::vector<Case>{{1, 1, 8}, {3, 255, 16}, {17, 257, 32}, {256, 513, 16},
                                         {300, 700, 64}, {40, 1030, 128}, {9, 600, 16}}) {
    for (float magnitude : {1.0f, 8.0f}) {  // of Q and K: 8 makes scores of several hundred
      std::uniform_real_distribution<float> val(-magnitude, magnitude), unit(-1.f, 1.f);
      std::bernoulli_distribution visible(0.7);
      std::vector<float> q(size_t(c.rows * c.d)), k(size_t(c.keys * c.d)), v(size_t(c.keys * c.d));
      for (float& x : q) x = val(rng);
      for (float& x : k) x = val(rng);
      for (float& x : v) x = unit(rng);
      std::vector<uint8_t> mask(size_t(c.rows) * size_t(c.keys));
      for (auto& m : mask) m = visible(rng);
      // Row 0 sees nothing; the last row (when there are two or more) sees only the last key,
      // in the last pass over the keys.
      std::fill_n(mask.begin(), c.keys, uint8_t(0));
      if (c.rows > 1) {
        std::fill_n(mask.end() - c.keys, c.keys, uint8_t(0));
        mask.back() = 1;
      }
      const double scale = 1.0 / std::sqrt(double(c.d));
      const Eigen::MatrixXd want = textbook(q, k, v, mask, c.d, scale);
      const Eigen::MatrixXd got = reference_attention_masked(q, k, v, mask, c.d, scale);
      ASSERT_EQ(got.rows(), c.rows);
      const double largest = want.cwiseAbs().maxCoeff();
      EXPECT_LE((got - want).cwiseAbs().maxCoeff(), 1e-12 * std::max(largest, 1e-300))
          << c.rows << " rows x " << c.keys << " keys, d = " << c.d << ", magnitude " << magnitude;
      EXPECT_TRUE(got.row(0).isZero(0.0));
      if (c.rows > 1) {  // one visible key: its V row exactly
        for (int x = 0; x < c.d; ++x) EXPECT_EQ(got(c.rows - 1, x), double(v[size_t((c.keys - 1) * c.d + x)]));
      }
    }
  }
}

// A job's shards are read in place, chunk after chunk: the same as the keys flattened.
TEST(Reference, JobShardsGiveTheFlattenedResult) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> val(-2.f, 2.f);
  AttentionJob job;
  job.head_dim = 32;
  job.agents = {"a", "b"};
  for (int r = 0; r < 50; ++r) job.rows.push_back({r % 2, 1000 + r});
  job.q.resize(size_t(50 * 32));
  for (float& x : job.q) x = val(rng);
  std::vector<float> k, v;
  std::vector<KvInfo> info;
  for (int tokens : {0, 300, 7, 260}) {  // an empty shard, and shards crossing a pass
    KvShard s;
    s.tokens = tokens;
    for (int t = 0; t < tokens; ++t) {
      const int n = int(info.size());
      s.info.push_back({n % 5 == 0 ? n % 2 : kSharedOwner, n + 500});
      for (int x = 0; x < 32; ++x) s.k.push_back(val(rng)), s.v.push_back(val(rng));
    }
    info.insert(info.end(), s.info.begin(), s.info.end());
    k.insert(k.end(), s.k.begin(), s.k.end());
    v.insert(v.end(), s.v.begin(), s.v.end());
    job.shards.push_back(std::move(s));
  }
  const double scale = 0.2;
  const Eigen::MatrixXd flat = reference_attention(job.q, job.rows, k, v, info, 32, scale);
  const Eigen::MatrixXd want = textbook(job.q, k, v, visibility_mask(job.rows, info), 32, scale);
  EXPECT_LE((reference_attention(job, scale) - flat).cwiseAbs().maxCoeff(), 1e-12 * flat.cwiseAbs().maxCoeff());
  EXPECT_LE((flat - want).cwiseAbs().maxCoeff(), 1e-12 * want.cwiseAbs().maxCoeff());
}
