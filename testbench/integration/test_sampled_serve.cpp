// Sampled serving (issue 40; runtime/serve/sampling.h, sampled_serve.cpp, docs/serving.md "Sampled
// serving"): the same engine with steps predicted, against the exact run of the same workload.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "runtime/serve/engine.h"
#include "runtime/serve/serve_summary.h"
#include "runtime/serve/workload.h"
#include "test_files.h"
#include "test_runtime_support.h"
#include "test_support.h"

namespace ahbm {
namespace {

using serve::ServeSummary;
using serve::Workload;

// A small whole model (test_pipeline_parallel.cpp's) serving 300 chats of drawn lengths arriving
// as a Poisson stream: a few hundred steps, the batch and its contexts changing all along.
Workload chats(const Json& sampling) {
  const std::string dir = test::temp_dir("sampled");
  Json s = {{"name", "m"},
            {"model", {{"hidden_size", 256}, {"intermediate_size", 512}, {"num_attention_heads", 4},
                       {"num_key_value_heads", 2}, {"num_hidden_layers", 2}, {"vocab_size", 1000}, {"head_dim", 64},
                       {"dtype", "fp16"}}},
            {"kv", {{"page_tokens", 16}}},
            {"shared_prefix_tokens", 64},
            {"seed", 3},
            {"agents", {{{"name", "a0"}, {"new_tokens", 4}}}},
            {"phases", {{{"type", "prefill"}, {"tokens", 32}}, {{"type", "fanout"}}}}};
  test::write_temp(dir, "m.json", s.dump());
  Json w = {{"name", "chats"},
            {"scenario", "m.json"},
            {"seed", 11},
            {"arrival", {{"process", "poisson"}, {"rate_per_s", 3000}, {"count", 300}}},
            {"templates", {{{"name", "chat"}, {"prompt_tokens", 300}, {"answer_tokens", {{"uniform", {8, 48}}}}}}},
            {"scheduler", {{"step_cache", false}}},
            {"slo", {{"ttft_ns", 400000}, {"tpot_ns", 20000}}}};
  if (!sampling.is_null()) w["sampling"] = sampling;
  const std::string file = test::write_temp(dir, "w.json", w.dump());
  return serve::parse_workload(w, file);
}

struct Served {
  serve::ServeResult result;
  ServeSummary summary;
};

Served serve_it(const Workload& w) {
  const HwConfig hw = test::small_hw(2, 4);
  Served s{serve::serve(w, hw, {}), {}};
  s.summary = serve::serve_summary(w, hw, s.result);
  return s;
}

const Json kSampling = {{"warmup", 12}, {"window", 8}, {"period", 4}, {"replays", 6}, {"seed", 3}};

// With every step simulated (a warmup longer than the run), sampled serving is the exact run.
TEST(SampledServe, EveryStepDetailedIsTheExactRun) {
  const Served exact = serve_it(chats(nullptr));
  const Served all = serve_it(chats({{"warmup", 1000000}, {"replays", 0}}));
  ASSERT_TRUE(all.summary.sampling);
  EXPECT_EQ(all.summary.sampling->predicted, 0);
  EXPECT_FALSE(exact.summary.sampling);
  EXPECT_FALSE(to_json(exact.summary).contains("sampling"));
  const auto e = serve::headline_metrics(exact.summary), a = serve::headline_metrics(all.summary);
  ASSERT_EQ(e.size(), a.size());
  for (size_t i = 0; i < e.size(); ++i) EXPECT_EQ(e[i].second, a[i].second) << e[i].first;
}

// Steps predicted, every headline metric within 2% of the exact run's and the exact value
// inside its reported 95% interval; the same seed gives the same summary.
TEST(SampledServe, HeadlineMetricsAreCloseToExactAndInsideTheirIntervals) {
  const Served exact = serve_it(chats(nullptr));
  const Served sampled = serve_it(chats(kSampling));
  ASSERT_TRUE(sampled.summary.sampling);
  const serve::SamplingSummary& s = *sampled.summary.sampling;
  EXPECT_EQ(s.steps, int64_t(exact.result.steps.size()));
  EXPECT_LT(s.detailed_fraction, 0.7);  // a short run: warmup and probation are most of it
  EXPECT_GT(s.predicted, 0);
  EXPECT_EQ(s.replays, 6);
  EXPECT_LT(sampled.result.steps_simulated, exact.result.steps_simulated);
  const auto e = serve::headline_metrics(exact.summary);
  ASSERT_EQ(e.size(), s.metrics.size());
  for (size_t i = 0; i < e.size(); ++i) {
    const serve::MetricInterval& m = s.metrics[i];
    ASSERT_EQ(m.name, e[i].first);
    EXPECT_NEAR(m.value, e[i].second, 0.02 * std::fabs(e[i].second) + 1e-12) << m.name;
    EXPECT_LE(m.low, e[i].second) << m.name;
    EXPECT_GE(m.high, e[i].second) << m.name;
  }
  Json a = to_json(sampled.summary), b = to_json(serve_it(chats(kSampling)).summary);
  a.erase("simulator");
  b.erase("simulator");
  EXPECT_EQ(a.dump(), b.dump());
}

// ServeOptions::stop_requested (ahbm-sim serve's Ctrl-C): the run ends at that step boundary, its
// result marked partial, the summary's distributions over what finished; a sampled run stopped so
// has no replays.
TEST(SampledServe, AStopRequestEndsTheRunAtAStepBoundaryMarkedPartial) {
  for (const Json& sampling : {Json(nullptr), kSampling}) {
    const Workload w = chats(sampling);
    const HwConfig hw = test::small_hw(2, 4);
    serve::ServeOptions opt;
    int boundaries = 0;
    opt.stop_requested = [&boundaries] { return ++boundaries == 40; };
    const serve::ServeResult r = serve::serve(w, hw, opt);
    EXPECT_TRUE(r.partial);
    EXPECT_TRUE(r.interrupted);
    EXPECT_NE(r.partial_reason.find("SIGINT"), std::string::npos) << r.partial_reason;
    const ServeSummary s = serve::serve_summary(w, hw, r);
    ASSERT_TRUE(s.partial);
    EXPECT_EQ(s.partial->workflows, 300u);
    EXPECT_GT(s.partial->workflows_finished, 0u);
    EXPECT_LT(s.partial->workflows_finished, 300u);
    EXPECT_EQ(s.requests.end_to_end.count, s.partial->requests_finished);
    EXPECT_GE(s.requests.end_to_end.min, 0.0);
    EXPECT_EQ(s.workflows.end_to_end.count, s.partial->workflows_finished);
    EXPECT_EQ(s.partial->simulated_ns, r.end_ns);
    EXPECT_TRUE(to_json(s).contains("partial"));
    if (r.sampling) {
      EXPECT_TRUE(r.sampling->replays.empty());
    }
  }
  EXPECT_FALSE(to_json(serve_it(chats(nullptr)).summary).contains("partial"));
}

// ServeOptions::stop_at_ns (ahbm-sim serve --stop-at-s): the run ends at the first step boundary at
// or after that simulated time, and what it simulated is the whole run's up to there: the same
// steps at the same times, the same requests finished at the same times. A sampled run's replays
// stop there too (the window's intervals); it is partial but not interrupted.
TEST(SampledServe, AStopTimeEndsTheRunThereWithTheWholeRunsPrefix) {
  const Workload w = chats(nullptr);
  const HwConfig hw = test::small_hw(2, 4);
  const serve::ServeResult whole = serve::serve(w, hw, {});
  serve::ServeOptions opt;
  opt.stop_at_ns = whole.end_ns / 2;
  const serve::ServeResult r = serve::serve(w, hw, opt);
  EXPECT_TRUE(r.partial);
  EXPECT_FALSE(r.interrupted);
  EXPECT_NE(r.partial_reason.find("--stop-at-s"), std::string::npos) << r.partial_reason;
  EXPECT_GE(r.end_ns, opt.stop_at_ns);
  EXPECT_LT(r.end_ns, whole.end_ns);
  ASSERT_GT(r.steps.size(), 10u);
  ASSERT_LT(r.steps.size(), whole.steps.size());
  EXPECT_LT(r.steps.back().start_ns, opt.stop_at_ns);  // no step starts at or after the stop
  EXPECT_GE(whole.steps[r.steps.size()].start_ns, opt.stop_at_ns);
  for (size_t i = 0; i < r.steps.size(); ++i) {
    EXPECT_EQ(r.steps[i].start_ns, whole.steps[i].start_ns) << "step " << i;
    EXPECT_EQ(r.steps[i].ns, whole.steps[i].ns) << "step " << i;
  }
  size_t finished = 0;
  ASSERT_LE(r.requests.size(), whole.requests.size());
  for (size_t i = 0; i < r.requests.size(); ++i) {
    if (r.requests[i].done_ns < 0) continue;
    ++finished;
    EXPECT_EQ(r.requests[i].done_ns, whole.requests[i].done_ns) << "request " << i;
    EXPECT_EQ(r.requests[i].first_token_ns, whole.requests[i].first_token_ns) << "request " << i;
  }
  EXPECT_GT(finished, 0u);
  EXPECT_LT(finished, whole.requests.size());
  const ServeSummary s = serve::serve_summary(w, hw, r);
  ASSERT_TRUE(s.partial);
  EXPECT_EQ(s.partial->requests_finished, finished);
  EXPECT_EQ(to_json(s)["partial"]["reason"], r.partial_reason);

  const Workload sampled = chats(kSampling);
  const serve::ServeResult rs = serve::serve(sampled, hw, opt);
  EXPECT_TRUE(rs.partial);
  ASSERT_TRUE(rs.sampling);
  EXPECT_EQ(rs.sampling->replays.size(), size_t(kSampling["replays"].get<int>() + 1));
  EXPECT_GE(rs.end_ns, opt.stop_at_ns);
  EXPECT_LT(rs.end_ns, whole.end_ns);
}

}  // namespace
}  // namespace ahbm
