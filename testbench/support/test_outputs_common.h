#pragma once
// Shared by the test_outputs*.cpp tests: runs the default scenario into a fresh run directory.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

#include "runtime/driver.h"

namespace ahbm::test {

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A unique scratch directory per test process, removed with the object.
struct Scratch {
  std::filesystem::path dir;
  explicit Scratch(const std::string& tag) {
    dir = std::filesystem::temp_directory_path() / ("ahbm-" + tag + "-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~Scratch() { std::filesystem::remove_all(dir); }
  std::string path(const std::string& rel) const { return (dir / rel).string(); }
};

inline RunOutput default_run(const std::string& out_dir, RunOptions opt = {}) {
  const Scenario sc = load_scenario(std::string(AHBM_SOURCE_DIR) + "/traces/fanout_8x20.json");
  RunOutput run = execute(sc, HwConfig{}, opt);
  write_run_dir(out_dir, run, opt);
  return run;
}

}  // namespace ahbm::test
