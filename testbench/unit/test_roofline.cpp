// Roofline: THInfer's worked example (C++ and the tools/roofline script, exactly), and a
// simulated step's achieved MAC rate never above the roofline bound, per PE and per group.
#include <gtest/gtest.h>

#include "hw/chip/simulate.h"
#include "runtime/planner.h"
#include "runtime/policy/policy_report.h"
#include "runtime/policy/roofline.h"
#include "runtime/scenario.h"
#include "test_support.h"

using namespace ahbm;

TEST(Roofline, ThinferWorkedExample) {
  // 128*128*768 / (4*(128*128 + 128*768 + 128*768)) = 12582912 / 851968 = 192/13.
  EXPECT_DOUBLE_EQ(gemm_intensity(128, 128, 768), 192.0 / 13.0);
  Roofline r;
  r.peak_macs_per_s = 4.05e12;
  r.bandwidth_bytes_per_s = 30e9;
  EXPECT_DOUBLE_EQ(r.ridge(), 135.0);
  EXPECT_TRUE(r.bandwidth_bound(192.0 / 13.0));
  EXPECT_DOUBLE_EQ(r.attainable(192.0 / 13.0), 192.0 / 13.0 * 30e9);
}

TEST(Roofline, ToolPrintsTheThinferNumbersExactly) {
  const std::string cmd = "/usr/bin/python3 '" + test::source_path("tools/roofline") + "' --thinfer 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) out += buf;
  ASSERT_EQ(pclose(p), 0) << out;
  EXPECT_NE(out.find("= 192/13 = 14.7692 MAC/byte"), std::string::npos) << out;
  EXPECT_NE(out.find("= 4.05e12 / 30e9 = 135\n"), std::string::npos) << out;
  EXPECT_NE(out.find("bandwidth-bound"), std::string::npos) << out;
}

TEST(Roofline, SimulatedRateNeverExceedsTheBound) {
  const HwConfig hw;
  // Compute-heavy (the default scenario) and bandwidth-heavy (one decode row) steps.
  Scenario sc = load_scenario(test::source_path("traces/fanout_8x20.json"));
  for (int agents : {8, 1}) {
    sc.agents.resize(size_t(agents));
    for (auto& a : sc.agents) a.new_tokens = agents == 1 ? 1 : 20;
    const Plan plan = plan_fanout(sc, hw, 1, false);
    const SimResult r = simulate(hw, plan.jobs);
    const Json roof = roofline_summary(hw, plan.jobs, r.stats, r.end_ns);
    const Json& ph = roof["phases"]["fanout"];
    std::vector<Json> pts = {ph["per_pe_busiest"]};
    for (const auto& g : ph["per_group"]) pts.push_back(g);
    for (const Json& p : pts) {
      EXPECT_GT(p["achieved_macs_per_s"].get<double>(), 0.0);
      EXPECT_LE(p["achieved_macs_per_s"].get<double>(), p["attainable_macs_per_s"].get<double>());
      EXPECT_LE(p["attainable_macs_per_s"].get<double>(), p["peak_macs_per_s"].get<double>());
    }
    // One decode row: 0.25 MAC per KV byte, below the PE's ridge (256 MAC/cycle over 307.2 GB/s
    // = 0.83); the 160-row batch is far above it.
    EXPECT_EQ(ph["per_pe_busiest"]["bound"], agents == 1 ? "bandwidth" : "compute");
  }
}
