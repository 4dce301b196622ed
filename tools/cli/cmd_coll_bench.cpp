// `ahbm-sim coll-bench`: collectives on a system network over a size sweep (hw/bench/coll_bench.h).
#include <cctype>
#include <iostream>
#include <sstream>

#include "hw/bench/coll_bench.h"
#include "hw/common/base/error.h"
#include "hw/common/config/hw_config_override.h"
#include "runtime/io/output_dir.h"
#include "runtime/report/stats_tree.h"
#include "tools/cli/commands.h"
#include "tools/cli/options.h"

namespace po = boost::program_options;

namespace ahbm::cli {

namespace {

// "1024", "64K", "16M", "1G" (powers of 1024, as nccl-tests' -b and -e).
uint64_t parse_size(const std::string& option, const std::string& text) {
  uint64_t unit = 1;
  std::string digits = text;
  if (!digits.empty()) {
    const char c = char(std::toupper(static_cast<unsigned char>(digits.back())));
    if (c == 'K' || c == 'M' || c == 'G') {
      unit = c == 'K' ? 1ull << 10 : c == 'M' ? 1ull << 20 : 1ull << 30;
      digits.pop_back();
    }
  }
  const uint64_t hi = kMaxCollBenchBytes;
  const uint64_t n = parse_uint_option(option, digits, 1, hi / unit);
  return n * unit;
}

// "0,2,4,6:1,3,5,7": groups of chip indices.
std::vector<std::vector<int>> parse_groups(const std::string& text) {
  std::vector<std::vector<int>> groups;
  std::stringstream gs(text);
  for (std::string group; std::getline(gs, group, ':');) {
    groups.emplace_back();
    std::stringstream rs(group);
    for (std::string rank; std::getline(rs, rank, ',');)
      groups.back().push_back(int(parse_uint_option("--groups", rank, 0, 4095)));
    if (groups.back().empty()) throw UsageError("--groups " + text + ": an empty group (allowed: CHIP,CHIP,...[:CHIP,...])");
  }
  if (groups.empty()) throw UsageError("--groups needs at least one group");
  return groups;
}

}  // namespace

int cmd_coll_bench(int argc, char** argv) {
  po::options_description desc(
      "usage: ahbm-sim coll-bench [--network NAME] [--param key=value ...] [--chips N]\n"
      "                           [--collective all_reduce|all_gather|reduce_scatter|all_to_all|p2p] [--algo NAME]\n"
      "                           [-b MIN] [-e MAX] [-f FACTOR] [--groups 0,2,4,6:1,3,5,7] [--json] [--out FILE]\n"
      "       ahbm-sim coll-bench --hw HW.json [--set system.network.params.link_gbps=128 ...] [options as above]\n\n"
      "One collective over a size sweep on a chip-to-chip network (docs/system.md): an nccl-tests-style table of\n"
      "size, time, algorithm bandwidth (size / time) and bus bandwidth (x 2(n-1)/n for all_reduce, (n-1)/n for\n"
      "all_gather, reduce_scatter and all_to_all, 1 for p2p), beside the alpha-beta closed form of an idle network\n"
      "and the error. With --groups, every group runs the collective at the same time (time: the slowest group's).\n"
      "'ahbm-sim nocs --system' lists the networks. On a terminal, stderr shows the sizes done and an ETA (not with -q;\n"
      "-v: a line per size, terminal or not).\n\noptions");
  CollBenchOptions o;
  std::string params_json, out, min_b, max_b, groups, step, chips, reduce;
  std::vector<std::string> param_kv, set_kv;
  std::string hw_file;
  bool json = false;
  desc.add_options()
      ("help,h", "show this help")
      ("network", po::value<std::string>(&o.network.model)->default_value(o.network.model),
       "system network model ('ahbm-sim nocs --system' lists them)")
      ("params", po::value<std::string>(&params_json), "model parameters as a JSON object (as system.network.params)")
      ("param", po::value<std::vector<std::string>>(&param_kv), "one model parameter key=value (repeatable)")
      ("chips", po::value<std::string>(&chips), "chips on the network, 1 to 4096 (default 8; with --hw: system.chips)")
      ("hw", po::value<std::string>(&hw_file), "take the network and the chips from this hardware config's system block")
      ("set", po::value<std::vector<std::string>>(&set_kv), "key=value applied to the --hw config (dotted field path)")
      ("collective", po::value<std::string>(&o.collective)->default_value(o.collective),
       "all_reduce | all_gather | reduce_scatter | all_to_all | p2p")
      ("algo", po::value<std::string>(&o.algo),
       "all_reduce: ring (default), tree, halving_doubling; all_gather, reduce_scatter: ring; all_to_all, p2p: direct")
      ("min-bytes,b", po::value<std::string>(&min_b)->default_value("1K"), "smallest size (K, M, G: powers of 1024)")
      ("max-bytes,e", po::value<std::string>(&max_b)->default_value("64M"), "largest size")
      ("step-factor,f", po::value<std::string>(&step)->default_value("4"), "size multiplier between rows, in (1, 1024]")
      ("groups", po::value<std::string>(&groups),
       "concurrent groups of ranks, chips by index: 0,2,4,6:1,3,5,7 (default: one group of every chip; p2p: 0,1)")
      ("reduce-ns-per-byte", po::value<std::string>(&reduce)->default_value("0"), "local reduction time, ns per byte, in [0, 1e6]")
      ("json", po::bool_switch(&json), "print the JSON report instead of the table")
      ("out,o", po::value<std::string>(&out), "write the JSON report to FILE (the table still goes to stdout)");
  const auto vm = parse_command_line(argc, argv, desc);
  if (!vm) return 0;  // --help
  std::optional<OutputTarget> target;  // every --out problem fails here, before the bench runs
  if (!out.empty()) target.emplace(out, OutputKind::file);
  if (!set_kv.empty() && hw_file.empty()) throw UsageError("--set applies to a --hw config (model parameters: --param)");
  o.network.file = "coll-bench";
  o.network.model_field = "--network";
  o.network.params_field = "--params";
  o.network.chips = 8;
  if (!hw_file.empty()) {
    if (!(*vm)["network"].defaulted() || vm->count("params"))
      throw UsageError("--network, --params: the --hw config sets them (system.network); change them with --set");
    const HwConfig cfg = load_hw_config(hw_file, set_kv);
    o.network = SystemNetworkSpec::from_config(cfg, hw_file);
  }
  if (!chips.empty()) o.network.chips = int(parse_uint_option("chips", chips, 1, 4096));
  if (!params_json.empty()) {
    const std::optional<Json> params = parse_json_argument(params_json, "--params");
    if (!params || !params->is_object()) throw UsageError("--params " + params_json + ": not a JSON object");
    o.network.params = *params;
  }
  for (const auto& kv : param_kv) set_json_path(o.network.params, kv, "--param");
  o.min_bytes = parse_size("min-bytes", min_b);
  o.max_bytes = parse_size("max-bytes", max_b);
  o.step_factor = parse_double_option("step-factor", step, 0, 1024);  // above 1: run_coll_bench
  o.reduce_ns_per_byte = parse_double_option("reduce-ns-per-byte", reduce, 0, 1e6);
  if (!groups.empty()) o.groups = parse_groups(groups);

  const NocRegistry registry = system_network_registry();
  report::ProgressLine line = stderr_progress(verbosity_of(*vm));
  if (line.active())
    o.progress = [&line](size_t done, size_t total, uint64_t next) {
      std::string text = "coll-bench: " + std::to_string(done) + "/" + std::to_string(total) + " sizes";
      if (next) text += " | next " + std::to_string(next) + " B";
      line.update(double(done), double(total), text);
    };
  const CollBenchResult r = run_coll_bench(registry, o);
  line.clear();
  Json report = coll_bench_json(r);
  report["network_stats"] = report::stats_json(r.network_stats);
  if (json) std::cout << report.dump(2) << "\n";
  else std::cout << coll_bench_table(r);
  if (target) {
    target->write([&](std::ostream& os) { os << report.dump(2) << "\n"; });
    check_stdout();
    target->commit();
  }
  return 0;
}

}  // namespace ahbm::cli
