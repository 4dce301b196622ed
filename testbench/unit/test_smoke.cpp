#include <gtest/gtest.h>

#include "runtime/driver.h"

using namespace ahbm;

TEST(Smoke, DefaultScenarioRuns) {
  Scenario sc = load_scenario(std::string(AHBM_SOURCE_DIR) + "/traces/fanout_8x20.json");
  RunOptions opt;
  opt.vcd = false;
  RunOutput r = execute(sc, HwConfig{}, opt);
  EXPECT_GT(r.summary["total_ns"].get<double>(), 0.0);
  EXPECT_LE(r.summary["numerics"]["max_abs_err"].get<double>(), 1e-4);
}
