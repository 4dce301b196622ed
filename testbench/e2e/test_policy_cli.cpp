// --policy and --launch through the command line: `auto` records its decision (every estimate,
// the choice, the estimate's error against the simulation) in summary.json; an unknown policy or
// launch schedule exits 2 listing the allowed ones.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
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

// --launch: per-head launches pay host.kernel_launch_ns once per KV head, serially; unified once
// for the step. Four KV heads on one group: the per-head run is later, by at most the three
// extra launches, and both record their schedule; an unknown schedule exits 2 naming it.
TEST(PolicyModel, CliLaunchSchedulePerHeadPaysEveryHeadsLaunch) {
  const std::string dir = test::temp_dir("launch");
  Json sc = Json::parse(test::read_file(test::source_path("traces/fanout_8x20.json")));
  sc["model"] = {{"head_dim", 64}, {"num_q_heads", 4}, {"num_kv_heads", 4}};
  sc["shared_prefix_tokens"] = 2048;
  {
    std::ofstream f(dir + "/sc.json");
    f << sc.dump();
  }
  const auto run = [&](const std::string& launch) {
    const std::string out = dir + "/" + launch;
    const auto r = test::run_cli("run '" + dir + "/sc.json' --out '" + out +
                                 "' --no-vcd --no-values --set host.kernel_launch_ns=5000 --launch " + launch);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return Json::parse(test::read_file(out + "/summary.json"));
  };
  const Json unified = run("unified"), per_head = run("per-head");
  const Json& lu = unified["policy"]["decision"]["launch"];
  const Json& lp = per_head["policy"]["decision"]["launch"];
  EXPECT_EQ(lu["schedule"], "unified");
  EXPECT_EQ(lu["kernels"], 1);
  EXPECT_EQ(lp["schedule"], "per-head");
  EXPECT_EQ(lp["kernels"], 4);
  const double tu = unified["total_ns"].get<double>(), tp = per_head["total_ns"].get<double>();
  EXPECT_GT(tp, tu);
  EXPECT_LE(tp, tu + 3 * 5000.0 + 1e-6);
  const auto bad = test::run_cli("run '" + dir + "/sc.json' --out '" + dir + "/bad' --no-values --launch per-kv");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("--launch: unknown schedule \"per-kv\" (allowed: unified, per-head)"), std::string::npos)
      << bad.output;
  EXPECT_FALSE(std::filesystem::exists(dir + "/bad"));
}
