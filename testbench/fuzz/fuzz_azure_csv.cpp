// libFuzzer harness: arbitrary bytes as a serve workload's Azure trace CSV. The reader must
// accept the text or throw InputError; accepted rows must be in time order with counts in range.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "hw/common/base/error.h"
#include "runtime/serve/azure_csv.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    const auto rows = ahbm::serve::parse_azure_csv(in, "fuzz.csv", 1000);
    double last = 0;
    for (const auto& r : rows) {
      if (!(r.arrival_ns >= last) || r.context_tokens < 1 || r.generated_tokens < 1) __builtin_trap();
      last = r.arrival_ns;
    }
  } catch (const ahbm::InputError&) {
  }
  return 0;
}
