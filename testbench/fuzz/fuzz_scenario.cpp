// libFuzzer harness: arbitrary bytes as a scenario file (see fuzz_parse.h).
#include "runtime/scenario.h"
#include "testbench/fuzz/fuzz_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz_parse(data, size, ahbm::parse_scenario);
}
