#include <iostream>

#include "hw/noc/noc.h"
#include "tools/cli/commands.h"

namespace po = boost::program_options;

namespace ahbm::cli {

int cmd_nocs(int argc, char** argv) {
  po::options_description desc("usage: ahbm-sim nocs\n\nLists the registered NoC models.\n\noptions");
  desc.add_options()("help,h", "show this help");
  if (!parse_command_line(argc, argv, desc)) return 0;  // --help; an option or argument is a UsageError
  const NocRegistry r = NocRegistry::with_builtin_models();
  for (const auto& m : r.models()) std::cout << m.name << std::string(m.name.size() < 12 ? 12 - m.name.size() : 1, ' ')
                                             << m.description << "\n";
  return 0;
}

}  // namespace ahbm::cli
