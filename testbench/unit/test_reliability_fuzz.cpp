// Replays the fuzzers' regression inputs (testbench/fuzz/regressions/) and their seed corpus
// with the regular build: every file must parse or be rejected with an InputError, never crash
// or throw anything else. The fuzzers themselves run in CI (testbench/fuzz/run.sh).
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hw/common/base/error.h"
#include "hw/common/config/hw_config.h"
#include "runtime/scenario/scenario.h"

namespace fs = std::filesystem;
using namespace ahbm;

namespace {

std::vector<std::string> json_files(const std::string& rel) {
  std::vector<std::string> out;
  const fs::path dir = fs::path(AHBM_SOURCE_DIR) / rel;
  if (fs::exists(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".json") out.push_back(e.path().string());
  return out;
}

// Returns "" when the file parsed, the InputError message when it was rejected.
template <class Load>
std::string outcome(Load load, const std::string& file) {
  try {
    load(file);
    return "";
  } catch (const InputError& e) {
    return e.what();
  }
}

// Each regression input is bad: it must be rejected with an InputError naming its file.
template <class Load>
void expect_all_rejected(Load load, const std::string& dir, size_t at_least) {
  const std::vector<std::string> files = json_files(dir);
  ASSERT_GE(files.size(), at_least) << dir;
  for (const auto& f : files) {
    const std::string msg = outcome(load, f);
    EXPECT_NE(msg.find(f), std::string::npos) << f << ": " << msg;
  }
}

TEST(FuzzRegressions, HwConfigInputsAreRejectedWithInputError) {
  expect_all_rejected(load_hw_config, "testbench/fuzz/regressions/hw", 3);
}

TEST(FuzzRegressions, ScenarioInputsAreRejectedWithInputError) {
  expect_all_rejected(load_scenario, "testbench/fuzz/regressions/scenario", 2);
}

TEST(FuzzRegressions, SeedCorpusIsValid) {
  // The seeds are meant to be good inputs the fuzzer mutates from.
  for (const auto& f : json_files("testbench/fuzz/corpus/hw")) EXPECT_EQ(outcome(load_hw_config, f), "") << f;
  for (const auto& f : json_files("testbench/fuzz/corpus/scenario")) EXPECT_EQ(outcome(load_scenario, f), "") << f;
  for (const auto& f : json_files("traces")) EXPECT_EQ(outcome(load_scenario, f), "") << f;
}

TEST(FuzzRegressions, ConfigsRoundTripThroughJson) {
  // What the fuzz harnesses assert for every accepted input, here for the seeds.
  for (const auto& f : json_files("testbench/fuzz/corpus/hw")) {
    const Json j = to_json(load_hw_config(f));
    EXPECT_EQ(to_json(parse_hw_config(j, "roundtrip")), j) << f;
  }
  const Json d = to_json(HwConfig{});
  EXPECT_EQ(to_json(parse_hw_config(d, "defaults")), d);
  EXPECT_FALSE(d.contains("fault_injection")) << "fault injection stays out of normal configs";
}

}  // namespace
