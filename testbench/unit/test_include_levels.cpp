// The include levels of hw/ (docs/architecture.md): a file in hw/X may include hw/Y only when
// Y sits on a lower level than X, or Y == X; hw/ never includes runtime/ or tools/. Reads every
// `#include "..."` of every source file under hw/ as it is on disk.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// The floor first; a new hw folder must be given its level here (and in docs/architecture.md).
const std::map<std::string, int> kLevel = {
    {"common", 0},                // config, timing, errors, sinks, job contract, interfaces, ...
    {"noc", 1},   {"hbm", 1},     // the network, DRAM/HBM slice models
    {"pe", 2},    {"link", 2},    // processing element, inter-CUBE reduction links
    {"cube", 3},                  // a CUBE: Q buffer, reducer, its PEs
    {"group", 4},                 // a KV-head group: CUBEs, reduction network, KV mover
    {"chip", 5},                  // the chip and the Simulator
};

struct Include {
  std::string file;  // relative to the source root, e.g. "hw/pe/pe.h"
  int line;
  std::string target;  // as written, e.g. "hw/common/contract/job.h"
};

std::vector<Include> hw_includes(const fs::path& root, int* files) {
  static const std::regex include(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::vector<Include> out;
  *files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(root / "hw")) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp")) continue;
    ++*files;
    std::ifstream in(entry.path());
    std::string text;
    for (int n = 1; std::getline(in, text); ++n) {
      std::smatch m;
      if (std::regex_search(text, m, include))
        out.push_back({fs::relative(entry.path(), root).generic_string(), n, m[1].str()});
    }
  }
  return out;
}

// The hw folder of "hw/X/...", or "" for anything else.
std::string hw_folder(const std::string& path) {
  if (path.rfind("hw/", 0) != 0) return "";
  const size_t slash = path.find('/', 3);
  return slash == std::string::npos ? "" : path.substr(3, slash - 3);
}

}  // namespace

TEST(IncludeLevels, HwIncludesOnlyItsOwnOrLowerFolders) {
  int files = 0;
  const std::vector<Include> includes = hw_includes(AHBM_SOURCE_DIR, &files);
  // Not vacuous: hw/ has some 80 source files and over 150 project includes.
  EXPECT_GE(files, 60);
  ASSERT_GE(includes.size(), 120u);
  int checked = 0;
  for (const Include& inc : includes) {
    const std::string where = inc.file + ":" + std::to_string(inc.line) + ": #include \"" + inc.target + "\"";
    EXPECT_NE(inc.target.rfind("runtime/", 0), 0u) << where << ": hw/ never includes runtime/";
    EXPECT_NE(inc.target.rfind("tools/", 0), 0u) << where << ": hw/ never includes tools/";
    EXPECT_NE(inc.target.rfind("testbench/", 0), 0u) << where << ": hw/ never includes testbench/";
    const std::string from = hw_folder(inc.file), to = hw_folder(inc.target);
    ASSERT_TRUE(kLevel.count(from)) << inc.file << ": hw/" << from << " has no include level";
    if (inc.target.rfind("hw/", 0) != 0) continue;
    ASSERT_TRUE(kLevel.count(to)) << where << ": hw/" << to << " has no include level";
    ++checked;
    EXPECT_TRUE(to == from || kLevel.at(to) < kLevel.at(from))
        << where << ": hw/" << from << " (level " << kLevel.at(from) << ") may not include hw/" << to << " (level "
        << kLevel.at(to) << ")";
  }
  EXPECT_GE(checked, 120);
}
