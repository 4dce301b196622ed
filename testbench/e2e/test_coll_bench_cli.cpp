// `ahbm-sim coll-bench` and `nocs --system` as a user runs them (docs/system.md): the table, the
// JSON report, a hardware config's system block, concurrent groups.
#include <gtest/gtest.h>

#include "hw/common/base/json_reader.h"
#include "test_support.h"

using namespace ahbm;

TEST(CollBenchCli, PrintsTheTableAndWritesTheJsonReport) {
  const std::string dir = test::temp_dir("coll-bench");
  const test::CliResult r =
      test::run_cli("coll-bench --network ring --chips 8 -b 1M -e 4M -f 4 --out " + dir + "/r.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("all_reduce (ring), 1 group(s) of 8 ranks on ring (8 chips)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("busbw"), std::string::npos) << r.output;
  const Json j = Json::parse(test::read_file(dir + "/r.json"));
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][0]["bytes"], 1 << 20);
  EXPECT_LT(std::abs(j["rows"][1]["error_pct"].get<double>()), 1.0);
  EXPECT_EQ(j["network_stats"]["links"].size(), 16u);  // 8 chips, a link each way per neighbour
}

TEST(CollBenchCli, TakesTheSystemBlockAndRunsGroupsConcurrently) {
  const std::string dir = test::temp_dir("coll-bench-hw");
  test::write_file(dir + "/hw.json", R"({"system": {"chips": 8, "network": {"model": "ring"}}})");
  const auto time_us = [&](const std::string& groups) {
    const test::CliResult r = test::run_cli("coll-bench --hw " + dir + "/hw.json -b 4M -e 4M --json --groups " + groups);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return Json::parse(r.out)["rows"][0]["time_us"].get<double>();
  };
  EXPECT_GT(time_us("0,2,4,6:1,3,5,7"), 1.5 * time_us("0,2,4,6"));
  const test::CliResult nets = test::run_cli("nocs --system");
  EXPECT_EQ(nets.exit_code, 0);
  for (const char* m : {"switch", "ring", "torus", "fully_connected", "fat_tree"})
    EXPECT_NE(nets.output.find(m), std::string::npos) << nets.output;
}
