// libFuzzer harness: arbitrary bytes as a scenario file. The parser must either accept the text
// or throw InputError; an accepted scenario must survive to_json -> parse unchanged.
#include <cstddef>
#include <cstdint>
#include <string>

#include "hw/common/error.h"
#include "runtime/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const ahbm::Scenario s = ahbm::parse_scenario(ahbm::parse_json_text(text, "fuzz.json"), "fuzz.json");
    const ahbm::Json j = ahbm::to_json(s);
    if (ahbm::to_json(ahbm::parse_scenario(j, "roundtrip.json")) != j) __builtin_trap();
  } catch (const ahbm::InputError&) {
  }
  return 0;
}
