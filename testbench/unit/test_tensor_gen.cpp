// The seeded tensor generator (runtime/numerics/tensor_gen.h): each element is a pure function of its
// coordinates, whatever order elements are generated in, and the draws are standard normal
// (moments, tail mass and the Kolmogorov-Smirnov distance against the normal CDF, computed in
// float64 here).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "runtime/numerics/tensor_gen.h"

using namespace ahbm;

TEST(TensorGen, AnElementIsTheSameWhateverOrderItIsGeneratedIn) {
  const int d = 128;
  std::vector<float> row(d);
  for (TensorKind kind : {TensorKind::q, TensorKind::k, TensorKind::v})
    for (int head : {0, 5})
      for (int64_t owner : {-1, 0, 3})
        for (int64_t pos : {0, 7, 32767}) {
          tensor_row(42, kind, head, owner, pos, d, row.data());
          for (int i = d - 1; i >= 0; --i)  // element by element, backwards
            ASSERT_EQ(row[size_t(i)], tensor_value(42, kind, head, owner, pos, i)) << pos << " " << i;
        }
  // K/V rows cached by KvValues: the same values whether a row is asked for first or last.
  KvValues forward(7, d, DType::fp32), backward(7, d, DType::fp32);
  std::vector<std::vector<float>> a, b(64);
  for (int p = 0; p < 64; ++p) a.emplace_back(forward.row(1, 2, p).k, forward.row(1, 2, p).k + d);
  for (int p = 63; p >= 0; --p) b[size_t(p)].assign(backward.row(1, 2, p).k, backward.row(1, 2, p).k + d);
  EXPECT_EQ(a, b);
  // Distinct coordinates give distinct values (no aliasing of the counter).
  EXPECT_NE(tensor_value(1, TensorKind::k, 0, 0, 1, 0), tensor_value(1, TensorKind::v, 0, 0, 1, 0));
  EXPECT_NE(tensor_value(1, TensorKind::k, 0, 0, 1, 0), tensor_value(2, TensorKind::k, 0, 0, 1, 0));
  EXPECT_NE(tensor_value(1, TensorKind::k, 0, 0, 1, 0), tensor_value(1, TensorKind::k, 0, 0, 2, 0));
  EXPECT_NE(tensor_value(1, TensorKind::k, 0, 0, 1, 0), tensor_value(1, TensorKind::k, 0, 1, 1, 0));
  EXPECT_NE(tensor_value(1, TensorKind::k, 0, 0, 1, 0), tensor_value(1, TensorKind::k, 1, 0, 1, 0));
}

TEST(TensorGen, DrawsAreStandardNormal) {
  const int d = 256, rows = 4096;  // 2^20 samples
  std::vector<double> x;
  x.reserve(size_t(d) * rows);
  std::vector<float> row(d);
  for (int p = 0; p < rows; ++p) {
    tensor_row(1, p % 2 ? TensorKind::k : TensorKind::q, p % 3, p % 5 - 1, p, d, row.data());
    x.insert(x.end(), row.begin(), row.end());
  }
  const double n = double(x.size());
  double m1 = 0, m2 = 0, m4 = 0, beyond3 = 0, tail = 0;
  for (double v : x) {
    m1 += v;
    m2 += v * v;
    m4 += v * v * v * v;
    beyond3 += std::fabs(v) > 3.0;
    tail += std::fabs(v) > 3.442619855899;  // the ziggurat's tail region
  }
  m1 /= n, m2 /= n, m4 /= n;
  // Standard errors at n = 2^20: mean 0.001, variance 0.0014, fourth moment 0.009; bounds at ~5.
  EXPECT_NEAR(m1, 0.0, 0.005);
  EXPECT_NEAR(m2, 1.0, 0.007);
  EXPECT_NEAR(m4, 3.0, 0.05);
  // P(|x| > 3) = 0.0026998, P(|x| > R) = 0.000576: counts within 5 standard errors.
  EXPECT_NEAR(beyond3 / n, 0.0026998, 5 * std::sqrt(0.0027 / n));
  EXPECT_NEAR(tail / n, 0.000576, 5 * std::sqrt(0.000576 / n));
  // Kolmogorov-Smirnov distance to the normal CDF, below the 0.1% critical value 1.95 / sqrt(n).
  std::sort(x.begin(), x.end());
  double ks = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double cdf = 0.5 * std::erfc(-x[i] / std::sqrt(2.0));
    ks = std::max({ks, std::fabs(cdf - double(i) / n), std::fabs(double(i + 1) / n - cdf)});
  }
  EXPECT_LT(ks, 1.95 / std::sqrt(n));
}
