// Statistics of successive steps fold into the run's, each counter by its own rule, with means
// weighted by the simulated time each side covers (the timeline's position, gaps included).
#include <gtest/gtest.h>

#include "runtime/step/timeline.h"

using namespace ahbm;

namespace {

constexpr stats::Sum<uint64_t> kPackets{"packets", "packets", "packets delivered"};
constexpr stats::TimeMeanNs kAvg{"avg_ns", "ns", "mean packet latency"};
constexpr stats::Max<double> kWorst{"max_ns", "ns", "worst packet latency"};

SimResult step(uint64_t packets, double avg, double worst, double end_ns) {
  SimResult r;
  r.end_ns = end_ns;
  r.spans = std::make_unique<SpanRecorder>();
  r.trace = std::make_unique<TraceSink>(false);
  r.stats.set(kPackets, packets);
  r.stats.set(kAvg, avg);
  r.stats.set(kWorst, worst);
  return r;
}

}  // namespace

TEST(RuntimeTimeline, StepsMergeByTheirCountersRulesWeightedByTimelinePosition) {
  Timeline tl(false);
  tl.append(step(3, 10.0, 12.0, 300.0));
  tl.advance(100.0);  // a host-side wait: the first step's mean now covers 400 ns
  tl.append(step(1, 40.0, 50.0, 100.0));
  SimResult out;
  tl.finish_into(out);
  EXPECT_NEAR(out.end_ns, 500.0, 1e-9);  // sc_time sums: within rounding
  EXPECT_EQ(out.stats.get(kPackets), 4u);
  EXPECT_DOUBLE_EQ(out.stats.get(kAvg), (10.0 * 400 + 40.0 * 100) / 500);
  EXPECT_EQ(out.stats.get(kWorst), 50.0);
}

TEST(RuntimeTimeline, FirstStepIsTakenAsIs) {
  Timeline tl(false);
  tl.append(step(7, 3.5, 4.0, 20.0));
  SimResult out;
  tl.finish_into(out);
  EXPECT_EQ(out.stats.get(kPackets), 7u);
  EXPECT_EQ(out.stats.get(kAvg), 3.5);
}
