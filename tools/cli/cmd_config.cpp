#include <iostream>

#include "hw/common/hw_config.h"
#include "runtime/provenance.h"
#include "tools/cli/commands.h"

namespace ahbm::cli {

// Prints a hardware config with every field filled in: the built-in defaults, or the given file
// resolved against them (what a run will actually use). With --schema or --markdown-table it
// prints what the parameter table generates (tools/gen-hw-config.sh writes them to the repo).
int cmd_hw_config(int argc, char** argv) {
  const std::string arg = argc == 2 ? argv[1] : "";
  if (arg == "--schema") {
    std::cout << hw_config_schema().dump(2) << "\n";
    return 0;
  }
  if (arg == "--markdown-table") {
    std::cout << hw_config_markdown_table();
    return 0;
  }
  if (argc > 2 || arg.rfind("-", 0) == 0) {
    std::cout << "usage: ahbm-sim hw-config [HW.json | --schema | --markdown-table]\n"
                 "Prints the resolved hardware config (defaults filled in) as JSON; --schema prints its\n"
                 "JSON Schema, --markdown-table the parameter table of docs/model.md.\n";
    return arg == "--help" || arg == "-h" ? 0 : 2;
  }
  const HwConfig c = argc == 2 ? load_hw_config(argv[1]) : HwConfig{};
  std::cout << hw_config_text(c);
  return 0;
}

}  // namespace ahbm::cli
