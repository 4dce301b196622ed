// The include levels (docs/architecture.md): a file in room X may include a file of room Y only
// when Y == X or Y sits on a lower level than X; two rooms on one level never include each other.
// The rooms of hw/ are its folders, with hw/common/ split into its sub-floors; the rooms of
// runtime/ are its folders (no file lives loose at its top). hw/ never includes runtime/ or
// tools/; runtime/ never includes tools/. Reads every `#include "..."` of every source file under
// hw/ and runtime/ as it is on disk.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

using Levels = std::map<std::string, int>;

// The floor first; a new folder (or hw/common sub-floor) must be given its level here and in
// docs/architecture.md.
const Levels kHwLevel = {
    {"common/base", 0},      // errors, checked math, timing, JSON reading, storage types
    {"common/config", 1},    // the parameter table: HwConfig, overrides, checks, fault injection
    {"common/model", 2},     // closed forms and numerics: engines, attention state, vector ops
    {"common/contract", 3},  // the jobs the runtime hands the hardware, and the interfaces
    {"common/observe", 3},   // statistics, trace sinks, span recorder, numeric guard, TLM checker
    {"common/sim", 4},       // SystemC infrastructure: run context, shared state, waits, payloads
    {"noc", 5},   {"hbm", 5},  // the network, DRAM/HBM slice models
    {"pe", 6},    {"link", 6},  // processing element, inter-CUBE reduction links
    {"system", 6},              // the chip-to-chip network and the collectives on it
    {"cube", 7},                // a CUBE: Q buffer, reducer, its PEs
    {"group", 8},               // a KV-head group: CUBEs, reduction network, KV mover
    {"chip", 9},                // the chip and the Simulator
    {"bench", 10},              // standalone NoC and HBM testbenches (library ahbm_hw_bench)
};

const Levels kRuntimeLevel = {
    {"kv", 0},        // paged KV cache, prefix placement
    {"policy", 0},    // policy table, cost model, roofline
    {"join", 0},      // join strategies: spec, plan, shapes, results
    {"io", 0},        // files: npy, output directory, provenance, version, host limits
    {"numerics", 0},  // the float64 reference, tensor generation
    {"model", 1},     // a whole model: config, layers, memory map, MoE routing
    {"scenario", 2},  // the scenario and its session
    {"plan", 3},      // the Q tiling and the policy choices on it, policy evaluation
    {"step", 4},      // simulating one step: step runner, records, timeline, a model's steps
    {"report", 5},    // power, energy, traces, waves, statistics and latency files
    {"run", 6},       // a whole run: driver, its options and output, summary, preflight, power cap
    {"serve", 7},     // serving: workload, scheduler, engine, serve report
    {"validate", 8},  // validation presets over runs and serving
};

struct Include {
  std::string file;  // relative to the source root, e.g. "hw/pe/pe.h"
  int line;
  std::string target;  // as written, e.g. "hw/common/contract/job.h"
};

