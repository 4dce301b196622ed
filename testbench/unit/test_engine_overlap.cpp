// PE micro-architecture options (docs/model.md "PE micro-architecture"): the ping-pong overlap of
// the GEMM engine and vector unit (pe.overlap) and the narrow-M path (pe.gemm.narrow_m), as
// closed forms (engines.h), as the engine schedule the PE and the cost model share
// (KvBlockPipeline), and as simulated time on a 1-PE chip.
#include <gtest/gtest.h>

#include <algorithm>

#include "hw/chip/simulate.h"
#include "hw/common/model/engines.h"
#include "test_support.h"

using namespace ahbm;

namespace {

// The schedule of `blocks` equal blocks whose KV is in SRAM from time 0, in cycles.
uint64_t scheduled_cycles(bool ping_pong, const BlockWork& w, int blocks) {
  KvBlockPipeline<uint64_t> e(ping_pong);
  e.begin(0);
  std::vector<KvBlockPipeline<uint64_t>::Placed> placed;
  for (int b = 0; b < blocks; ++b) e.add(b, 0, {w.qk, w.softmax, w.pv}, placed);
  e.flush(placed);
  // Each engine runs one op at a time, in order, and a block's ops keep their dependencies.
  uint64_t gemm_end = 0, vector_end = 0;
  const size_t nb = size_t(blocks);
  std::vector<uint64_t> qk_end(nb, 0), sm_end(nb, 0), pv_end(nb, 0);
  for (const auto& op : placed) {
    uint64_t& unit = op.op == EngineOp::softmax ? vector_end : gemm_end;
    EXPECT_GE(op.start, unit);
    unit = op.end;
    const size_t b = size_t(op.tag);
    if (op.op == EngineOp::gemm_qk) qk_end[b] = op.end;
    if (op.op == EngineOp::softmax) {
      EXPECT_GE(op.start, qk_end[b]);
      if (b > 0) {
        EXPECT_GE(op.start, pv_end[b - 1]) << "the softmax rescales O after the previous P V";
      }
      sm_end[b] = op.end;
    }
    if (op.op == EngineOp::gemm_pv) {
      EXPECT_GE(op.start, sm_end[b]);
      pv_end[b] = op.end;
    }
  }
  EXPECT_EQ(placed.size(), size_t(3 * blocks));
  return e.end();
}

double activity_extent(const SimResult& r, const std::string& component, std::initializer_list<const char*> acts) {
  double first = 1e300, last = 0;
  for (const Span& s : r.spans->spans()) {
    if (r.spans->name(s.component) != component) continue;
    const std::string a = r.spans->name(s.activity);
    if (std::none_of(acts.begin(), acts.end(), [&](const char* x) { return a == x; })) continue;
    first = std::min(first, to_ns(s.start));
    last = std::max(last, to_ns(s.end));
  }
  return last - first;
}

double activity_sum(const SimResult& r, const std::string& component, const std::string& activity) {
  double t = 0;
  for (const Span& s : r.spans->spans())
    if (r.spans->name(s.component) == component && r.spans->name(s.activity) == activity) t += to_ns(s.end - s.start);
  return t;
}

}  // namespace

