// libFuzzer harness: arbitrary bytes as a hardware config file (see fuzz_parse.h).
#include "hw/common/config/hw_config.h"
#include "testbench/fuzz/fuzz_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz_parse(data, size, ahbm::parse_hw_config);
}
