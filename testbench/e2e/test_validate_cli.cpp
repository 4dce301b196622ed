// `ahbm-sim validate attacc` as a user runs it: the result CSV's columns, and bad points refused
// with exit 2, a message naming the column and value, and no result file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

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

// ramulator.out, the artifact's own file, names the bank level by its enum (PIMType.BA) and adds
// command counts after `cycle`: its rows run as they are, BA on the bank-level preset.
TEST(ValidateCli, ReadsTheArtifactsOwnRowsWithBaForTheBankLevel) {
  const std::string dir = test::temp_dir("validate-ba");
  const std::string points = write_points(dir, "p.csv",
                                          "L,nhead,dhead,dbyte,pim_type,power_constraint,cycle,mac,softmax,mvgb,mvsb,wrgb\n"
                                          "512,16,128,2,BA,True,1000,1,2,3,4,5\n"
                                          "512,16,128,2,BANK,True,1000,1,2,3,4,5\n"
                                          "512,16,128,2,BG,True,1000,1,2,3,4,5\n");
  const test::CliResult r = test::run_cli("validate attacc " + points + " --out " + dir + "/r.csv");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::istringstream csv(test::read_file(dir + "/r.csv"));
  std::string header, ba, bank, bg;
  std::getline(csv, header), std::getline(csv, ba), std::getline(csv, bank), std::getline(csv, bg);
  EXPECT_EQ(header, "L,nhead,dhead,dbyte,pim_type,power_constraint,cycle,mac,softmax,mvgb,mvsb,wrgb,ahbm_ns,ref_ns,err");
  const auto sim = [](const std::string& row) {  // ahbm_ns: the third field from the end
    std::vector<std::string> f;
    std::istringstream in(row);
    for (std::string c; std::getline(in, c, ',');) f.push_back(c);
    return f.at(f.size() - 3);
  };
  ASSERT_EQ(ba.rfind("512,16,128,2,BA,True,1000,1,2,3,4,5,", 0), 0u) << ba;  // the cell is kept as given
  EXPECT_EQ(sim(ba), sim(bank));
  EXPECT_NE(sim(ba), sim(bg));  // and it is the bank level's time, not the bank group's
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
  const test::CliResult ref = test::run_cli("validate ramulator " + no_col + " --out " + dir + "/r.csv");
  EXPECT_EQ(ref.exit_code, 2);
  EXPECT_NE(ref.output.find("reference \"ramulator\": not known (allowed: attacc, cent)"), std::string::npos) << ref.output;
  EXPECT_FALSE(std::filesystem::exists(dir + "/r.csv"));
}

TEST(ValidateCli, CentWritesBlockAndPartsAndRefusesTensorParallelRows) {
  const std::string dir = test::temp_dir("validate-cent");
  const std::string head =
      "Model,Device number,Pipeline parallelism,Tensor parallelism,Channels per device,Channels per block,Sequence length,"
      "PIM latency,CXL latency,Acc latency,TransformerBlock latency\n";
  const std::string good = "Llama2-7B,8,32,1,32,8,128,0.2127925,0.00032238887363,0.00932,0.22243488887363\n";
  const std::string rows = write_points(dir, "c.csv", head + good);
  const test::CliResult r = test::run_cli("validate cent " + rows + " --out " + dir + "/r.csv");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("block mean |err|"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("PIM: mean |err|"), std::string::npos) << r.output;
  const std::string csv = test::read_file(dir + "/r.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')), head.substr(0, head.size() - 1) +
                                               ",ahbm_pim_ms,ahbm_cxl_ms,ahbm_acc_ms,ahbm_block_ms,err_pim,err_cxl,err_acc,err");
  EXPECT_NE(csv.find("\n" + good.substr(0, good.size() - 1) + ","), std::string::npos) << csv;

  const std::pair<std::string, std::string> bad[] = {
      {"Llama2-7B,8,1,8,32,32,128,1,1,1,1", "column Tensor parallelism = 8: a block split over devices needs the chips to talk to each other (the many-chips issue)"},
      {"Llama3-8B,8,8,1,32,32,128,1,1,1,1", "column Model = \"Llama3-8B\""},
      {"Llama2-7B,8,32,1,32,12,128,1,1,1,1", "column Channels per block = 12"},
      {"Llama2-7B,8,8,1,32,32,0,1,1,1,1", "column Sequence length = \"0\""},
  };
  for (const auto& [row, message] : bad) {
    const std::string path = write_points(dir, "b.csv", head + good + row + "\n");
    const test::CliResult e = test::run_cli("validate cent " + path + " --out " + dir + "/e.csv");
    EXPECT_EQ(e.exit_code, 2) << row << "\n" << e.output;
    EXPECT_NE(e.output.find(message), std::string::npos) << e.output;
    EXPECT_FALSE(std::filesystem::exists(dir + "/e.csv")) << row;
  }
}
