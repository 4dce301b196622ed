// `ahbm-sim validate attacc` as a user runs it: the result CSV's columns, and bad points refused
// with exit 2, a message naming the column and value, and no result file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "test_support.h"

using namespace ahbm;

namespace {

std::string write_points(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST(ValidateCli, WritesInputColumnsPlusSimulatedReferenceAndError) {
  const std::string dir = test::temp_dir("validate");
  const std::string points = write_points(dir, "p.csv",
                                          "L,nhead,dhead,dbyte,pim_type,power_constraint,cycle,note\n"
                                          "2048,188,128,2,BG,True,162803,a\n"
                                          "256,20,160,1,BANK,False,10000,b\n");
  const test::CliResult r = test::run_cli("validate attacc " + points + " --out " + dir + "/r.csv");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("mean |err|"), std::string::npos) << r.output;
  const std::string csv = test::read_file(dir + "/r.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "L,nhead,dhead,dbyte,pim_type,power_constraint,cycle,note,ahbm_ns,ref_ns,err");
  EXPECT_NE(csv.find("\n2048,188,128,2,BG,True,162803,a,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",125233.1,"), std::string::npos) << csv;  // ref_ns = 162803 cycles / 1.3 GHz
}

TEST(ValidateCli, PointsOutsideThePresetsAreInputErrorsWithoutOutput) {
  const std::string dir = test::temp_dir("validate-bad");
  const std::string head = "L,nhead,dhead,dbyte,pim_type,power_constraint\n";
  const std::pair<std::string, std::string> bad[] = {
      {"0,16,128,2,BG,True", "column L = \"0\""},
      {"65537,16,128,2,BG,True", "column L = \"65537\""},
      {"1024,4097,128,2,BG,True", "column nhead = \"4097\""},
      {"1024,16,63,2,BG,True", "column dhead = \"63\""},
      {"1024,16,128,4,BG,True", "column dbyte = \"4\""},
      {"1024,16,128,2,CUBE,True", "column pim_type = \"CUBE\""},
      {"1024,16,128,2,BG,maybe", "column power_constraint = \"maybe\""},
      {"1024,16,12x,2,BG,True", "column dhead = \"12x\""},
  };
  for (const auto& [row, message] : bad) {
    // A good row first: nothing of it may be written either.
    const std::string points = write_points(dir, "p.csv", head + "2048,16,128,2,BG,True\n" + row + "\n");
    const test::CliResult r = test::run_cli("validate attacc " + points + " --out " + dir + "/r.csv");
    EXPECT_EQ(r.exit_code, 2) << row << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << r.output;
    EXPECT_FALSE(std::filesystem::exists(dir + "/r.csv")) << row;
  }
  const std::string no_col = write_points(dir, "q.csv", "L,nhead,dhead,dbyte,pim_type\n2048,16,128,2,BG\n");
  const test::CliResult r = test::run_cli("validate attacc " + no_col + " --out " + dir + "/r.csv");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("column power_constraint missing"), std::string::npos) << r.output;
  const test::CliResult ref = test::run_cli("validate cent " + no_col + " --out " + dir + "/r.csv");
  EXPECT_EQ(ref.exit_code, 2);
  EXPECT_NE(ref.output.find("reference \"cent\""), std::string::npos) << ref.output;
  EXPECT_FALSE(std::filesystem::exists(dir + "/r.csv"));
}
