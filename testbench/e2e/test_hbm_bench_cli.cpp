// `ahbm-sim hbm-bench` as a user runs it: the JSON report, and bad input refused with exit 2.
#include <gtest/gtest.h>

#include "hw/common/base/json_reader.h"
#include "test_support.h"

using namespace ahbm;

TEST(HbmBenchCli, WritesTheJsonReportAndRejectsBadInput) {
  const std::string dir = test::temp_dir("hbm-bench");
  const test::CliResult r = test::run_cli("hbm-bench --pattern random --chunk-bytes 4096 --bytes 262144 --inflight 1 "
                                          "--mapping row_interleaved --refresh per-bank --out " + dir + "/r.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Json j = Json::parse(test::read_file(dir + "/r.json"));
  EXPECT_EQ(j["pattern"], "random");
  EXPECT_EQ(j["refresh"], "per-bank");
  EXPECT_EQ(j["bank_utilisation"].size(), 32u);
  EXPECT_GT(j["efficiency"].get<double>(), 0.0);
  const test::CliResult bad = test::run_cli("hbm-bench --mapping diagonal");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("diagonal"), std::string::npos);
}


// Issue 44 item 3 (b, c): the shipped memory traces replayed, and the DRAMPower command trace
// written beside the report, as many ACTs in it as the report counts.
TEST(HbmBenchCli, ReplaysTheShippedTracesAndWritesTheCommandTrace) {
  const std::string dir = test::temp_dir("hbm-bench-trace");
  const std::string mem = std::string(AHBM_SOURCE_DIR) + "/traces/mem/";
  const test::CliResult r = test::run_cli("hbm-bench --trace " + mem + "dramsys_small.stl --command-trace " + dir +
                                          "/cmd.trace --out " + dir + "/r.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("dramsys_small.stl (dramsys, 11 requests)"), std::string::npos) << r.output;
  const Json j = Json::parse(test::read_file(dir + "/r.json"));
  EXPECT_EQ(j["pattern"], "trace");
  EXPECT_EQ(j["trace"]["format"], "dramsys");
  EXPECT_EQ(j["trace"]["requests"], 11);
  EXPECT_EQ(j["trace"]["timed"], true);
  EXPECT_EQ(j["bytes_written"], 64);
  const std::string cmds = test::read_file(dir + "/cmd.trace");
  size_t acts = 0;
  for (size_t at = cmds.find(",ACT,"); at != std::string::npos; at = cmds.find(",ACT,", at + 1)) ++acts;
  EXPECT_EQ(acts, j["activates"].get<size_t>());
  EXPECT_GT(acts, 0u);
  const test::CliResult ram =
      test::run_cli("hbm-bench --trace " + mem + "ramulator_small.trace --trace-format ramulator --out " + dir + "/m.json");
  ASSERT_EQ(ram.exit_code, 0) << ram.output;
  const Json m = Json::parse(test::read_file(dir + "/m.json"));
  EXPECT_EQ(m["trace"]["timed"], false);
  EXPECT_EQ(m["chunks"], 11);
  // A Ramulator trace read as STL: refused, naming the line and its text.
  const test::CliResult bad = test::run_cli("hbm-bench --trace " + mem + "ramulator_small.trace");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("ramulator_small.trace: line 1: \"0x0 R\": expected \"<cycle>:"), std::string::npos)
      << bad.output;
  const test::CliResult orphan = test::run_cli("hbm-bench --trace-format ramulator");
  EXPECT_EQ(orphan.exit_code, 2);
  EXPECT_NE(orphan.output.find("--trace-format needs --trace FILE"), std::string::npos) << orphan.output;
}
