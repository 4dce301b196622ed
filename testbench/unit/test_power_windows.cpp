// The power trace's windowing (runtime/report/power.h) on hand-made spans and segments, against
// hand-computed shares: a class's energy split among its spans by bytes or duration and spread
// over each span, static power and classes without a span uniform over their segment, an
// instant span in its window, the short last window, and the default window length.
#include <gtest/gtest.h>

#include "hw/common/base/error.h"
#include "runtime/report/power.h"

using namespace ahbm;
using report::PowerSegment;
using report::PowerTrace;

namespace {

sc_core::sc_time ns(double t) { return sc_core::sc_time(t, sc_core::SC_NS); }

double at(const PowerTrace& p, size_t k, EnergyClass c) { return p.windows[k][size_t(c)]; }

}  // namespace

TEST(PowerWindows, ClassEnergySharedAmongSpansByBytesOrDurationAndSpreadOverEach) {
  SpanRecorder spans;
  const int pe = spans.intern("group0.cube0.pe0"), dma = spans.intern("group0.cube0.pe0.dma");
  const int ph = spans.intern("fanout"), agent = spans.intern("a");
  // HBM: 10 bytes over [100, 300) and 30 bytes over [500, 600): shares 1/4 and 3/4.
  spans.record(ns(100), ns(300), dma, spans.intern("dma_kv"), ph, agent, 1, 10);
  spans.record(ns(500), ns(600), dma, spans.intern("dma_kv"), ph, agent, 1, 30);
  // GEMM: 100 ns over [150, 250) and 300 ns over [600, 900): shares 1/4 and 3/4 by duration.
  spans.record(ns(150), ns(250), pe, spans.intern("gemm_qk"), ph, agent, 1, 0);
  spans.record(ns(600), ns(900), pe, spans.intern("gemm_pv"), ph, agent, 1, 0);
  // A wait spends nothing of its own.
  spans.record(ns(0), ns(1000), dma, spans.intern("remap_wait"), ph, agent, 0, 1 << 20);
  PowerSegment step;
  step.start_ns = 0;
  step.ns = 1000;
  step.by_spans = true;
  step.joules[size_t(EnergyClass::hbm)] = 4.0;
  step.joules[size_t(EnergyClass::pe_sram)] = 8.0;  // staged with the DMA bursts: same shares
  step.joules[size_t(EnergyClass::gemm)] = 2.0;
  step.joules[size_t(EnergyClass::vector)] = 1.0;     // no softmax span: uniform
  step.joules[size_t(EnergyClass::pe_static)] = 10.0;  // static: uniform
  const PowerTrace p = report::power_trace(spans, {step}, 1000, 100);
  ASSERT_EQ(p.windows.size(), 10u);
  // HBM: 1 J over [100, 300) -> 0.5 J in windows 1 and 2; 3 J in window 5.
  const double hbm[10] = {0, 0.5, 0.5, 0, 0, 3, 0, 0, 0, 0};
  // GEMM: 0.5 J over [150, 250) -> 0.25 J in windows 1 and 2; 1.5 J over [600, 900) -> 0.5 J in 6, 7, 8.
  const double gemm[10] = {0, 0.25, 0.25, 0, 0, 0, 0.5, 0.5, 0.5, 0};
  // Span times pass through sc_time (ps) and back to double ns: a boundary can be off by ~1e-13 ns.
  constexpr double kTol = 1e-12;
  for (size_t k = 0; k < 10; ++k) {
    EXPECT_NEAR(at(p, k, EnergyClass::hbm), hbm[k], kTol) << k;
    EXPECT_NEAR(at(p, k, EnergyClass::pe_sram), 2 * hbm[k], kTol) << k;
    EXPECT_NEAR(at(p, k, EnergyClass::gemm), gemm[k], kTol) << k;
    EXPECT_NEAR(at(p, k, EnergyClass::vector), 0.1, kTol) << k;
    EXPECT_NEAR(at(p, k, EnergyClass::pe_static), 1.0, kTol) << k;
    // W = J / window: 100 ns windows.
    EXPECT_NEAR(p.watts(k), (3 * hbm[k] + gemm[k] + 1.1) / 100e-9, kTol / 100e-9) << k;
  }
  EXPECT_NEAR(p.total_j(), 25.0, kTol);
  EXPECT_EQ(p.peak_window(), 5u);
}

TEST(PowerWindows, InstantSpanUnshapedSegmentsAndShortLastWindow) {
  SpanRecorder spans;
  const int host = spans.intern("host"), ph = spans.intern("fanout"), agent = spans.intern("a");
  // An instant transfer at 250 ns; a span in the second (unshaped) segment is not used.
  spans.record(ns(250), ns(250), host, spans.intern("q_load"), ph, agent, 1, 64);
  spans.record(ns(320), ns(330), host, spans.intern("o_return"), ph, agent, 1, 64);
  PowerSegment a, b;
  a.start_ns = 0;
  a.ns = 300;
  a.by_spans = true;
  a.joules[size_t(EnergyClass::host_link)] = 1.0;
  b.start_ns = 300;
  b.ns = 50;
  b.joules[size_t(EnergyClass::host_link)] = 0.5;  // uniform over [300, 350)
  const PowerTrace p = report::power_trace(spans, {a, b}, 350, 100);
  ASSERT_EQ(p.windows.size(), 4u);
  constexpr double kTol = 1e-12;
  EXPECT_NEAR(at(p, 2, EnergyClass::host_link), 1.0, kTol);
  EXPECT_NEAR(at(p, 3, EnergyClass::host_link), 0.5, kTol);
  EXPECT_EQ(p.length_ns(3), 50.0);
  // The last window is 50 ns long: 0.5 J in it is 10 MW.
  EXPECT_NEAR(p.watts(3), 0.5 / 50e-9, kTol / 50e-9);
  EXPECT_NEAR(p.total_j(), 1.5, kTol);
}

TEST(PowerWindows, DefaultWindowIsTheSmallestOneTwoFiveStepWithinAThousandWindows) {
  EXPECT_EQ(report::auto_power_window_ns(0), 1.0);
  EXPECT_EQ(report::auto_power_window_ns(1000), 1.0);
  EXPECT_EQ(report::auto_power_window_ns(1001), 2.0);
  EXPECT_EQ(report::auto_power_window_ns(67868), 100.0);
  EXPECT_EQ(report::auto_power_window_ns(261348), 500.0);
  EXPECT_EQ(report::auto_power_window_ns(8.4e6), 10000.0);
}

TEST(PowerWindows, MoreThanAMillionWindowsIsRefusedNamingTheOption) {
  SpanRecorder spans;
  PowerSegment s;
  s.ns = 2e6;
  try {
    report::power_trace(spans, {s}, 2e6, 1);
    FAIL() << "2,000,000 windows accepted";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("--power-window-ns = 1 cuts the run's 2e+06 ns into 2e+06 windows"), std::string::npos) << m;
    EXPECT_NE(m.find("--power-window-ns >= 2 for this run"), std::string::npos) << m;
  }
  EXPECT_EQ(report::power_trace(spans, {s}, 2e6, 2).windows.size(), 1000000u);
}
