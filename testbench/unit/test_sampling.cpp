// Sampled serving's parts (runtime/serve/sampling.h): the online fit, the error statistics behind
// the intervals, Student's t, the sampler's decisions and the spec's reader.
#include <gtest/gtest.h>

#include <cmath>

#include "hw/common/base/error.h"
#include "runtime/serve/sampling.h"
#include "runtime/serve/serve_summary.h"

namespace ahbm::serve {
namespace {

StepFeatures features(double rows, double kv, double busiest) {
  StepFeatures x{};
  x[0] = 1;
  x[1] = rows;
  x[2] = rows;
  x[3] = kv;
  x[5] = rows;
  x[7] = busiest;
  return x;
}

// A cost that is linear in the features is recovered to rounding, whatever the weights and the
// fading (an exact fit has no residual to weigh), including far from the first samples' scales.
TEST(Sampling, TheFitRecoversALinearCost) {
  LinearFit f;
  const auto cost = [](const StepFeatures& x) { return 5000.0 + 120.0 * x[1] + 3.5 * x[3] + 40.0 * x[7]; };
  for (int i = 0; i < 60; ++i) {
    const StepFeatures x = features(1 + i % 7, 300.0 * (i + 1) + 17 * (i % 5), 10 + (i * 7) % 23);
    f.add(x, cost(x));
  }
  EXPECT_EQ(f.samples(), 60u);
  for (const StepFeatures& x : {features(3, 9000, 20), features(6, 1234, 31)})
    EXPECT_NEAR(f.predict(x) / cost(x), 1.0, 1e-6);
}

// Σ detailed / Σ predicted, and Cochran's standard error of that ratio.
TEST(Sampling, ErrorStatsAreTheRatioEstimatorAndTheStepErrors) {
  const std::vector<HeldBack> h = {{100, 110, 0}, {200, 190, 1}, {300, 330, 2}};
  const ErrorStats e = error_stats(h);
  EXPECT_EQ(e.n, 3u);
  EXPECT_NEAR(e.ratio, 630.0 / 600.0, 1e-12);
  EXPECT_NEAR(e.mean, (0.1 - 0.05 + 0.1) / 3, 1e-12);
  EXPECT_NEAR(e.max_abs, 0.1, 1e-12);
  double var = 0;
  for (const HeldBack& x : h) var += std::pow(x.detailed - e.ratio * x.predicted, 2);
  EXPECT_NEAR(e.ratio_se, std::sqrt(var / 2 / 3) / 200.0, 1e-12);
  EXPECT_EQ(error_stats({}).n, 0u);
}

TEST(Sampling, StudentsTQuantile) {
  EXPECT_NEAR(t_quantile_975(1), 12.706, 1e-3);
  EXPECT_NEAR(t_quantile_975(7), 2.365, 1e-3);
  EXPECT_NEAR(t_quantile_975(15), 2.131, 2e-3);
  EXPECT_NEAR(t_quantile_975(30), 2.042, 2e-3);
  EXPECT_NEAR(t_quantile_975(100000), 1.960, 1e-3);
  EXPECT_THROW(t_quantile_975(0), std::logic_error);
}

// Warmup, probation (every step held back until `window` were), then the systematic sample; a
// step beyond the box seen is simulated; an error above the target puts the class back on
// probation.
TEST(Sampling, TheSamplerDecidesWarmupProbationSampleAndNovelty) {
  SamplingSpec spec;
  spec.warmup = 4;
  spec.window = 3;
  spec.period = 5;
  StepSampler s(spec);
  SamplingClass& c = s.klass("hw", "chip", false);
  const auto cost = [](const StepFeatures& x) { return CostVector{1000.0 + 10 * x[3], 1e-3, 1e-4, 100 * x[3]}; };
  int i = 0;
  const auto next = [&] { return features(2, 1000 + 10 * (i++ % 9), 8); };
  using Use = StepSampler::Use;
  for (int k = 0; k < 4; ++k) {
    const StepFeatures x = next();
    ASSERT_EQ(s.decide(c, x), Use::warmup);
    s.learn(c, x, cost(x), Use::warmup);
  }
  for (int k = 0; k < 3; ++k) {
    const StepFeatures x = next();
    ASSERT_EQ(s.decide(c, x), Use::held_back);
    const CostVector p = s.predict(c, x);
    EXPECT_NEAR(p.ns / cost(x).ns, 1.0, 1e-6);
    s.held_back(c, p, cost(x), double(k));
    s.learn(c, x, cost(x), Use::held_back);
  }
  EXPECT_FALSE(c.probation);
  int held = 0, predicted = 0;
  for (int k = 0; k < 20; ++k) {
    const Use u = s.decide(c, next());
    held += u == Use::held_back;
    predicted += u == Use::predicted;
  }
  EXPECT_EQ(held, 4);  // one in `period`
  EXPECT_EQ(predicted, 16);
  EXPECT_EQ(s.decide(c, features(2, 5000, 8)), Use::novel);  // KV beyond 1.25 x the largest seen
  // A step 10% off: the error of the last window is above the 2% target.
  const StepFeatures x = next();
  CostVector wrong = cost(x);
  wrong.ns *= 1.1;
  s.held_back(c, s.predict(c, x), wrong, 99.0);
  EXPECT_TRUE(c.probation);
  EXPECT_EQ(s.decide(c, next()), Use::held_back);
}

TEST(Sampling, TheSpecsBadValuesAreInputErrorsNamingTheField) {
  const auto read = [](const char* text) { return read_sampling(JsonReader(Json::parse(text), "w.json")); };
  EXPECT_EQ(read("{}").period, 10);
  EXPECT_EQ(read("{}").replays, 8);
  try {
    read(R"({"period": 64, "max_period": 32})");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("max_period"), std::string::npos) << e.what();
  }
  try {
    read(R"({"replays": 1})");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("replays"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read("{}").operator_grid, 0);  // off: every row count simulated
  EXPECT_EQ(read("{}").operator_exact_rows, 64);
  EXPECT_EQ(read("{}").operator_check, 8);
  EXPECT_EQ(read(R"({"operator_grid": 16})").operator_grid, 16);
  try {
    read(R"({"operator_grid": -2})");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("operator_grid"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("-2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read(R"({"operator_check": -1})"), InputError);
  EXPECT_THROW(read(R"({"target_error": -1})"), InputError);
  EXPECT_THROW(read(R"({"perod": 4})"), InputError);  // unknown key
}

}  // namespace
}  // namespace ahbm::serve
