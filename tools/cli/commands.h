#pragma once
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

namespace ahbm::cli {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Command {
  std::string name;
  std::string summary;
  std::function<int(int argc, char** argv)> run;  // argv[0] is the command name
};

// Parses a subcommand's argv against `desc`, turning Boost errors into UsageError; `positional`
// (if not null) names the option that one bare argument fills. With -h/--help, prints `desc` to
// stdout and returns nothing: the command then exits 0.
std::optional<boost::program_options::variables_map> parse_command_line(
    int argc, char** argv, const boost::program_options::options_description& desc, const char* positional = nullptr);

// Adds `--set KEY=VALUE` (repeatable): overrides of the hardware config given by --hw (or of the
// built-in defaults), checked as the file is (load_hw_config with overrides).
void add_set_option(boost::program_options::options_description& desc, std::vector<std::string>& overrides);

int cmd_run(int argc, char** argv);
int cmd_nocs(int argc, char** argv);
int cmd_hw_config(int argc, char** argv);
int cmd_policy_eval(int argc, char** argv);
int cmd_noc_bench(int argc, char** argv);
int cmd_hbm_bench(int argc, char** argv);

inline const std::vector<Command>& commands() {
  static const std::vector<Command> list = {
      {"run", "simulate a scenario; writes summary.json, latency.csv, waves.vcd", cmd_run},
      {"nocs", "list the registered NoC models", cmd_nocs},
      {"policy-eval", "simulate and estimate every attention policy for one scenario", cmd_policy_eval},
      {"hw-config", "print a hardware config with every default filled in", cmd_hw_config},
      {"noc-bench", "synthetic-traffic testbench for one NoC model (latency, throughput, saturation)", cmd_noc_bench},
      {"hbm-bench", "chunked traffic on one bank-level HBM3 pseudo-channel (efficiency, row hits, refresh)", cmd_hbm_bench},
  };
  return list;
}

}  // namespace ahbm::cli