std::vector<Include> includes_under(const fs::path& root, const std::string& top, int* files) {
  static const std::regex include(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::vector<Include> out;
  *files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
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

// The room of "TOP/X/..." under `top` ("hw" or "runtime"): "X", or "common/Y" for hw/common/Y/...;
// "" for a path elsewhere, "(top)" for a file loose at the top of TOP/ or hw/common/ (no room).
std::string room(const std::string& top, const std::string& path) {
  const std::string prefix = top + "/";
  if (path.rfind(prefix, 0) != 0) return "";
  size_t slash = path.find('/', prefix.size());
  if (slash == std::string::npos) return "(top)";
  std::string folder = path.substr(prefix.size(), slash - prefix.size());
  if (top == "hw" && folder == "common") {
    const size_t sub = path.find('/', slash + 1);
    if (sub == std::string::npos) return "(top)";
    folder += "/" + path.substr(slash + 1, sub - slash - 1);
  }
  return folder;
}

// Checks every include of a file under `top` that names a file under `top`; returns how many.
int check_levels(const std::vector<Include>& includes, const std::string& top, const Levels& level) {
  int checked = 0;
  for (const Include& inc : includes) {
    const std::string where = inc.file + ":" + std::to_string(inc.line) + ": #include \"" + inc.target + "\"";
    const std::string from = room(top, inc.file), to = room(top, inc.target);
    EXPECT_TRUE(level.count(from)) << inc.file << ": " << top << "/" << from << " has no include level";
    if (to.empty() || !level.count(from)) continue;
    EXPECT_TRUE(level.count(to)) << where << ": " << top << "/" << to << " has no include level";
    if (!level.count(to)) continue;
    ++checked;
    EXPECT_TRUE(to == from || level.at(to) < level.at(from))
        << where << ": " << top << "/" << from << " (level " << level.at(from) << ") may not include " << top << "/"
        << to << " (level " << level.at(to) << ")";
  }
  return checked;
}

// No file under `top` includes a file under any of `above` (the libraries above it).
void expect_never_includes(const std::vector<Include>& includes, const std::string& top,
                           const std::vector<std::string>& above) {
  for (const Include& inc : includes)
    for (const std::string& other : above)
      EXPECT_NE(inc.target.rfind(other + "/", 0), 0u)
          << inc.file << ":" << inc.line << ": #include \"" << inc.target << "\": " << top << "/ never includes "
          << other << "/";
}

}  // namespace

TEST(IncludeLevels, HwIncludesOnlyItsOwnOrLowerFolders) {
  int files = 0;
  const std::vector<Include> includes = includes_under(AHBM_SOURCE_DIR, "hw", &files);
  // Not vacuous: hw/ has some 130 source files and some 300 project includes.
  EXPECT_GE(files, 100);
  ASSERT_GE(includes.size(), 200u);
  expect_never_includes(includes, "hw", {"runtime", "tools", "testbench"});
  EXPECT_GE(check_levels(includes, "hw", kHwLevel), 200);
}

TEST(IncludeLevels, RuntimeIncludesOnlyItsOwnOrLowerFolders) {
  int files = 0;
  const std::vector<Include> includes = includes_under(AHBM_SOURCE_DIR, "runtime", &files);
  // Not vacuous: runtime/ has some 110 source files, 310 project includes, 190 of runtime/ files.
  EXPECT_GE(files, 90);
  ASSERT_GE(includes.size(), 250u);
  expect_never_includes(includes, "runtime", {"tools", "testbench"});
  EXPECT_GE(check_levels(includes, "runtime", kRuntimeLevel), 150);
}

// The level rule itself, on made-up includes: what the two tests above would report.
TEST(IncludeLevels, RuleRejectsBackEdgesAndSameLevelNeighbours) {
  EXPECT_EQ(room("hw", "hw/common/config/hw_config.h"), "common/config");
  EXPECT_EQ(room("hw", "hw/common/loose.h"), "(top)");
  EXPECT_EQ(room("runtime", "runtime/run/driver.h"), "run");
  EXPECT_EQ(room("runtime", "runtime/loose.h"), "(top)");
  EXPECT_EQ(room("runtime", "hw/chip/chip.h"), "");
  // Down and sideways within a room pass; up and across one level fail.
  EXPECT_EQ(check_levels({{"runtime/run/driver.cpp", 1, "runtime/kv/page_manager.h"},
                          {"runtime/kv/placement.h", 2, "runtime/kv/page_manager.h"},
                          {"runtime/kv/placement.h", 3, "hw/common/base/error.h"}},
                         "runtime", kRuntimeLevel),
            2);
  ::testing::TestPartResultArray failures;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD,
                                                         &failures);
    check_levels({{"runtime/kv/page_manager.h", 1, "runtime/run/driver.h"},      // up
                  {"runtime/kv/page_manager.h", 2, "runtime/policy/cost_model.h"},  // across level 0
                  {"runtime/loose.cpp", 3, "runtime/kv/page_manager.h"}},       // no room
                 "runtime", kRuntimeLevel);
    check_levels({{"hw/common/contract/job.h", 4, "hw/common/observe/stats.h"},  // across level 3
                  {"hw/common/base/error.h", 5, "hw/common/config/hw_config.h"}},  // up
                 "hw", kHwLevel);
  }
  EXPECT_EQ(failures.size(), 5);
}
