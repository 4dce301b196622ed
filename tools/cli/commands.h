#pragma once
#include <functional>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "runtime/report/progress.h"

namespace ahbm {
class SimulatorPool;
}

namespace ahbm::cli {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What the caller of a command lends it: the CLI lends nothing; the Python module (tools/python)
// lends elaborated chips that outlive one command, so the runs of an in-process sweep reuse them.
struct CommandContext {
  SimulatorPool* sims = nullptr;  // run: simulate on these chips (nullptr: a pool of the run's own)
};

struct Command {
  std::string name;
  std::string summary;
  std::function<int(int argc, char** argv, const CommandContext& ctx)> run;  // argv[0] is the command name
};

// Parses a subcommand's argv against `desc`, turning Boost errors into UsageError; `positional`
// (if not null) names the option that `positional_count` bare arguments fill (-1: any number).
// With -h/--help, prints `desc` to stdout and returns nothing: the command then exits 0.
std::optional<boost::program_options::variables_map> parse_command_line(
    int argc, char** argv, const boost::program_options::options_description& desc, const char* positional = nullptr,
    int positional_count = 1);
// The verbosity a parsed command line asks for (-q/--quiet, -v/--verbose, --log-level; every
// command accepts them), info when none; conflicting ones are a UsageError (parse_command_line
// checks them first). Passed down, not kept: the process holds no verbosity of its own.
report::Verbosity verbosity_of(const boost::program_options::variables_map& vm);

// Adds `--set KEY=VALUE` (repeatable): overrides of the hardware config given by --hw (or of the
// built-in defaults), checked as the file is (load_hw_config with overrides).
void add_set_option(boost::program_options::options_description& desc, std::vector<std::string>& overrides);

int cmd_run(int argc, char** argv, SimulatorPool* sims = nullptr);
int cmd_serve(int argc, char** argv, SimulatorPool* sims = nullptr);
int cmd_nocs(int argc, char** argv);
int cmd_hw_config(int argc, char** argv);
int cmd_policy_eval(int argc, char** argv);
int cmd_noc_bench(int argc, char** argv);
int cmd_coll_bench(int argc, char** argv);
int cmd_hbm_bench(int argc, char** argv);
int cmd_schema(int argc, char** argv);
int cmd_validate(int argc, char** argv);

inline auto without_context(int (*f)(int, char**)) {
  return [f](int argc, char** argv, const CommandContext&) { return f(argc, argv); };
}

inline const std::vector<Command>& commands() {
  static const std::vector<Command> list = {
      {"run", "simulate a scenario; writes summary.json, latency.csv, trace.json, stats.json, power.csv, waves.vcd, waves.gtkw",
       [](int c, char** v, const CommandContext& x) { return cmd_run(c, v, x.sims); }},
      {"serve", "serve many workflows arriving over time; writes summary.json, requests.csv, trace.json",
       [](int c, char** v, const CommandContext& x) { return cmd_serve(c, v, x.sims); }},
      {"nocs", "list the registered NoC models (--system: the chip-to-chip networks)", without_context(cmd_nocs)},
      {"policy-eval", "simulate and estimate every attention policy for one scenario", without_context(cmd_policy_eval)},
      {"hw-config", "print a hardware config with every default filled in", without_context(cmd_hw_config)},
      {"noc-bench", "synthetic-traffic testbench for one NoC model (latency, throughput, saturation)",
       without_context(cmd_noc_bench)},
      {"coll-bench", "collectives on a chip-to-chip network over a size sweep (nccl-tests-style algbw, busbw, closed form)",
       without_context(cmd_coll_bench)},
      {"hbm-bench", "chunked traffic on one bank-level HBM3 pseudo-channel (efficiency, row hits, refresh)",
       without_context(cmd_hbm_bench)},
      {"validate", "compare the model with a published reference (attacc: attention per HBM3-PIM stack; cent: a Llama-2 block on GDDR6-AiM CXL devices)",
       without_context(cmd_validate)},
      {"schema", "print the JSON Schema of an input format (scenario, model-config, join-input, serve-workload)", without_context(cmd_schema)},
  };
  return list;
}

// Runs command argv[0] with its arguments and maps its exceptions to the exit codes of
// hw/common/base/error.h, printing the error to `err` ("ahbm-sim run: error: ..."). An unknown command
// is exit 2. Interrupted is rethrown: the CLI dies of the signal (main.cpp).
int run_command(int argc, char** argv, const CommandContext& ctx, std::ostream& err);

}  // namespace ahbm::cli
