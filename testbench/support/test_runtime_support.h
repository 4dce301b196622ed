#pragma once
// Shared by the runtime tests: scenarios written inline as JSON, run in memory.
#include <string>

#include "hw/common/base/error.h"
#include "runtime/run/driver.h"

namespace ahbm::test {

// A scenario from JSON text in the test; `name` stands for the file name in error messages.
inline Scenario inline_scenario(const char* json, const std::string& name) {
  return parse_scenario(Json::parse(json), name);
}

// Three agents decoding 2, 5 and every one of 4 steps after the fan-out, then a join
// (test_runtime_decode.cpp, test_step_pipeline.cpp).
inline Scenario decode_scenario() {
  return inline_scenario(R"({
    "name": "decode", "model": {"head_dim": 16, "num_q_heads": 2, "num_kv_heads": 1},
    "kv": {"page_tokens": 4}, "shared_prefix_tokens": 70, "seed": 3,
    "agents": [{"name": "a", "new_tokens": 3, "decode_tokens": 2},
               {"name": "b", "new_tokens": 6, "decode_tokens": 5},
               {"name": "c", "new_tokens": 1}],
    "phases": [{"type": "fanout"}, {"type": "decode", "steps": 4}, {"type": "join", "tokens": 5}]
  })", "decode");
}

// Options for a run in memory: no VCD waveform (these tests do not read it).
inline RunOptions in_memory_options() {
  RunOptions opt;
  opt.vcd = false;
  return opt;
}

// A timing-only run in memory (no values, no VCD) on `hw`.
inline RunOutput timing_only_run(const Scenario& sc, const HwConfig& hw = {}) {
  RunOptions opt = in_memory_options();
  opt.values = false;
  return execute(sc, hw, opt);
}

// The default chip config with a system of `chips` of it (its default network).
inline HwConfig system_of_chips(int chips) {
  HwConfig hw;
  hw.system.chips = chips;
  return hw;
}

// The InputError message a timing-only run of `sc` on `hw` is refused with ("" when it runs).
inline std::string refusal_of(const Scenario& sc, const HwConfig& hw) {
  try {
    timing_only_run(sc, hw);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace ahbm::test
