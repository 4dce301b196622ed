// Whole runs with pe.hbm.model = "banked": the datapath's O does not depend on the HBM timing
// model (equal to the simple model's within rounding of a different merge order, and within the
// float64 reference's tolerance), the banked run is no faster than the closed form at the ideal
// peak (full bandwidth, a row hit's latency), every PE's slice counts the bursts its DMA issued through the bank model (row hits and
// misses add up to the bursts), and the simple model reports no bank counters.
#include <gtest/gtest.h>

#include "hw/chip/chip_stats.h"
#include "hw/hbm/dram_spec.h"
#include "hw/pe/hbm_slice.h"
#include "runtime/run/driver.h"
#include "runtime/numerics/reference.h"
#include "test_runtime_support.h"

using namespace ahbm;

namespace {

RunOutput run_with(const char* model) {
  RunOptions opt = test::in_memory_options();
  opt.keep_steps = true;
  HwConfig hw;
  hw.pe.hbm.model = choice_of<HbmModel>(model);
  // The ideal peak the banked slice cannot beat: its 12 pseudo-channels' bandwidth (the
  // default 307.2 GB/s) and the latency of a row hit, RL + one burst (a read from an open row).
  const hbm::DramTiming t = hbm::hbm3_6400().t;
  hw.pe.hbm.latency_ns = (t.rl + t.burst) * t.tck_ns;
  return execute(test::decode_scenario(), hw, opt);
}

}  // namespace

TEST(BankedHbmRun, OutputsUnchangedAndNoFasterThanTheIdealPeak) {
  const RunOutput simple = run_with("simple"), banked = run_with("banked");
  ASSERT_EQ(simple.steps.size(), banked.steps.size());
  for (size_t s = 0; s < simple.steps.size(); ++s) {
    const auto& a = simple.steps[s].outputs;
    const auto& b = banked.steps[s].outputs;
    ASSERT_EQ(a.size(), b.size());
    for (size_t j = 0; j < a.size(); ++j) {
      ASSERT_EQ(a[j].size(), b[j].size());
      EXPECT_LE((a[j].cast<double>() - b[j].cast<double>()).cwiseAbs().maxCoeff(), 1e-5) << "step " << s;
    }
  }
  EXPECT_LE(banked.summary.numerics.max_abs_err, 1e-4);
  const double t_simple = simple.summary.total_ns, t_banked = banked.summary.total_ns;
  EXPECT_GE(t_banked, t_simple);
  // Only the KV streaming changes: a small scenario is compute- and Q-bound, so not by much.
  EXPECT_LE(t_banked, 1.5 * t_simple);

  uint64_t bursts = 0;
  for_each_pe(banked.sim.stats, [&](int, const StatsNode& pe) {
    const uint64_t hits = pe.get(HbmSliceStats::row_hits), misses = pe.get(HbmSliceStats::row_misses);
    const uint64_t read = pe.get(HbmSliceStats::bytes_read), written = pe.get(HbmSliceStats::bytes_written);
    // Every 32 B DRAM burst is a row hit or a miss; the PE's transfers cover at least their bytes.
    EXPECT_GE((hits + misses) * 32, read + written) << pe.name();
    if (read + written > 0) {
      EXPECT_GT(misses, 0u) << pe.name();  // its first burst opened a row
    }
    EXPECT_LE(pe.get(HbmSliceStats::bank_conflicts), misses) << pe.name();  // a conflict is followed by its ACT
    bursts += hits + misses;
  });
  EXPECT_GT(bursts, 0u);
  for_each_pe(simple.sim.stats, [&](int, const StatsNode& pe) { EXPECT_FALSE(pe.has(HbmSliceStats::row_hits)); });
}
