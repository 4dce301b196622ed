// `ahbm-sim noc-bench`: the standalone NoC testbench (hw/bench/noc_bench.h) on the command line.
#include <algorithm>
#include <iostream>
#include <memory>
#include <sstream>

#include "hw/common/base/error.h"
#include "hw/common/config/hw_config.h"
#include "hw/common/config/hw_config_override.h"
#include "hw/common/base/json_reader.h"
#include "hw/bench/booksim_config.h"
#include "hw/bench/noc_bench.h"
#include "runtime/io/output_dir.h"
#include "runtime/report/noc_bench_json.h"
#include "tools/cli/commands.h"
#include "tools/cli/options.h"

namespace po = boost::program_options;

namespace ahbm::cli {

namespace {

std::vector<double> parse_rates(const std::string& list) {
  std::vector<double> rates;
  std::stringstream s(list);
  std::string item;
  while (std::getline(s, item, ',')) {
    try {
      size_t used = 0;
      rates.push_back(std::stod(item, &used));
      if (used != item.size()) throw std::invalid_argument(item);
    } catch (const std::exception&) {
      throw UsageError("--sweep " + list + ": \"" + item + "\" is not a number");
    }
  }
  if (rates.empty()) throw UsageError("--sweep needs at least one rate");
  return rates;
}

// "1:0.5,5:0.5": packet sizes in flits with their weights.
std::vector<std::pair<int, double>> parse_mix(const std::string& list) {
  std::vector<std::pair<int, double>> mix;
  std::stringstream s(list);
  std::string item;
  while (std::getline(s, item, ',')) {
    const size_t colon = item.find(':');
    try {
      if (colon == std::string::npos) throw std::invalid_argument(item);
      size_t a = 0, b = 0;
      const int flits = std::stoi(item.substr(0, colon), &a);
      const double weight = std::stod(item.substr(colon + 1), &b);
      if (a != colon || b != item.size() - colon - 1) throw std::invalid_argument(item);
      mix.push_back({flits, weight});
    } catch (const std::exception&) {
      throw UsageError("--packet-mix " + list + ": \"" + item + "\" is not FLITS:WEIGHT");
    }
  }
  if (mix.empty()) throw UsageError("--packet-mix needs at least one FLITS:WEIGHT");
  return mix;
}

// Progress on stderr at every tenth of the cycle limit, for runs that take long (or when asked):
// "noc-bench: cycle 2100 of 21000 (10%)". The run may stop earlier, when every measured packet
// has arrived.
// On a terminal these lines go above the live progress line (`line`), which they clear first.
std::function<void(int64_t, int64_t)> progress_printer(const NocBenchOptions& o, bool asked, report::Verbosity v,
                                                      report::ProgressLine line) {
  constexpr double kLongRunNodeCycles = 1e8;  // about 30 s on the reference machine
  if (!asked && (v == report::Verbosity::quiet || noc_bench_work(o).node_cycles < kLongRunNodeCycles))
    return nullptr;
  struct State {
    int64_t last = 0;  // cycle of the previous call (a sweep's next run starts again from 0)
    int64_t next = 1;  // next tenth to report
  };
  auto st = std::make_shared<State>();
  return [st, line](int64_t cycle, int64_t limit) mutable {
    if (cycle <= st->last) st->next = 1;
    st->last = cycle;
    if (cycle * 10 < limit * st->next) return;
    st->next = cycle * 10 / limit + 1;
    line.clear();
    std::cerr << "noc-bench: cycle " << cycle << " of " << limit << " (" << cycle * 100 / limit << "%)\n";
  };
}

}  // namespace

int cmd_noc_bench(int argc, char** argv) {
  po::options_description desc(
      "usage: ahbm-sim noc-bench --noc NAME [--param key=value ...] --traffic PATTERN --rate R --packet-flits P\n"
      "                          [--cycles N --warmup W | --converge [--sample-period P --max-samples M]]\n"
      "                          [--seed S] [--sweep R1,R2,...] [--out FILE]\n"
      "       ahbm-sim noc-bench --hw HW.json [--set noc.params.vcs=4 ...] [traffic options as above]\n"
      "       ahbm-sim noc-bench --booksim CONFIG [--set injection_rate=0.2 ...] [--sweep ...] [--out FILE]\n\n"
      "Synthetic traffic on one NoC model, one endpoint per node (n0, n1, ...). Each node creates a packet\n"
      "with probability R/P every cycle (offered load R flits/node/cycle; Bernoulli or on-off bursts). Packets\n"
      "created in the window\n"
      "[W, W+N) are measured (--converge: the window is found by convergence over sample periods);\n"
      "the run ends when they have all arrived or after --drain more cycles.\n"
      "Prints one line per run (or a latency-vs-load table with --sweep), then the JSON report\n"
      "(or writes it to --out). Latency: creation to tail-flit arrival, source queueing included;\n"
      "network latency: the head leaving the source to tail arrival.\n\noptions");
  NocBenchOptions o;
  std::string params_json, sweep, out, rate_unit, mix;
  std::vector<std::string> param_kv, set_kv;
  std::string hw_file, booksim_file, seed, perm_seed;
  bool saturation = false, progress = false;
  desc.add_options()
      ("help,h", "show this help")
      ("noc", po::value<std::string>(&o.noc)->default_value(o.noc), "NoC model ('ahbm-sim nocs' lists them)")
      ("params", po::value<std::string>(&params_json), "model parameters as a JSON object (as noc.params)")
      ("param", po::value<std::vector<std::string>>(&param_kv), "one model parameter key=value (repeatable)")
      ("traffic", po::value<std::string>(&o.traffic)->default_value(o.traffic),
       "uniform | transpose | bitcomp | bitrev | shuffle | tornado | neighbor | randperm | hotspot | multicast")
      ("self", po::bool_switch(&o.include_self), "uniform: a node may also send to itself")
      ("rate", po::value<double>(&o.rate)->default_value(o.rate), "offered load per node per cycle, in (0, 1]")
      ("rate-unit", po::value<std::string>(&rate_unit)->default_value("flits"), "unit of --rate: flits | packets")
      ("packet-flits", po::value<int>(&o.packet_flits)->default_value(o.packet_flits), "flits per packet")
      ("packet-mix", po::value<std::string>(&mix), "packet sizes and weights FLITS:WEIGHT,... (instead of --packet-flits)")
      ("injection", po::value<std::string>(&o.injection)->default_value(o.injection), "bernoulli | on-off")
      ("burst-alpha", po::value<double>(&o.burst_alpha)->default_value(o.burst_alpha), "on-off: P(off -> on) per cycle")
      ("burst-beta", po::value<double>(&o.burst_beta)->default_value(o.burst_beta), "on-off: P(on -> off) per cycle")
      ("perm-seed", po::value<std::string>(&perm_seed)->default_value(std::to_string(o.perm_seed)),
       "randperm: permutation seed, 0 to 2^64-1")
      ("cycles", po::value<int64_t>(&o.cycles)->default_value(o.cycles), "measurement window, cycles")
      ("warmup", po::value<int64_t>(&o.warmup)->default_value(o.warmup), "warm-up cycles before the window")
      ("drain", po::value<int64_t>(&o.drain)->default_value(o.drain), "cycles allowed after the window (-1 = --cycles)")
      ("converge", po::bool_switch(&o.converge),
       "stop by convergence over sample periods (BookSim-style) instead of the fixed --warmup/--cycles window")
      ("sample-period", po::value<int64_t>(&o.sample_period)->default_value(o.sample_period), "--converge: cycles per period")
      ("warmup-periods", po::value<int>(&o.warmup_periods)->default_value(o.warmup_periods),
       "--converge: at least this many warm-up periods")
      ("max-samples", po::value<int>(&o.max_samples)->default_value(o.max_samples),
       "--converge: at most this many periods (warm-up included)")
      ("converge-threshold", po::value<double>(&o.converge_threshold)->default_value(o.converge_threshold),
       "--converge: relative change of latency and throughput counted as converged")
      ("seed", po::value<std::string>(&seed)->default_value(std::to_string(o.seed)), "traffic seed, 0 to 2^64-1")
      ("nodes", po::value<int>(&o.nodes)->default_value(o.nodes), "endpoints, one per node (16 = 4x4 mesh, 16-ring)")
      ("hotspot-fraction", po::value<double>(&o.hotspot_fraction)->default_value(o.hotspot_fraction),
       "hotspot: share of packets sent to the hotspot node")
      ("hotspot-node", po::value<int>(&o.hotspot_node)->default_value(o.hotspot_node), "hotspot: the hot node")
      ("mc-dests", po::value<int>(&o.multicast_dests)->default_value(o.multicast_dests),
       "multicast: destinations per packet")
      ("hw", po::value<std::string>(&hw_file), "take the NoC model and its parameters from this hardware config")
      ("booksim", po::value<std::string>(&booksim_file),
       "run a BookSim2 config file (key = value;): network, router, traffic and windows all come from it")
      ("set", po::value<std::vector<std::string>>(&set_kv),
       "key=value applied to the --hw config (dotted field path) or the --booksim config (a BookSim key)")
      ("sweep", po::value<std::string>(&sweep), "comma-separated rates: run each, print a latency-vs-load table")
      ("saturation", po::bool_switch(&saturation),
       "search the saturation rate: bisection between 0.01 and 1 to 0.01 (rate unit as --rate-unit)")
      ("out,o", po::value<std::string>(&out), "write the JSON report to FILE instead of stdout")
      ("allow-large", po::bool_switch(&o.allow_large),
       "run beyond the work bound (1e9 node-cycles or 2e7 packets, about 10 minutes and 2.5 GiB; docs/noc.md)")
      ("progress", po::bool_switch(&progress),
       "print a line on stderr at every tenth of the cycle limit (always on for runs above 1e8 node-cycles, "
       "unless -q); on a terminal a live line shows the sweep's rates done, the cycles and an ETA anyway");
  const auto vm = parse_command_line(argc, argv, desc);
  if (!vm) return 0;  // --help
  std::optional<OutputTarget> target;  // every --out problem fails here, before the bench runs
  if (!out.empty()) target.emplace(out, OutputKind::file);
  // As text: Boost's conversion wraps "-1" to 2^64 - 1.
  o.seed = parse_uint_option("seed", seed, 0, UINT64_MAX);
  o.perm_seed = parse_uint_option("perm-seed", perm_seed, 0, UINT64_MAX);
  if (!params_json.empty()) {
    // The file loader's limits (nesting, duplicate keys) apply to the argument too.
    const std::optional<Json> params = parse_json_argument(params_json, "--params");
    if (!params || !params->is_object()) throw UsageError("--params " + params_json + ": not a JSON object");
    o.params = *params;
  }
  if (!hw_file.empty() && !booksim_file.empty()) throw UsageError("--hw and --booksim: give one of them");
  if (!set_kv.empty() && hw_file.empty() && booksim_file.empty())
    throw UsageError("--set applies to a --hw or --booksim config (model parameters: --param)");
  if (!booksim_file.empty()) {
    // The config describes the whole experiment: an option that would override part of it
    // silently is refused (change the config with --set KEY=VALUE instead).
    for (const char* opt : {"noc", "params", "param", "traffic", "self", "rate", "rate-unit", "packet-flits", "packet-mix",
                            "injection", "burst-alpha", "burst-beta", "perm-seed", "cycles", "warmup", "drain", "seed",
                            "nodes", "converge", "sample-period", "warmup-periods", "max-samples", "converge-threshold"})
      if (vm->count(opt) && !(*vm)[opt].defaulted())
        throw UsageError(std::string("--") + opt + ": the --booksim config sets it; change it with --set KEY=VALUE");
    o = load_booksim_config(booksim_file, set_kv);
    for (const std::string& note : o.notes) std::cerr << "noc-bench: " << note << "\n";
  } else if (!hw_file.empty()) {
    // --set applied, then parsed and checked like `run --hw ... --set ...`.
    const HwConfig cfg = load_hw_config(hw_file, set_kv);
    o.noc = cfg.noc.model;
    o.params = cfg.noc.params;
  }
  for (const auto& kv : param_kv) set_json_path(o.params, kv, "--param");
  if (rate_unit != "flits" && rate_unit != "packets")
    throw UsageError("--rate-unit " + rate_unit + ": expected flits or packets");
  if (booksim_file.empty()) o.rate_in_packets = rate_unit == "packets";
  if (!mix.empty()) o.packet_mix = parse_mix(mix);

  // The live line: a sweep's rates done (and the current run's cycles), a saturation search's
  // runs, a single run's cycles.
  report::ProgressLine line = stderr_progress(verbosity_of(*vm));
  struct Where {
    size_t point = 0, points = 1;  // a sweep's rate being run, of how many
    std::string label = "noc-bench";
    int64_t last = 0;
    int runs = 1;  // --saturation: runs started
  } where;
  const auto cycles = progress_printer(o, progress, verbosity_of(*vm), line);
  if (cycles || line.active())
    o.progress = [&line, &where, &saturation, cycles](int64_t cycle, int64_t limit) {
      if (cycles) cycles(cycle, limit);
      if (cycle <= where.last) ++where.runs;  // the next run of a search begins again from 0
      where.last = cycle;
      // Below the next whole point: the sweep's own update counts a rate done (-v: its line).
      const double share = std::min(0.999, double(cycle) / double(limit));
      const double done = saturation ? share : double(where.point) + share;
      const double total = saturation ? 1.0 : double(where.points);
      if (!line.due(done, total)) return;
      std::string text = where.label;
      if (saturation) text += ", run " + std::to_string(where.runs);
      line.update(done, total, text + " | cycle " + std::to_string(cycle) + " of " + std::to_string(limit));
    };
  const NocRegistry registry = NocRegistry::with_builtin_models();
  Json report;
  if (saturation && !sweep.empty()) throw UsageError("--saturation and --sweep: give one of them");
  if (saturation) {
    where.label = "noc-bench: saturation search";
    const NocSaturation s = find_saturation(registry, o);
    line.clear();
    std::cout << o.noc << ", " << o.traffic << " traffic: saturates between rate " << s.rate << " (not saturated) and "
              << s.saturated_at << " (" << s.runs << " runs)\n"
              << s.at_rate.line() << "\n";
    report = Json{{"saturation", {{"rate", s.rate}, {"saturated_at", s.saturated_at}, {"runs", s.runs}}},
                  {"at_rate", report::noc_bench_json(s.at_rate)}};
  } else if (sweep.empty()) {
    const NocBenchResult r = run_noc_bench(registry, o);
    line.clear();
    std::cout << r.line() << "\n";
    report = report::noc_bench_json(r);
  } else {
    std::vector<NocBenchResult> results;
    report = Json{{"sweep", Json::array()}};
    const std::vector<double> rates = parse_rates(sweep);
    where.points = rates.size();
    for (double rate : rates) {
      o.rate = rate;
      std::ostringstream label;
      label << "noc-bench sweep: " << where.point << "/" << rates.size() << " rates | rate " << rate;
      where.label = label.str();
      results.push_back(run_noc_bench(registry, o));
      report["sweep"].push_back(report::noc_bench_json(results.back()));
      ++where.point;
      line.update(double(where.point), double(rates.size()),
                  "noc-bench sweep: " + std::to_string(where.point) + "/" + std::to_string(rates.size()) +
                      " rates | " + results.back().line());
    }
    line.clear();
    std::cout << o.noc << ", " << o.traffic << " traffic, "
              << (o.packet_mix.empty() ? std::to_string(o.packet_flits) + "-flit" : std::string("mixed-size")) << " packets, " << o.nodes
              << " nodes, latency in cycles:\n"
              << noc_bench_table(results);
  }
  if (out.empty()) {
    std::cout << report.dump(2) << "\n";
  } else {
    target->write([&](std::ostream& os) { os << report.dump(2) << "\n"; });
    check_stdout();
    target->commit();
  }
  return 0;
}

}  // namespace ahbm::cli
