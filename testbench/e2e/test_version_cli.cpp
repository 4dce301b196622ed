// Provenance: `ahbm-sim --version` and summary.json's "simulator" block name the project version
// and the git commit the binary was built from; config_sha256 is the hash of the resolved
// hardware config as `ahbm-sim hw-config` prints it (checked with coreutils' sha256sum).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_support.h"

using namespace ahbm;

namespace {

// What cmake/version.cmake records for this source tree: `git describe --always --dirty`, or
// "unknown" outside a git checkout. (The tests run after the build, from the same tree.)
std::string expected_commit() {
  const test::CliResult r = test::run_shell("git -C '" + std::string(AHBM_SOURCE_DIR) + "' describe --always --dirty 2>/dev/null");
  std::string s = r.output;
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return r.exit_code == 0 && !s.empty() ? s : "unknown";
}

std::string sha256sum_of(const std::string& command) {
  const test::CliResult r = test::run_shell(command + " | sha256sum");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.output.substr(0, 64);
}

}  // namespace

TEST(Version, PrintsProjectVersionAndGitDescribe) {
  const std::string want = std::string("ahbm-sim ") + AHBM_PROJECT_VERSION + " (commit " + expected_commit() + ")\n";
  for (const char* flag : {"--version", "-V"}) {
    const test::CliResult r = test::run_cli(flag);
    EXPECT_EQ(r.exit_code, 0) << flag;
    EXPECT_EQ(r.output, want) << flag;
  }
}

TEST(Version, SummaryRecordsVersionCommitAndConfigHash) {
  const std::string dir = test::temp_dir("version");
  const std::string hw = test::write_temp(dir, "hw.json", R"({"clock_ghz":1.5})");
  const std::string sc = test::source_path("traces/fanout_8x20.json");
  const test::CliResult r = test::run_cli("run '" + sc + "' --out '" + dir + "/run' --no-vcd --no-values --hw '" + hw + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto s = nlohmann::json::parse(test::read_file(dir + "/run/summary.json"));
  EXPECT_EQ(s["simulator"]["version"], AHBM_PROJECT_VERSION);
  EXPECT_EQ(s["simulator"]["commit"], expected_commit());
  const std::string cli = std::string("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 '") + AHBM_CLI + "' hw-config";
  const std::string with_file = sha256sum_of(cli + " '" + hw + "'");
  EXPECT_EQ(s["simulator"]["config_sha256"], with_file);
  // The hash follows the config: the defaults hash differently.
  EXPECT_NE(sha256sum_of(cli), with_file);
}

TEST(Version, CitationAndChangelogNameTheProjectVersion) {
  const std::string version = AHBM_PROJECT_VERSION;
  EXPECT_NE(test::read_file(test::source_path("CITATION.cff")).find("\nversion: " + version + "\n"), std::string::npos);
  EXPECT_NE(test::read_file(test::source_path("CHANGELOG.md")).find("\n## [" + version + "]"), std::string::npos);
}
