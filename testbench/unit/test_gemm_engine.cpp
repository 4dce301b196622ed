// The PE's GEMM engine: values against a float64 product, cycle counts against the closed form
// (tiles x issue interval + pipeline latency) both as a formula and as simulated time, and the
// note's batching point: one 160-row GEMM uses the engine better than 8 runs of 20 rows.
#include <gtest/gtest.h>

#include <random>

#include "hw/chip/simulate.h"
#include "hw/common/model/engines.h"
#include "test_support.h"

using namespace ahbm;

namespace {

GemmConfig shape(int m, int n, int k, int ii, int lat) { return GemmConfig{m, n, k, ii, lat}; }

double span_ns(const SimResult& r, const std::string& component, const std::string& activity, int index = 0) {
  int seen = 0;
  for (const Span& s : r.spans->spans())
    if (r.spans->name(s.component) == component && r.spans->name(s.activity) == activity && seen++ == index)
      return to_ns(s.end - s.start);
  return -1;
}

double total_ns(const SimResult& r, const std::string& activity) {
  double t = 0;
  for (const Span& s : r.spans->spans())
    if (r.spans->name(s.activity) == activity) t += to_ns(s.end - s.start);
  return t;
}

}  // namespace

TEST(GemmEngine, ValuesMatchFloat64Product) {
  std::mt19937 rng(7);
  std::normal_distribution<float> nd;
  for (auto [m, n, k] : {std::array<int, 3>{160, 256, 128}, {20, 50, 128}, {1, 64, 128}, {33, 17, 5}}) {
    MatrixRM a(m, k), b(n, k), c;
    for (int i = 0; i < a.size(); ++i) a.data()[i] = nd(rng);
    for (int i = 0; i < b.size(); ++i) b.data()[i] = nd(rng);
    gemm_abt(ConstMapRM(a.data(), m, k), ConstMapRM(b.data(), n, k), c);
    double worst = 0;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double ref = 0;
        for (int x = 0; x < k; ++x) ref += double(a(i, x)) * double(b(j, x));
        worst = std::max(worst, std::abs(ref - double(c(i, j))));
      }
    // fp32 accumulation of k products of N(0,1) values: error well under 1e-4 for k <= 128.
    EXPECT_LT(worst, 1e-4) << m << "x" << n << "x" << k;
  }
}

TEST(GemmEngine, CyclesFollowTileClosedForm) {
  const GemmConfig sq = shape(16, 16, 16, 16, 32);
  // Aligned: 160x256x128 = 10 * 16 * 8 = 1280 tiles.
  EXPECT_EQ(gemm_tiles(sq, 160, 256, 128), 1280u);
  EXPECT_EQ(gemm_cycles(sq, 160, 256, 128, DType::fp32), 1280u * 16 + 32);
  // Ragged: 20x50x128 pads to 2 x 4 x 8 = 64 tiles.
  EXPECT_EQ(gemm_cycles(sq, 20, 50, 128, DType::fp32), 64u * 16 + 32);
  const GemmConfig wide = shape(8, 64, 8, 16, 24);
  // 8x64x8: 160x256x128 = 20 * 4 * 16 = 1280 tiles; 20x50x128 = 3 * 1 * 16 = 48 tiles.
  EXPECT_EQ(gemm_cycles(wide, 160, 256, 128, DType::fp32), 1280u * 16 + 24);
  EXPECT_EQ(gemm_cycles(wide, 20, 50, 128, DType::fp32), 48u * 16 + 24);
  EXPECT_EQ(gemm_cycles(sq, 0, 50, 128, DType::fp32), 0u);
  EXPECT_DOUBLE_EQ(gemm_tile_utilization(sq, 160, 256, 128), 1.0);
  EXPECT_DOUBLE_EQ(gemm_tile_utilization(sq, 20, 50, 128), 20.0 * 50 * 128 / (64.0 * 4096));
}

