// Report files of a run, through external programs: GTKWave's vcd2fst reads the VCD, and the
// command line prints progress only to a terminal (script(1) provides one).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "test_outputs_common.h"

using namespace ahbm;
using ahbm::test::ScratchDir;
using ahbm::test::read_file;

TEST(Outputs, Vcd2fstAcceptsTheVcd) {
  ScratchDir s("vcd2fst");
  test::default_run(s.path("run"));
  const std::string cmd = "vcd2fst -v " + s.path("run/waves.vcd") + " -f " + s.path("waves.fst") + " >" +
                          s.path("vcd2fst.log") + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << read_file(s.path("vcd2fst.log"));
  EXPECT_GT(std::filesystem::file_size(s.path("waves.fst")), 0u);
}

TEST(Outputs, CliPrintsProgressOnlyToATerminal) {
  ScratchDir s("progress");
  const std::string cli = AHBM_CLI, sc = std::string(AHBM_SOURCE_DIR) + "/traces/fanout_8x20.json";
  const std::string piped = cli + " run " + sc + " --out " + s.path("a") + " >/dev/null 2>" + s.path("stderr.txt");
  ASSERT_EQ(std::system(piped.c_str()), 0);
  EXPECT_EQ(read_file(s.path("stderr.txt")), "");
  // script(1) gives the command a pseudo-terminal; its stdout and stderr both go to it.
  const std::string tty = "script -qec '" + cli + " run " + sc + " --out " + s.path("b") + "' /dev/null >" +
                          s.path("tty.txt") + " 2>&1";
  ASSERT_EQ(std::system(tty.c_str()), 0);
  const std::string out = read_file(s.path("tty.txt"));
  // One step (the fan-out): "step 1/1 fanout | ... | P% of the run", cleared at the end.
  EXPECT_NE(out.find("step 1/1 fanout |"), std::string::npos) << out;
  EXPECT_NE(out.find("% of the run"), std::string::npos) << out;
}
