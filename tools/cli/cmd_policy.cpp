// `ahbm-sim policy-eval`: one point of the policy validation sweep (tools/policy_sweep).
#include <iostream>

#include "hw/common/config/hw_config_override.h"
#include "runtime/plan/policy_eval.h"
#include "tools/cli/commands.h"
#include "tools/cli/options.h"

namespace po = boost::program_options;

namespace ahbm::cli {

int cmd_policy_eval(int argc, char** argv) {
  po::options_description desc(
      "usage: ahbm-sim policy-eval SCENARIO.json [--hw HW.json] [--set KEY=VALUE ...] [--objective O]\n\n"
      "Simulates the scenario's step under every policy (A, B1..B5; timing only), estimates each\n"
      "with the cost model and prints one JSON object: per policy simulated_ns, estimate_ns, error,\n"
      "the simulated and estimated energy, and the estimate's terms; the auto choice for the\n"
      "objective, the simulated winner under it and whether they agree.\n"
      "On a terminal, stderr shows the candidates simulated so far and an ETA (not with -q; -v: a line\n"
      "per candidate, terminal or not).\n\noptions");
  std::string scenario, hw, objective = "time";
  std::vector<std::string> overrides;
  desc.add_options()("help,h", "show this help")("scenario", po::value<std::string>(&scenario), "scenario JSON")(
      "hw", po::value<std::string>(&hw), "hardware config JSON (default: built-in defaults)")(
      "objective", po::value<std::string>(&objective),
      "what auto and each policy's tile choice minimise, and what the winner is judged by: time (default), energy "
      "or edp (docs/policies.md)");
  add_set_option(desc, overrides);
  const auto vm = parse_command_line(argc, argv, desc, "scenario");
  if (!vm) return 0;  // --help
  if (scenario.empty()) throw UsageError("missing SCENARIO.json");
  const Objective goal = parse_objective(objective, "--objective");
  const HwConfig cfg = load_hw_config(hw, overrides);
  report::ProgressLine line = stderr_progress(verbosity_of(*vm));
  const auto progress = [&line](size_t done, size_t total, const std::string& next) {
    std::string text = "policy-eval: " + std::to_string(done) + "/" + std::to_string(total) + " candidates simulated";
    if (!next.empty()) text += " | next " + next;
    line.update(double(done), double(total), text);
  };
  const Json report = evaluate_policies(load_scenario(scenario), cfg, line.active() ? progress : PolicyEvalProgress(), goal);
  line.clear();
  std::cout << report.dump() << "\n";
  return 0;
}

}  // namespace ahbm::cli
