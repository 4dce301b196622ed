#include <iostream>

#include "hw/noc/noc.h"
#include "hw/system/system_network.h"
#include "tools/cli/commands.h"

namespace po = boost::program_options;

namespace ahbm::cli {

int cmd_nocs(int argc, char** argv) {
  po::options_description desc(
      "usage: ahbm-sim nocs [--system]\n\nLists the registered NoC models (noc.model), or with --system the\n"
      "chip-to-chip network models (system.network.model; docs/system.md).\n\noptions");
  bool system = false;
  desc.add_options()("help,h", "show this help")("system", po::bool_switch(&system), "list the system networks");
  if (!parse_command_line(argc, argv, desc)) return 0;  // --help; an option or argument is a UsageError
  const NocRegistry r = system ? system_network_registry() : NocRegistry::with_builtin_models();
  for (const auto& m : r.models()) std::cout << m.name << std::string(m.name.size() < 12 ? 12 - m.name.size() : 1, ' ')
                                             << m.description << "\n";
  return 0;
}

}  // namespace ahbm::cli