TEST(EngineOverlap, QTileClosedFormEqualsTheSharedSchedule) {
  PeConfig none, pp;
  pp.overlap = PeOverlap::ping_pong;
  for (const BlockWork w : {BlockWork{1568, 1260, 1568}, BlockWork{100, 400, 100}, BlockWork{544, 27, 544},
                            BlockWork{7, 7, 7}, BlockWork{10, 0, 30}}) {
    for (int blocks = 1; blocks <= 9; ++blocks) {
      const uint64_t b = uint64_t(blocks);
      EXPECT_EQ(qtile_cycles(none, w, b), b * (w.qk + w.softmax + w.pv));
      EXPECT_EQ(scheduled_cycles(false, w, blocks), qtile_cycles(none, w, b));
      // Ping-pong hides min(qk, softmax) per block after the first.
      EXPECT_EQ(qtile_cycles(pp, w, b), b * (w.qk + w.softmax + w.pv) - (b - 1) * std::min(w.qk, w.softmax))
          << w.qk << "/" << w.softmax << "/" << w.pv << " x " << blocks;
      EXPECT_EQ(scheduled_cycles(true, w, blocks), qtile_cycles(pp, w, b)) << w.qk << "/" << w.softmax << " x " << blocks;
    }
    EXPECT_EQ(block_period_cycles(none, w), w.qk + w.softmax + w.pv);
    EXPECT_EQ(block_period_cycles(pp, w), w.pv + std::max(w.qk, w.softmax));
    // The steady state: each block past the second adds one period.
    EXPECT_EQ(qtile_cycles(pp, w, 8) - qtile_cycles(pp, w, 7), block_period_cycles(pp, w));
  }
}

// A late block does not hold the GEMM engine: the pending P V runs when the softmax ends, and the
// late block's Q K^T after it.
TEST(EngineOverlap, ALateBlockLetsThePendingPvGoFirst) {
  KvBlockPipeline<double> e(true);
  e.begin(0);
  std::vector<KvBlockPipeline<double>::Placed> placed;
  e.add(0, 0, {10, 20, 10}, placed);  // QK [0,10], SM [10,30], P V pending
  EXPECT_TRUE(e.pending());
  EXPECT_EQ(e.lookahead_deadline(), 30);
  e.add(1, 50, {10, 20, 10}, placed);  // arrives after 30: P V 0 [30,40], QK 1 [50,60], SM 1 [60,80]
  e.flush(placed);                     // P V 1 [80,90]
  ASSERT_EQ(placed.size(), 6u);
  EXPECT_EQ(placed[2].op, EngineOp::gemm_pv);
  EXPECT_EQ(placed[2].tag, 0);
  EXPECT_EQ(placed[2].start, 30);
  EXPECT_EQ(placed[3].op, EngineOp::gemm_qk);
  EXPECT_EQ(placed[3].start, 50);
  EXPECT_EQ(e.end(), 90);
  // In time (arrival 25 <= 30): Q K^T 1 first [25,35], then P V 0 [35,45], SM 1 [45,65], P V 1 [65,75].
  KvBlockPipeline<double> f(true);
  f.begin(0);
  placed.clear();
  f.add(0, 0, {10, 20, 10}, placed);
  f.add(1, 25, {10, 20, 10}, placed);
  f.flush(placed);
  EXPECT_EQ(placed[2].op, EngineOp::gemm_qk);
  EXPECT_EQ(placed[2].start, 25);
  EXPECT_EQ(placed[3].op, EngineOp::gemm_pv);
  EXPECT_EQ(placed[3].start, 35);
  EXPECT_EQ(f.end(), 75);
}

// The simulated PE: one 160-row Q tile over 4 KV tiles, compute-bound (KV arrives long before the
// engines want it): from the first Q K^T to the last P V exactly the closed form, in both modes.
TEST(EngineOverlap, SimulatedQTileTakesTheClosedForm) {
  for (const char* overlap : {"none", "ping_pong"}) {
    HwConfig hw = test::small_hw(1, 1);
    hw.pe.overlap = choice_of<PeOverlap>(overlap);
    hw.pe.dma.buffers = 3;
    hw.clock_ghz = 2.0;  // 0.5 ns per cycle
    const int rows = 160, tokens = 256, d = 128;
    const SimResult r = simulate(hw, {test::random_job(hw, rows, tokens, d, 3)});
    const BlockWork w = block_work(hw.pe, rows, 64, d, DType::fp32);
    const double expect = double(qtile_cycles(hw.pe, w, 4)) * 0.5;
    EXPECT_DOUBLE_EQ(activity_extent(r, "group0.cube0.pe0", {"gemm_qk", "softmax", "gemm_pv"}), expect) << overlap;
    // Busy time per engine is the same work in both modes.
    EXPECT_DOUBLE_EQ(activity_sum(r, "group0.cube0.pe0", "softmax"), 4 * double(w.softmax) * 0.5) << overlap;
    EXPECT_DOUBLE_EQ(activity_sum(r, "group0.cube0.pe0", "gemm_qk") + activity_sum(r, "group0.cube0.pe0", "gemm_pv"),
                     4 * double(w.qk + w.pv) * 0.5)
        << overlap;
  }
  PeConfig pp;
  pp.overlap = PeOverlap::ping_pong;
  const BlockWork w = block_work(pp, 160, 64, 128, DType::fp32);
  EXPECT_LT(qtile_cycles(pp, w, 4), 4 * (w.qk + w.softmax + w.pv));
}

