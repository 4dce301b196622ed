// The stall watchdog runs the kernel window by window: the window size, or none, and progress
// reports on top of it change no result (the CLI-side watchdog tests are in
// e2e/test_reliability.cpp).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/run/driver.h"

using namespace ahbm;

namespace {

const std::string kTrace = std::string(AHBM_SOURCE_DIR) + "/traces/fanout_8x20.json";

TEST(Watchdog, SlicingTheRunChangesNoResult) {
  // The watchdog runs the kernel window by window; any window, or none, gives the same run.
  // (Summaries hold no wall-clock data.)
  const Scenario sc = load_scenario(kTrace);
  HwConfig hw;
  hw.q_tile_rows = 32;
  std::vector<std::string> dumps;
  for (double window : {0.0, 20000.0, 1e6}) {
    RunOptions opt;
    opt.watchdog_ns = window;
    const RunOutput run = execute(sc, hw, opt);
    dumps.push_back(to_json(run.summary).dump());
    EXPECT_TRUE(run.summary.numerics.pass);
  }
  // Progress reports slice the run by wall time on top of the windows.
  RunOptions opt;
  int reports = 0;
  bool last_done = false;
  opt.progress = [&](const SimProgress& p) { ++reports, last_done = p.done; };
  dumps.push_back(to_json(execute(sc, hw, opt).summary).dump());
  EXPECT_GE(reports, 2);
  EXPECT_TRUE(last_done);
  EXPECT_EQ(dumps[0], dumps[1]);
  EXPECT_EQ(dumps[0], dumps[2]);
  EXPECT_EQ(dumps[0], dumps[3]);
}

}  // namespace
