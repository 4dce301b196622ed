// Bad NoC parameters and options on the command line (noc-bench and run) exit with status 2.
#include <gtest/gtest.h>

#include <string>

#include "test_support.h"

namespace {

int cli(const std::string& args) { return ahbm::test::run_cli(args).exit_code; }

}  // namespace

TEST(NocParams, CommandLineExitsWithStatusTwo) {
  EXPECT_EQ(cli("noc-bench --noc mesh --traffic zigzag"), 2);
  EXPECT_EQ(cli("noc-bench --noc mesh --param rows=65"), 2);  // 0 is the derived size
  EXPECT_EQ(cli("noc-bench --noc meshh"), 2);
  EXPECT_EQ(cli("noc-bench --noc ring --cycles 300 --warmup 0 --rate 0.05 --out /dev/null"), 0);
  const std::string scenario = std::string(AHBM_SOURCE_DIR) + "/traces/fanout_8x20.json";
  EXPECT_EQ(cli("run " + scenario + " --out /tmp/ahbm_noc_params_test --noc hypercube --no-values --no-vcd"), 2);
}
