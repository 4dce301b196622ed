#include <iostream>

#include "hw/common/hw_config.h"
#include "tools/cli/commands.h"

namespace ahbm::cli {

// Prints a hardware config with every field filled in: the built-in defaults, or the given file
// resolved against them (what a run will actually use).
int cmd_hw_config(int argc, char** argv) {
  if (argc > 2 || (argc == 2 && std::string(argv[1]).rfind("-", 0) == 0)) {
    std::cout << "usage: ahbm-sim hw-config [HW.json]\n"
                 "Prints the resolved hardware config (defaults filled in) as JSON.\n";
    return argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") ? 0 : 2;
  }
  const HwConfig c = argc == 2 ? load_hw_config(argv[1]) : HwConfig{};
  std::cout << to_json(c).dump(2) << "\n";
  return 0;
}

}  // namespace ahbm::cli
