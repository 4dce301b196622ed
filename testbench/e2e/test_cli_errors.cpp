// Bad input through the CLI: a clear message naming the field and the value, exit code 2, no
// crash, and no output directory left behind.
#include <gtest/gtest.h>

#include "test_support.h"

using namespace ahbm;

namespace {

struct BadCase {
  const char* name;
  const char* scenario;  // scenario JSON text (nullptr: the default scenario)
  const char* hw;        // hw JSON text (nullptr: none)
  const char* extra;     // extra CLI words
  std::vector<const char*> must_mention;
};

const char* kGood =
    R"({"name":"t","model":{"head_dim":64},"shared_prefix_tokens":512,"agents":[{"name":"a","new_tokens":4}]})";

// Readable test names in CTest instead of a byte dump of the parameter.
void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

}  // namespace

class BadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadInput, ExitsTwoNamingFieldAndValue) {
  const BadCase& c = GetParam();
  const std::string dir = test::temp_dir(c.name);
  const std::string sc = test::write_temp(dir, "scenario.json", c.scenario ? c.scenario : kGood);
  std::string args = "run '" + sc + "' --out '" + dir + "/out' --no-vcd";
  if (c.hw) args += " --hw '" + test::write_temp(dir, "hw.json", c.hw) + "'";
  if (c.extra) args += std::string(" ") + c.extra;
  const test::CliResult r = test::run_cli(args);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  for (const char* m : c.must_mention) EXPECT_NE(r.output.find(m), std::string::npos) << "missing '" << m << "' in: " << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir + "/out")) << "no output on error";
}

INSTANTIATE_TEST_SUITE_P(
    Foundation, BadInput,
    ::testing::Values(
        BadCase{"missing_field", R"({"name":"t","model":{"head_dim":64},"agents":[{"name":"a","new_tokens":4}]})",
                nullptr, nullptr, {"shared_prefix_tokens", "missing"}},
        BadCase{"negative_length",
                R"({"name":"t","model":{"head_dim":64},"shared_prefix_tokens":-5,"agents":[{"name":"a","new_tokens":4}]})",
                nullptr, nullptr, {"shared_prefix_tokens", "-5", "[0,"}},
        BadCase{"negative_tokens",
                R"({"name":"t","model":{"head_dim":64},"shared_prefix_tokens":8,"agents":[{"name":"a","new_tokens":-1}]})",
                nullptr, nullptr, {"agents[0].new_tokens", "-1"}},
        BadCase{"unknown_key",
                R"({"name":"t","model":{"head_dim":64,"head_dimm":3},"shared_prefix_tokens":8,"agents":[{"name":"a","new_tokens":4}]})",
                nullptr, nullptr, {"model.head_dimm", "unknown key", "did you mean \"model.head_dim\""}},
        BadCase{"unknown_hw_key", nullptr, R"({"pe":{"sram_byte":1024}})", nullptr, {"pe.sram_byte", "unknown key"}},
        BadCase{"tile_larger_than_sram", nullptr, R"({"pe":{"sram_bytes":65536},"q_tile_rows":4})", nullptr,
                {"pe.sram_bytes", "65536", "4-row Q tile", "68640 B"}},
        BadCase{"no_tile_fits", nullptr, R"({"pe":{"sram_bytes":4096}})", nullptr, {"pe.sram_bytes", "4096"}},
        BadCase{"malformed_json", R"({"name":"t", "model": {)", nullptr, nullptr, {"malformed JSON", "scenario.json:1:"}},
        BadCase{"wrong_type", R"({"name":"t","model":{"head_dim":"big"},"shared_prefix_tokens":8,"agents":[{"name":"a","new_tokens":4}]})",
                nullptr, nullptr, {"model.head_dim", "\"big\"", "not an integer"}},
        BadCase{"unknown_noc", nullptr, R"({"noc":{"model":"ideall"}})", nullptr,
                {"noc.model", "ideall", "allowed:", "did you mean \"ideal\""}},
        BadCase{"bad_topology", nullptr, R"({"group":{"link":{"topology":"star"}}})", nullptr,
                {"group.link.topology", "star", "chain, ring, tree"}},
        BadCase{"zero_bandwidth", nullptr, R"({"pe":{"hbm":{"bandwidth_gbps":0}}})", nullptr,
                {"pe.hbm.bandwidth_gbps", "0", "out of range"}},
        BadCase{"missing_file", nullptr, nullptr, "--hw /nonexistent/hw.json", {"/nonexistent/hw.json", "cannot open"}},
        BadCase{"bad_option", nullptr, nullptr, "--frobnicate", {"frobnicate"}},
        BadCase{"bad_seed", nullptr, nullptr, "--seed minus-one", {"seed"}}),
    [](const ::testing::TestParamInfo<BadCase>& i) { return std::string(i.param.name); });
