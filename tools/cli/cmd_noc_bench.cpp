// `ahbm-sim noc-bench`: the standalone NoC testbench (hw/noc/noc_bench.h) on the command line.
#include <fstream>
#include <iostream>
#include <sstream>

#include "hw/common/error.h"
#include "hw/noc/noc_bench.h"
#include "tools/cli/commands.h"

namespace po = boost::program_options;

namespace ahbm::cli {

namespace {

// "key=value": value as JSON when it parses (numbers, true, [1,2], "text"), else as a string.
// A dotted key ("placement.n0") sets a nested field.
void apply_param(Json& params, const std::string& kv) {
  const size_t eq = kv.find('=');
  if (eq == std::string::npos || eq == 0) throw UsageError("--param " + kv + ": expected key=value");
  Json value = Json::parse(kv.substr(eq + 1), nullptr, false);
  if (value.is_discarded()) value = kv.substr(eq + 1);
  Json* at = &params;
  std::stringstream path(kv.substr(0, eq));
  std::string part, next;
  std::getline(path, part, '.');
  while (std::getline(path, next, '.')) {
    if (!(*at)[part].is_object()) (*at)[part] = Json::object();
    at = &(*at)[part];
    part = next;
  }
  (*at)[part] = value;
}

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

}  // namespace

int cmd_noc_bench(int argc, char** argv) {
  po::options_description desc(
      "usage: ahbm-sim noc-bench --noc NAME [--param key=value ...] --traffic PATTERN --rate R --packet-flits P\n"
      "                          [--cycles N --warmup W --seed S] [--sweep R1,R2,...] [--out FILE]\n\n"
      "Synthetic traffic on one NoC model, one endpoint per node (n0, n1, ...). Each node creates a packet\n"
      "with probability R/P every cycle (offered load R flits/node/cycle). Packets created in the window\n"
      "[W, W+N) are measured; the run ends when they have all arrived or after --drain more cycles.\n"
      "Prints one line per run (or a latency-vs-load table with --sweep), then the JSON report\n"
      "(or writes it to --out). Latency: creation to tail-flit arrival, source queueing included.\n\noptions");
  NocBenchOptions o;
  std::string params_json, sweep, out;
  std::vector<std::string> param_kv;
  desc.add_options()
      ("help,h", "show this help")
      ("noc", po::value<std::string>(&o.noc)->default_value(o.noc), "NoC model ('ahbm-sim nocs' lists them)")
      ("params", po::value<std::string>(&params_json), "model parameters as a JSON object (as noc.params)")
      ("param", po::value<std::vector<std::string>>(&param_kv), "one model parameter key=value (repeatable)")
      ("traffic", po::value<std::string>(&o.traffic)->default_value(o.traffic), "uniform | transpose | hotspot | multicast")
      ("rate", po::value<double>(&o.rate)->default_value(o.rate), "offered load, flits/node/cycle, in (0, 1]")
      ("packet-flits", po::value<int>(&o.packet_flits)->default_value(o.packet_flits), "flits per packet")
      ("cycles", po::value<int64_t>(&o.cycles)->default_value(o.cycles), "measurement window, cycles")
      ("warmup", po::value<int64_t>(&o.warmup)->default_value(o.warmup), "warm-up cycles before the window")
      ("drain", po::value<int64_t>(&o.drain)->default_value(o.drain), "cycles allowed after the window (-1 = --cycles)")
      ("seed", po::value<uint64_t>(&o.seed)->default_value(o.seed), "traffic seed")
      ("nodes", po::value<int>(&o.nodes)->default_value(o.nodes), "endpoints, one per node (16 = 4x4 mesh, 16-ring)")
      ("hotspot-fraction", po::value<double>(&o.hotspot_fraction)->default_value(o.hotspot_fraction),
       "hotspot: share of packets sent to the hotspot node")
      ("hotspot-node", po::value<int>(&o.hotspot_node)->default_value(o.hotspot_node), "hotspot: the hot node")
      ("mc-dests", po::value<int>(&o.multicast_dests)->default_value(o.multicast_dests),
       "multicast: destinations per packet")
      ("sweep", po::value<std::string>(&sweep), "comma-separated rates: run each, print a latency-vs-load table")
      ("out,o", po::value<std::string>(&out), "write the JSON report to FILE instead of stdout");
  if (!parse_command_line(argc, argv, desc)) return 0;  // --help
  if (!params_json.empty()) {
    o.params = Json::parse(params_json, nullptr, false);
    if (o.params.is_discarded() || !o.params.is_object())
      throw UsageError("--params " + params_json + ": not a JSON object");
  }
  for (const auto& kv : param_kv) apply_param(o.params, kv);

  const NocRegistry registry = NocRegistry::with_builtin_models();
  Json report;
  if (sweep.empty()) {
    const NocBenchResult r = run_noc_bench(registry, o);
    std::cout << r.line() << "\n";
    report = r.to_json();
  } else {
    std::vector<NocBenchResult> results;
    report = Json{{"sweep", Json::array()}};
    for (double rate : parse_rates(sweep)) {
      o.rate = rate;
      results.push_back(run_noc_bench(registry, o));
      report["sweep"].push_back(results.back().to_json());
    }
    std::cout << o.noc << ", " << o.traffic << " traffic, " << o.packet_flits << "-flit packets, " << o.nodes
              << " nodes, latency in cycles:\n"
              << noc_bench_table(results);
  }
  if (out.empty()) {
    std::cout << report.dump(2) << "\n";
  } else {
    std::ofstream f(out);
    f << report.dump(2) << "\n";
    if (!f) throw InputError("--out " + out + ": cannot write");
  }
  return 0;
}

}  // namespace ahbm::cli
