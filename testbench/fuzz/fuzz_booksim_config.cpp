// libFuzzer harness: arbitrary bytes as a BookSim2 configuration file (noc-bench --booksim). The
// reader must map the text onto noc-bench's options or throw InputError; options it accepts must
// be in the ranges noc-bench documents.
#include <cstddef>
#include <cstdint>
#include <string>

#include "hw/bench/booksim_config.h"
#include "hw/common/base/error.h"

// libsystemc refers to the program's sc_main; libFuzzer's main runs instead, and nothing here
// elaborates a simulation.
int sc_main(int, char**) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const ahbm::NocBenchOptions o = ahbm::parse_booksim_config(text, "fuzz.cfg");
    if (!(o.rate > 0 && o.rate <= 1) || o.nodes < 1 || o.cycles < 1 || o.warmup < 0 || o.packet_flits < 1)
      __builtin_trap();
  } catch (const ahbm::InputError&) {
  }
  return 0;
}
