#include <iostream>

#include "hw/noc/noc.h"
#include "tools/cli/commands.h"

namespace ahbm::cli {

int cmd_nocs(int, char**) {
  const NocRegistry r = NocRegistry::with_builtin_models();
  for (const auto& m : r.models()) std::cout << m.name << std::string(m.name.size() < 12 ? 12 - m.name.size() : 1, ' ')
                                             << m.description << "\n";
  return 0;
}

}  // namespace ahbm::cli
