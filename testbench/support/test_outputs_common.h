#pragma once
// Shared by the tests of run directories: the default scenario run into a directory,
// and a VCD reader written independently of the writer (runtime/report/waves.cpp).
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "runtime/run/driver.h"
#include "test_files.h"

namespace ahbm::test {

// Full names of the variables a VCD declares ("ahbm.group0.cube0.pe0.activity[2:0]"), with
// the identifier code of each; parsed line by line.
inline std::map<std::string, std::string> vcd_signals(const std::string& vcd) {
  std::map<std::string, std::string> out;
  std::vector<std::string> scope;
  std::istringstream in(vcd);
  std::string line;
  while (std::getline(in, line) && line.rfind("$enddefinitions", 0) != 0) {
    std::istringstream ls(line);
    std::vector<std::string> w;
    for (std::string t; ls >> t;) w.push_back(t);
    if (w.empty()) continue;
    if (w[0] == "$scope") scope.push_back(w[2]);
    if (w[0] == "$upscope") scope.pop_back();
    if (w[0] == "$var") {
      std::string name;
      for (const auto& s : scope) name += s + ".";
      name += w[4];
      if (w[5] != "$end") name += w[5];
      out[name] = w[3];
    }
  }
  return out;
}

// The value changes (time in the VCD's unit, value) of the vector variable with identifier code
// `id`, in file order, the initial $dumpvars value at time 0 included.
inline std::vector<std::pair<uint64_t, uint64_t>> vcd_changes(const std::string& vcd, const std::string& id) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  std::istringstream in(vcd.substr(vcd.find("$enddefinitions")));
  std::string line;
  uint64_t t = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (line[0] == '#') t = std::stoull(line.substr(1));
    if (line[0] == 'b' && line.substr(line.find(' ') + 1) == id)
      out.emplace_back(t, std::stoull(line.substr(1, line.find(' ') - 1), nullptr, 2));
  }
  return out;
}

inline RunOutput default_run(const std::string& out_dir, RunOptions opt = {}) {
  const Scenario sc = load_scenario(std::string(AHBM_SOURCE_DIR) + "/traces/fanout_8x20.json");
  RunOutput run = execute(sc, HwConfig{}, opt);
  write_run_dir(out_dir, run, opt);
  return run;
}

}  // namespace ahbm::test
