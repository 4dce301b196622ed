// Roofline: a simulated step's achieved MAC rate never exceeds the roofline bound, per PE and
// per group, for a compute-heavy and a bandwidth-heavy step.
#include <gtest/gtest.h>

#include <vector>

#include "hw/chip/simulate.h"
#include "runtime/plan/planner.h"
#include "runtime/plan/policy_report.h"
#include "runtime/policy/roofline.h"
#include "runtime/scenario/scenario.h"
#include "test_support.h"

using namespace ahbm;

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
