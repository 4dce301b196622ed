// `--set KEY=VALUE` on the subcommands that take a hardware config: an override is the same as
// writing the field into the --hw file, the last word wins over the file, and a bad override is
// refused as a bad file field is (exit 2, one line naming the key, the value and the range, no
// output written).
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "test_support.h"

using namespace ahbm;
using nlohmann::json;

namespace {

const std::string kScenario = test::source_path("traces/fanout_8x20.json");

json run_summary(const std::string& out, const std::string& extra) {
  const test::CliResult r = test::run_cli("run '" + kScenario + "' --out '" + out + "' --no-vcd --no-values " + extra);
  EXPECT_EQ(r.exit_code, 0) << extra << ": " << r.output;
  return json::parse(test::read_file(out + "/summary.json"));
}

}  // namespace

TEST(HwOverrides, SetEqualsTheSameFieldInTheFileAndWinsOverIt) {
  const std::string dir = test::temp_dir("set-equal");
  const std::string hw = test::write_temp(dir, "hw.json", R"({"clock_ghz":2.0,"pe":{"dma":{"buffers":3}}})");
  const json from_file = run_summary(dir + "/file", "--hw '" + hw + "'");
  const json from_set = run_summary(dir + "/set", "--set clock_ghz=2.0 --set pe.dma.buffers=3");
  EXPECT_EQ(from_set["config"]["hw"], from_file["config"]["hw"]);
  EXPECT_EQ(from_set["simulator"]["config_sha256"], from_file["simulator"]["config_sha256"]);
  EXPECT_EQ(from_set["total_ns"], from_file["total_ns"]);
  const json defaults = run_summary(dir + "/defaults", "");
  EXPECT_LT(from_set["total_ns"].get<double>(), defaults["total_ns"].get<double>()) << "a 2 GHz clock is faster";

  // File and override together: the override wins, the file's other field stays.
  const json both = run_summary(dir + "/both", "--hw '" + hw + "' --set clock_ghz=1.0");
  EXPECT_EQ(both["config"]["hw"]["clock_ghz"], 1.0);
  EXPECT_EQ(both["config"]["hw"]["pe"]["dma"]["buffers"], 3);

  // hw-config shows what a run with the same overrides uses.
  const test::CliResult shown = test::run_cli("hw-config '" + hw + "' --set clock_ghz=1.0");
  ASSERT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_EQ(json::parse(shown.output), both["config"]["hw"]);
  std::filesystem::remove_all(dir);
}

TEST(HwOverrides, PolicyEvalTakesSet) {
  const test::CliResult base = test::run_cli("policy-eval '" + kScenario + "'");
  const test::CliResult fast = test::run_cli("policy-eval '" + kScenario + "' --set clock_ghz=2");
  ASSERT_EQ(base.exit_code, 0) << base.output;
  ASSERT_EQ(fast.exit_code, 0) << fast.output;
  EXPECT_NE(base.output, fast.output);
  const test::CliResult same = test::run_cli("policy-eval '" + kScenario + "' --set clock_ghz=1.0");
  EXPECT_EQ(same.output, base.output) << "the default value as an override changes nothing";
}

struct BadSet {
  const char* name;
  const char* set;
  std::vector<const char*> must_mention;
};
void PrintTo(const BadSet& c, std::ostream* os) { *os << c.name; }

class HwOverridesBad : public ::testing::TestWithParam<BadSet> {};

TEST_P(HwOverridesBad, ExitTwoWithOneLineAndNoOutput) {
  const BadSet& c = GetParam();
  const std::string dir = test::temp_dir(std::string("badset-") + c.name);
  for (const std::string& cmd : {"run '" + kScenario + "' --out '" + dir + "/out' --no-vcd",
                                 "policy-eval '" + kScenario + "'", std::string("hw-config")}) {
    const test::CliResult r = test::run_cli(cmd + " --set " + c.set);
    EXPECT_EQ(r.exit_code, 2) << cmd << ": " << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << cmd << ": " << r.output;
    for (const char* m : c.must_mention)
      EXPECT_NE(r.output.find(m), std::string::npos) << cmd << ": missing '" << m << "' in: " << r.output;
    EXPECT_FALSE(std::filesystem::exists(dir + "/out")) << "no output on error";
  }
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Cli, HwOverridesBad,
    ::testing::Values(BadSet{"unknown_key", "pe.dma.bufers=2", {"--set", "pe.dma.bufers", "unknown key", "pe.dma.buffers"}},
                      BadSet{"not_a_number", "clock_ghz=fast", {"--set", "clock_ghz", "fast", "[0.01, 100]"}},
                      BadSet{"out_of_range", "clock_ghz=1000", {"--set", "clock_ghz", "1000", "[0.01, 100]"}},
                      BadSet{"not_an_integer", "groups=2.5", {"--set", "groups", "2.5", "[1, 1024]"}},
                      BadSet{"no_value", "clock_ghz", {"--set", "clock_ghz", "KEY=VALUE"}},
                      BadSet{"merge_units", "cube.reducer.units=0", {"--set", "cube.reducer.units", "0", "[1, 64]"}},
                      BadSet{"merge_order", "cube.reducer.order=pairs",
                             {"--set", "cube.reducer.order", "pairs", "serial, tree"}},
                      BadSet{"inter_cube", "cube.reducer.inter_cube=link",
                             {"--set", "cube.reducer.inter_cube", "link", "own_unit, shared"}}),
    [](const ::testing::TestParamInfo<BadSet>& i) { return std::string(i.param.name); });
