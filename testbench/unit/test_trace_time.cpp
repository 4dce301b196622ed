// trace.json's time text (runtime/report/trace_time.h): whole ns written as the exact decimal of
// µs, read back exactly by an exact reader and by Perfetto's rule.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "runtime/report/trace_time.h"
#include "test_trace_exact.h"

using namespace ahbm;

namespace {

// Perfetto's JSON importer as read in its source (trace_time.h names it): an integer token is µs
// times 1000; a number with a fraction is parsed as integer part + fraction digits / 10^digits in
// doubles and converted with llround(value * 1000).
int64_t perfetto_ns(const std::string& text) {
  const size_t dot = text.find('.');
  if (dot == std::string::npos) return std::stoll(text) * 1000;
  const std::string frac = text.substr(dot + 1);
  const double value = double(std::stoll(text.substr(0, dot))) + double(std::stoll(frac)) / std::pow(10.0, double(frac.size()));
  return std::llround(value * 1000.0);
}

}  // namespace

TEST(TraceTime, WholeNsAsExactDecimalMicroseconds) {
  EXPECT_EQ(report::trace_us_text(94329), "94.329");
  EXPECT_EQ(report::trace_us_text(94300), "94.3");
  EXPECT_EQ(report::trace_us_text(94030), "94.03");
  EXPECT_EQ(report::trace_us_text(94000), "94");
  EXPECT_EQ(report::trace_us_text(1), "0.001");
  EXPECT_EQ(report::trace_us_text(0), "0");
  EXPECT_EQ(report::trace_us_text(-1), "-0.001");
  EXPECT_EQ(report::trace_us_text(123456789012345), "123456789012.345");
  EXPECT_EQ(report::whole_ns(94328.5), 94329);
  EXPECT_EQ(report::whole_ns(94328.4999), 94328);
}

TEST(TraceTime, ExactAndPerfettoReadersGetTheNanosecondsBack) {
  // Every ns of the first 2 ms (where 1-ulp errors of ns / 1e3 used to show) and spot values up
  // to an hour of simulated time.
  for (int64_t ns = 0; ns <= 2000000; ++ns) {
    const std::string t = report::trace_us_text(ns);
    ASSERT_EQ(test::exact_ns(t), ns) << t;
    ASSERT_EQ(perfetto_ns(t), ns) << t;
  }
  for (int64_t ns = 1; ns < 3600000000000; ns = ns * 7 + 13) {
    const std::string t = report::trace_us_text(ns);
    ASSERT_EQ(test::exact_ns(t), ns) << t;
    ASSERT_EQ(perfetto_ns(t), ns) << t;
  }
  // ts + dur is the end exactly in integer ns, as the writers compute dur from rounded ends.
  const int64_t start = report::whole_ns(94328.6), end = report::whole_ns(94328.6 + 0.8);
  EXPECT_EQ(*test::exact_ns(report::trace_us_text(start)) + *test::exact_ns(report::trace_us_text(end - start)), end);
}

TEST(TraceTime, ExactReaderRefusesFractionsOfANanosecond) {
  EXPECT_EQ(test::exact_ns("94.32900000000001"), std::nullopt);
  EXPECT_EQ(test::exact_ns("94.3295"), std::nullopt);
  EXPECT_EQ(test::exact_ns("1.5e-3"), std::nullopt);
  EXPECT_EQ(test::exact_ns("94.3290"), 94329);
  EXPECT_EQ(test::exact_ns("1.5e3"), 1500000);  // an exponent moves the point, exactly
  EXPECT_EQ(test::exact_ns("2"), 2000);
  EXPECT_EQ(test::exact_ns("-2.5"), std::nullopt);  // no trace time is negative
}
