// --policy through the command line: `auto` records its decision (every estimate, the choice,
// the estimate's error against the simulation) in summary.json; an unknown policy exits 2
// listing the allowed ones.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "test_support.h"

using namespace ahbm;

TEST(PolicyModel, CliRunRecordsThePolicyDecision) {
  const std::string dir = test::temp_dir("policy") + "/run";
  const auto r = test::run_cli("run '" + test::source_path("traces/fanout_8x20.json") + "' --out '" + dir +
                               "' --no-vcd --policy auto");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Json s = Json::parse(test::read_file(dir + "/summary.json"));
  const Json& d = s["policy"]["decision"];
  EXPECT_TRUE(d["automatic"].get<bool>());
  // Every (policy, tile) candidate of the tile search: each policy at least once, each with its tile.
  std::set<std::string> policies;
  for (const Json& e : d["estimates"]) {
    policies.insert(e["policy"].get<std::string>());
    EXPECT_GE(e["tile_rows"].get<int>(), 1);
  }
  EXPECT_EQ(policies.size(), 6u);
  EXPECT_GT(d["estimates"].size(), 6u);
  EXPECT_GE(d["chosen_tile_rows"].get<int>(), 1);
  EXPECT_TRUE(s["numerics"]["pass"].get<bool>());
  EXPECT_LE(std::abs(d["estimate_error"].get<double>()), 0.15);
  EXPECT_TRUE(s["policy"]["roofline"]["phases"].contains("fanout"));
  const auto bad = test::run_cli("run '" + test::source_path("traces/fanout_8x20.json") + "' --out '" + dir +
                                 "x' --policy B9");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("allowed: A, B1, B2, B3, B4, B5, auto"), std::string::npos) << bad.output;
}
