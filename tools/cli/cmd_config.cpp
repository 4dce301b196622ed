#include <iostream>

#include "hw/chip/chip.h"
#include "hw/common/config/hw_config.h"
#include "hw/common/config/hw_config_override.h"
#include "hw/noc/noc.h"
#include "hw/system/system_network.h"
#include "runtime/io/provenance.h"
#include "tools/cli/commands.h"

namespace po = boost::program_options;

namespace ahbm::cli {

// Prints a hardware config with every field filled in: the built-in defaults, or the given file
// resolved against them, with any --set applied (what a run will actually use; its SHA-256 is
// summary.json's simulator.config_sha256). With --schema, --markdown-table or --noc-markdown-table
// it prints what the parameter tables generate (tools/gen-hw-config.sh writes them to the repo).
int cmd_hw_config(int argc, char** argv) {
  po::options_description desc(
      "usage: ahbm-sim hw-config [HW.json] [--set KEY=VALUE ...] | --schema | --markdown-table | --noc-markdown-table\n\n"
      "Prints the resolved hardware config (defaults filled in, overrides applied) as JSON; --schema\n"
      "prints its JSON Schema, --markdown-table the parameter table of docs/model.md, --noc-markdown-table\n"
      "the NoC models' parameter table of docs/noc.md, --system-markdown-table the system networks' of\n"
      "docs/system.md.\n\noptions");
  std::string hw;
  std::vector<std::string> overrides;
  desc.add_options()("help,h", "show this help")("hw", po::value<std::string>(&hw), "hardware config JSON (positional)")(
      "schema", "print the config's JSON Schema")("markdown-table", "print the parameter table of docs/model.md")(
      "noc-markdown-table", "print the NoC models' parameter table of docs/noc.md")(
      "system-markdown-table", "print the system networks' parameter table of docs/system.md");
  add_set_option(desc, overrides);
  const auto vm = parse_command_line(argc, argv, desc, "hw");
  if (!vm) return 0;  // --help
  const bool schema = vm->count("schema") > 0, table = vm->count("markdown-table") > 0,
             noc_table = vm->count("noc-markdown-table") > 0, system_table = vm->count("system-markdown-table") > 0;
  if ((schema || table || noc_table || system_table) &&
      (schema + table + noc_table + system_table > 1 || !hw.empty() || !overrides.empty()))
    throw UsageError(
        "--schema, --markdown-table, --noc-markdown-table and --system-markdown-table take no config and exclude each other");
  const NocRegistry nocs = NocRegistry::with_builtin_models();
  const NocRegistry systems = system_network_registry();
  if (schema) {
    std::cout << hw_config_schema(nocs.params(), systems.params()).dump(2) << "\n";
    return 0;
  }
  if (table || noc_table || system_table) {
    std::cout << (table ? hw_config_markdown_table() : plugin_params_markdown_table((noc_table ? nocs : systems).params()));
    return 0;
  }
  const HwConfig cfg = load_hw_config(hw, overrides);
  // The NoC model's own check of noc.params, as a run's or serve's chip makes it when it is built.
  check_noc_config(cfg, nocs, hw.empty() ? "(built-in defaults)" : hw);
  // And the system network's of system.network.params (docs/system.md).
  check_system_config(cfg, systems, hw.empty() ? "(built-in defaults)" : hw);
  std::cout << hw_config_text(cfg);
  return 0;
}

}  // namespace ahbm::cli
