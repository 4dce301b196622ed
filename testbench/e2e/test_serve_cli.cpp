// `ahbm-sim serve` as a user runs it: the example workloads write summary.json, requests.csv and
// trace.json; a bad workload exits 2 naming the field and value and leaves no output.
#include <gtest/gtest.h>

#include <filesystem>

#include "hw/common/json_reader.h"
#include "test_support.h"

namespace ahbm {
namespace {

namespace fs = std::filesystem;

TEST(ServeCli, WritesSummaryRequestsAndTrace) {
  const std::string dir = test::temp_dir("serve-cli");
  const test::CliResult r =
      test::run_cli("serve '" + test::source_path("traces/serve/azure_sample.json") + "' --out '" + dir + "/out'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Json s = Json::parse(test::read_file(dir + "/out/summary.json"));
  EXPECT_EQ(s["workflows"]["count"].get<int>(), 40);  // the sample's rows
  EXPECT_EQ(s["requests"]["tokens_generated"], s["requests"]["tokens_requested"]);
  EXPECT_EQ(s["kv"]["in_use_end"].get<int>(), 0);
  const std::string csv = test::read_file(dir + "/out/requests.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 41);  // header + one row per request
  const Json t = Json::parse(test::read_file(dir + "/out/trace.json"));
  EXPECT_GT(t["traceEvents"].size(), 40u);
}

TEST(ServeCli, BadWorkloadExits2NamingTheFieldAndWritesNothing) {
  const std::string dir = test::temp_dir("serve-cli-bad");
  const std::string w = test::write_temp(dir, "bad.json", R"({
    "name": "bad", "scenario": ")" + test::source_path("traces/serve/small_attn.json") + R"(",
    "arrival": {"process": "poisson", "rate_per_s": 100, "count": 3},
    "templates": [{"name": "t", "prompt_tokens": 64, "rounds": 1, "fanout": {"branches": 0}}]
  })");
  const test::CliResult r = test::run_cli("serve '" + w + "' --out '" + dir + "/out'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("templates[0].fanout.branches"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("[1, 4096]"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir + "/out"));
  const test::CliResult s = test::run_cli("serve '" + w + "' --out '" + dir + "/out2' --scheduler lifo");
  EXPECT_EQ(s.exit_code, 2) << s.output;
  EXPECT_NE(s.output.find("unknown scheduler \"lifo\""), std::string::npos) << s.output;
  EXPECT_FALSE(fs::exists(dir + "/out2"));
}

}  // namespace
}  // namespace ahbm
