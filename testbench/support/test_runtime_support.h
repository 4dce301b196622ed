#pragma once
// Shared by the runtime tests: scenarios written inline as JSON, run in memory.
#include <string>

#include "runtime/driver.h"

namespace ahbm::test {

// A scenario from JSON text in the test; `name` stands for the file name in error messages.
inline Scenario inline_scenario(const char* json, const std::string& name) {
  return parse_scenario(Json::parse(json), name);
}

// Options for a run in memory: no VCD waveform (these tests do not read it).
inline RunOptions in_memory_options() {
  RunOptions opt;
  opt.vcd = false;
  return opt;
}

}  // namespace ahbm::test
