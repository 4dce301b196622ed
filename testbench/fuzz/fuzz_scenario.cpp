// libFuzzer harness: arbitrary bytes as a scenario file (see fuzz_parse.h).
#include "runtime/scenario/scenario.h"
#include "testbench/fuzz/fuzz_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz_parse(data, size, [](const ahbm::Json& j, const std::string& file) { return ahbm::parse_scenario(j, file); });
}
