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

