// `ahbm-sim serve` as a user runs it: the example workloads write summary.json, requests.csv and
// trace.json (and waves.vcd with --vcd); P-B-D on a 2-group chip; a bad workload exits 2 naming the
// field and value and leaves no output.
#include <gtest/gtest.h>

#include <filesystem>

#include "hw/common/base/json_reader.h"
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

// Serve times are double ns, arrivals up to 2^50 ns (docs/reliability.md, "Ranges of time"): on
// the default 1 GHz clock (whole-ns step times) a workflow arriving at the bound has the TTFT,
// TPOT and end-to-end time, to the last bit, of the same workflow arriving at 0 (at 1e18, the
// old maximum, TTFT was 24 ns off).
TEST(ServeCli, ArrivalAtTheExactTimeBoundKeepsTheTimesOfTimeZero) {
  const std::string dir = test::temp_dir("serve-cli-time");
  Json times;
  for (const char* at : {"0", "1125899906842624"}) {
    const std::string w = test::write_temp(dir, std::string("w") + at + ".json", R"({
      "name": "w", "scenario": ")" + test::source_path("traces/serve/small_attn.json") + R"(",
      "arrival": {"process": "timestamps", "times_ns": [)" + at + R"(]},
      "templates": [{"name": "t", "prompt_tokens": 512, "rounds": 1,
        "fanout": {"branches": 3, "new_tokens": 16, "decode_tokens": 5}, "answer_tokens": 20}]})");
    const test::CliResult r = test::run_cli("serve '" + w + "' --out '" + dir + "/out" + at + "'");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const Json s = Json::parse(test::read_file(dir + "/out" + at + "/summary.json"));
    times[at] = {s["requests"]["ttft"], s["requests"]["tpot"], s["requests"]["end_to_end"], s["workflows"]["end_to_end"]};
  }
  EXPECT_EQ(times["0"].dump(), times["1125899906842624"].dump());
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
  const test::CliResult m = test::run_cli("serve '" + w + "' --out '" + dir + "/out3' --gemm-mapping diagonal");
  EXPECT_EQ(m.exit_code, 2) << m.output;
  EXPECT_NE(m.output.find("--gemm-mapping = 'diagonal'"), std::string::npos) << m.output;
  EXPECT_NE(m.output.find("w_stationary, x_stationary"), std::string::npos) << m.output;
  EXPECT_FALSE(fs::exists(dir + "/out3"));
}

TEST(ServeCli, UnknownPlacementExits2NamingFieldValueAndAllowed) {
  const std::string dir = test::temp_dir("serve-cli-place");
  const std::string w = test::write_temp(dir, "bad.json", R"({
    "name": "bad", "scenario": ")" + test::source_path("traces/serve/small_attn.json") + R"(",
    "arrival": {"process": "poisson", "rate_per_s": 100, "count": 3},
    "templates": [{"name": "t", "prompt_tokens": 64, "answer_tokens": 2}],
    "scheduler": {"placement": "round_robin"}
  })");
  const test::CliResult r = test::run_cli("serve '" + w + "' --out '" + dir + "/out' --set groups=4");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  for (const char* part : {"scheduler.placement", "round_robin", "spread, prefix_affinity"})
    EXPECT_NE(r.output.find(part), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir + "/out"));
}

TEST(ServeCli, PbdWritesItsBlockAndTheVcdAndNeedsTwoGroups) {
  const std::string dir = test::temp_dir("serve-cli-pbd");
  const std::string w = test::write_temp(dir, "pbd.json", R"({
    "name": "pbd", "scenario": ")" + test::source_path("traces/serve/small_attn.json") + R"(",
    "arrival": {"process": "poisson", "rate_per_s": 5000, "count": 6},
    "templates": [{"name": "t", "prompt_tokens": 512, "rounds": 1,
                   "fanout": {"branches": 2, "new_tokens": 16, "decode_tokens": 4}, "answer_tokens": 4}],
    "scheduler": {"pbd": {"buffer_max": 2, "micro_batch": 2}},
    "slo": {"ttft_ns": 1e6, "tpot_ns": 1e5}
  })");
  const test::CliResult r = test::run_cli("serve '" + w + "' --out '" + dir + "/out' --set groups=2 --vcd");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Json s = Json::parse(test::read_file(dir + "/out/summary.json"));
  EXPECT_EQ(s["pbd"]["sequences"].get<int>(), 6);
  EXPECT_EQ(s["pbd"]["prefill_pool"]["groups"].get<int>(), 1);
  EXPECT_EQ(s["pbd"]["decode_pool"]["groups"].get<int>(), 1);
  EXPECT_LE(s["pbd"]["buffer"]["max"].get<double>(), 2.0);
  EXPECT_EQ(s["requests"]["tokens_generated"], s["requests"]["tokens_requested"]);
  EXPECT_NE(test::read_file(dir + "/out/waves.vcd").find(" buffer "), std::string::npos);
  // The default chip has one group: refused before anything is written.
  const test::CliResult one = test::run_cli("serve '" + w + "' --out '" + dir + "/out1'");
  EXPECT_EQ(one.exit_code, 2) << one.output;
  EXPECT_NE(one.output.find("groups = 1"), std::string::npos) << one.output;
  EXPECT_NE(one.output.find("scheduler.pbd"), std::string::npos) << one.output;
  EXPECT_FALSE(fs::exists(dir + "/out1"));
  // Without --vcd no waves.vcd (the default outputs are the three files).
  const test::CliResult plain = test::run_cli("serve '" + w + "' --out '" + dir + "/out2' --set groups=2");
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_FALSE(fs::exists(dir + "/out2/waves.vcd"));
}

}  // namespace
}  // namespace ahbm
