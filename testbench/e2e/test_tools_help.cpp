// The shell tools answer --help without building or running anything, and refuse unknown options.
#include <gtest/gtest.h>

#include <filesystem>

#include "test_support.h"

using namespace ahbm;

TEST(ToolsHelp, BenchHelpPrintsUsageAndRunsNothing) {
  // A build directory that does not exist: building or benchmarking would create or need it.
  const std::string build = test::temp_dir("bench-help") + "/build";
  const std::string bench = "AHBM_BUILD_DIR='" + build + "' bash '" + test::source_path("tools/bench") + "'";
  for (const char* flag : {"--help", "-h"}) {
    const test::CliResult r = test::run_shell(bench + " " + flag + " 2>&1");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output.rfind("usage: tools/bench [--quick] [--whole] [--serve] [--json FILE]\n", 0), 0u) << r.output;
  }
  const test::CliResult bad = test::run_shell(bench + " --quik 2>&1");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("unknown option \"--quik\""), std::string::npos) << bad.output;
  EXPECT_FALSE(std::filesystem::exists(build)) << "tools/bench built something";
}
