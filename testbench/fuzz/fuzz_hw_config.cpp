// libFuzzer harness: arbitrary bytes as a hardware config file. The parser must either accept
// the text or throw InputError; anything else (another exception, a sanitizer report, a hang)
// is a bug. An accepted config must survive to_json -> parse unchanged.
#include <cstddef>
#include <cstdint>
#include <string>

#include "hw/common/error.h"
#include "hw/common/hw_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const ahbm::HwConfig c = ahbm::parse_hw_config(ahbm::parse_json_text(text, "fuzz.json"), "fuzz.json");
    const ahbm::Json j = ahbm::to_json(c);
    if (ahbm::to_json(ahbm::parse_hw_config(j, "roundtrip.json")) != j) __builtin_trap();
  } catch (const ahbm::InputError&) {
  }
  return 0;
}