// One PE, one Q tile, one KV tile: the simulated GEMM spans last exactly the closed form.
TEST(GemmEngine, SimulatedCyclesEqualClosedForm) {
  struct Case {
    int tm, tn, tk, rows, tokens;
  };
  for (const Case& c : {Case{16, 16, 16, 160, 64}, Case{16, 16, 16, 20, 50}, Case{8, 64, 8, 160, 64},
                        Case{8, 64, 8, 20, 50}}) {
    HwConfig hw = test::small_hw(1, 1);
    hw.pe.gemm = shape(c.tm, c.tn, c.tk, 16, 32);
    hw.clock_ghz = 2.0;  // 0.5 ns per cycle: checks the cycle -> time conversion too
    const int d = 128;
    const SimResult r = simulate(hw, {test::random_job(hw, c.rows, c.tokens, d, 3)});
    const double period = 0.5;
    EXPECT_DOUBLE_EQ(span_ns(r, "group0.cube0.pe0", "gemm_qk"), gemm_cycles(hw.pe.gemm, c.rows, c.tokens, d, DType::fp32) * period);
    EXPECT_DOUBLE_EQ(span_ns(r, "group0.cube0.pe0", "gemm_pv"), gemm_cycles(hw.pe.gemm, c.rows, d, c.tokens, DType::fp32) * period);
  }
}

// pe.gemm.mac_multiple_16bit: fp16/bf16 jobs issue tiles that many times as often (THInfer: FP16
// at about twice FP32); fp32 jobs and the default multiple 1 keep the fp32 timing.
TEST(GemmEngine, SixteenBitMacMultipleDividesTheIssueInterval) {
  GemmConfig g = shape(16, 16, 16, 16, 32);
  // 160x256x128: 1280 tiles.
  EXPECT_EQ(gemm_cycles(g, 160, 256, 128, DType::fp16), 1280u * 16 + 32);  // multiple 1: as fp32
  g.mac_multiple_16bit = 2;
  EXPECT_EQ(gemm_cycles(g, 160, 256, 128, DType::fp16), 1280u * 8 + 32);
  EXPECT_EQ(gemm_cycles(g, 160, 256, 128, DType::bf16), 1280u * 8 + 32);
  EXPECT_EQ(gemm_cycles(g, 160, 256, 128, DType::fp32), 1280u * 16 + 32);
  g.mac_multiple_16bit = 3;  // 16 / 3 rounds up to 6 cycles per issue
  EXPECT_EQ(gemm_cycles(g, 160, 256, 128, DType::fp16), 1280u * 6 + 32);

  // The simulated PE waits the same closed form for an fp16 job.
  HwConfig hw = test::small_hw(1, 1);
  hw.pe.gemm.mac_multiple_16bit = 2;
  const int d = 128, rows = 160, tokens = 64;
  AttentionJob job = test::random_job(hw, rows, tokens, d, 3);
  job.dtype = DType::fp16;
  const SimResult r = simulate(hw, {job});
  const double period = 1.0 / hw.clock_ghz;
  EXPECT_DOUBLE_EQ(span_ns(r, "group0.cube0.pe0", "gemm_qk"), (10.0 * 4 * 8 * 8 + 32) * period);
  EXPECT_DOUBLE_EQ(span_ns(r, "group0.cube0.pe0", "gemm_pv"), (10.0 * 8 * 4 * 8 + 32) * period);
}

// Note §2.5/§3.6: stacking 8 agents x 20 rows into one 160-row Q fills the 16-row engine
// tiles that 20-row runs leave a third empty, so it takes fewer engine cycles.
TEST(GemmEngine, BatchedRowsUseEngineBetterThanPerAgentRuns) {
  const HwConfig hw = test::small_hw(1, 1);
  const int d = 128, tokens = 256;
  const SimResult batched = simulate(hw, {test::random_job(hw, 160, tokens, d, 5)});
  double separate = 0;
  for (int a = 0; a < 8; ++a) {
    const SimResult r = simulate(hw, {test::random_job(hw, 20, tokens, d, 5 + unsigned(a))});
    separate += total_ns(r, "gemm_qk") + total_ns(r, "gemm_pv");
  }
  const double together = total_ns(batched, "gemm_qk") + total_ns(batched, "gemm_pv");
  EXPECT_LT(together, separate);
  // Closed form per KV tile of 64 tokens: 160 rows = 10 row tiles; 20 rows = 2 row tiles each.
  const auto& g = hw.pe.gemm;
  const double expect_together = 4.0 * (gemm_cycles(g, 160, 64, d, DType::fp32) + gemm_cycles(g, 160, d, 64, DType::fp32));
  const double expect_separate = 8 * 4.0 * (gemm_cycles(g, 20, 64, d, DType::fp32) + gemm_cycles(g, 20, d, 64, DType::fp32));
  EXPECT_DOUBLE_EQ(together, expect_together);
  EXPECT_DOUBLE_EQ(separate, expect_separate);
  EXPECT_GT(gemm_tile_utilization(g, 160, 64, d), gemm_tile_utilization(g, 20, 64, d));
}
