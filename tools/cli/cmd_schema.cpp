#include <iostream>

#include "runtime/join/plan.h"
#include "runtime/model/config.h"
#include "runtime/scenario/scenario.h"
#include "runtime/serve/workload.h"
#include "tools/cli/commands.h"

namespace po = boost::program_options;

namespace ahbm::cli {

// Prints the JSON Schema of an input format, generated from its parser's own field reads over the
// probe files given (tools/gen-schemas.sh passes every shipped file of the format; docs/schema/).
int cmd_schema(int argc, char** argv) {
  po::options_description desc(
      "usage: ahbm-sim schema scenario|model-config|join-input|serve-workload PROBE.json...\n\n"
      "Parses the probe files with the format's parser, recording every field it reads (type, range,\n"
      "allowed names, default, required), and prints the union as a JSON Schema (draft 2020-12). The\n"
      "probes must between them contain every optional block of the format.\n"
      "The hardware config's schema comes from its parameter table: `ahbm-sim hw-config --schema`.\n\noptions");
  std::vector<std::string> args;
  desc.add_options()("help,h", "show this help")("args", po::value<std::vector<std::string>>(&args),
                                                 "format, then probe files (positional)");
  const auto vm = parse_command_line(argc, argv, desc, "args", -1);
  if (!vm) return 0;  // --help
  if (args.empty()) throw UsageError("name a format (allowed: scenario, model-config, join-input, serve-workload)");
  const std::string format = args[0];
  const std::vector<std::string> probes(args.begin() + 1, args.end());
  if (format != "scenario" && format != "model-config" && format != "join-input" && format != "serve-workload")
    throw UsageError("unknown format \"" + format + "\" (allowed: scenario, model-config, join-input, serve-workload)");
  if (probes.empty()) throw UsageError("give at least one probe file of the " + format + " format");
  const Json s = format == "scenario"       ? scenario_schema(probes)
                 : format == "model-config" ? model_config_schema(probes)
                 : format == "join-input"   ? join::join_input_schema(probes)
                                            : serve::workload_schema(probes);
  std::cout << s.dump(2) << "\n";
  return 0;
}

}  // namespace ahbm::cli