// pe.gemm.narrow_m = gemv: fewer rows than tile_m run row by row, so the cycles grow with the rows
// (1..tile_m), never above the padded tile; "pad" keeps the padded cost for every row count.
TEST(NarrowM, GemvCyclesScaleWithTheRows) {
  GemmConfig pad;
  GemmConfig gemv;
  gemv.narrow_m = NarrowM::gemv;
  const uint64_t n = 64, k = 128;
  const uint64_t padded = gemm_array_cycles(pad, 1, n, k, DType::fp32);
  EXPECT_EQ(padded, 4u * 8 * 16 + 32);
  for (uint64_t m = 1; m <= uint64_t(gemv.tile_m); ++m) {
    EXPECT_EQ(gemm_cycles(pad, m, n, k, DType::fp32), padded) << m;
    // 256 MAC/cycle: n k = 8192 MACs per row = 32 cycles, plus the pipeline latency.
    EXPECT_EQ(gemv_cycles(gemv, m, n, k, DType::fp32), m * 32 + 32) << m;
    if (m < uint64_t(gemv.tile_m)) {
      EXPECT_EQ(gemm_cycles(gemv, m, n, k, DType::fp32), m * 32 + 32) << m;
      EXPECT_EQ(gemm_issued_tiles(gemv, m, n, k, DType::fp32), 0u);
    } else {
      EXPECT_EQ(gemm_cycles(gemv, m, n, k, DType::fp32), padded) << "a full tile stays on the array";
    }
    EXPECT_LE(gemm_cycles(gemv, m, n, k, DType::fp32), padded);
  }
  // fp16/bf16 at mac_multiple_16bit times the rate; a slow narrow path is not taken.
  gemv.mac_multiple_16bit = 2;
  EXPECT_EQ(gemv_cycles(gemv, 3, n, k, DType::fp16), 3u * 16 + 32);
  gemv.gemv_macs_per_cycle = 16;  // 512 cycles per row: 2 rows already cost more than the padded tile
  EXPECT_EQ(gemm_cycles(gemv, 1, n, k, DType::fp32), 512u + 32);
  EXPECT_EQ(gemm_cycles(gemv, 2, n, k, DType::fp32), padded);
}

// The simulated PE waits the narrow path's cycles for a 1-row and a 5-row tile.
TEST(NarrowM, SimulatedGemvSpansEqualTheClosedForm) {
  for (int rows : {1, 5}) {
    HwConfig hw = test::small_hw(1, 1);
    hw.pe.gemm.narrow_m = NarrowM::gemv;
    const int tokens = 64, d = 128;
    const SimResult r = simulate(hw, {test::random_job(hw, rows, tokens, d, 3)});
    EXPECT_DOUBLE_EQ(activity_sum(r, "group0.cube0.pe0", "gemm_qk"), double(rows * 32 + 32)) << rows;
    EXPECT_DOUBLE_EQ(activity_sum(r, "group0.cube0.pe0", "gemm_pv"), double(rows * 32 + 32)) << rows;
  }
}
