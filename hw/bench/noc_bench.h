#pragma once
// Standalone NoC testbench: synthetic traffic on any registered model, the standard metrics
// (see docs/noc.md). Each node is one endpoint ("n0", "n1", ...) that creates packets by one
// trial per cycle (Bernoulli, or on-off bursts), with a probability that makes the offered load
// `rate` flits (or packets) per node per cycle; packet sizes are `packet_flits` or drawn from a
// mix. Packets created in the measurement window [warmup, warmup + cycles) are measured; the run
// continues (injection included) until they have all arrived or `drain` more cycles have passed,
// so it always stops.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "hw/noc/noc.h"

namespace ahbm {

struct NocBenchOptions {
  std::string noc = "mesh";
  Json params = Json::object();   // the model's parameters (as noc.params in a hw config)
  // uniform | transpose | bitcomp | bitrev | shuffle | tornado | neighbor | randperm | hotspot |
  // multicast (docs/noc.md, "Traffic patterns")
  std::string traffic = "uniform";
  bool include_self = false;        // uniform: a node may send to itself
  double rate = 0.1;                // offered load per node per cycle, in flits (or packets), in (0, 1]
  bool rate_in_packets = false;     // rate counts packets, not flits (BookSim's injection_rate_uses_flits = 0)
  int packet_flits = 4;
  // Packet-size mix: (flits, weight) pairs; a packet's size is drawn with probability weight /
  // sum of weights. Empty: every packet is packet_flits.
  std::vector<std::pair<int, double>> packet_mix;
  // bernoulli: a packet with probability p every cycle. on-off: each node is a two-state Markov
  // source (PPIN 24.2.2, as BookSim's): off -> on with probability burst_alpha per cycle, on -> off
  // with burst_beta; while on it creates a packet with probability p (alpha + beta) / alpha, so
  // the average stays p.
  std::string injection = "bernoulli";
  double burst_alpha = 0.5, burst_beta = 0.5;
  uint64_t perm_seed = 1;  // randperm: seed of the fixed random permutation
  int64_t cycles = 10000;  // measurement window
  int64_t warmup = 1000;
  // Convergence stopping rule (BookSim-style sample periods) instead of the fixed window above:
  // the run proceeds in periods of sample_period cycles. Warm-up ends after at least
  // warmup_periods periods, at the end of the first period whose average latency and accepted
  // throughput (of everything delivered in it) are each within converge_threshold (relative) of
  // the previous period's. The window then runs period by period until the cumulative average
  // latency and accepted throughput of the measured packets have changed by less than
  // converge_threshold over 3 consecutive periods; or, either way, until max_samples periods in
  // all (then `converged` is false). The drain follows as with fixed windows.
  bool converge = false;
  int64_t sample_period = 1000;
  int warmup_periods = 1;
  int max_samples = 20;
  double converge_threshold = 0.05;
  int64_t drain = -1;      // cycles allowed after the window for measured packets; -1 = `cycles`
  uint64_t seed = 1;
  int nodes = 16;
  double hotspot_fraction = 0.2;  // hotspot: share of packets sent to `hotspot_node`
  int hotspot_node = 0;
  int multicast_dests = 4;        // multicast: distinct random destinations per packet
  // Runs whose work (noc_bench_work) exceeds the bounds below are refused unless this is set
  // (--allow-large).
  bool allow_large = false;
  // Options set from another input than the command line (a BookSim config): option ("--nodes")
  // -> the keys that set it ("b.cfg: k = 3, n = 1, topology = torus"). Messages name those, not
  // an option the user never gave (option_label).
  std::map<std::string, std::string> given_as;
  // What the reader of that input mapped or ignored without changing the network (printed on
  // stderr by noc-bench).
  std::vector<std::string> notes;
  // Called between slices of simulated time with the cycle reached and the cycle limit
  // (warm-up + window + drain); the CLI prints progress on stderr for long runs.
  std::function<void(int64_t cycle, int64_t limit)> progress;
};

// What a bench run costs at most, known before it starts: node-cycles simulated (nodes x
// (warm-up + window + drain); the time goes with it) and packets created (nodes x (warm-up +
// window) x packet probability x destinations; at saturation undelivered packets pile up in the
// source queues, so the memory goes with it).
struct NocBenchWork {
  double node_cycles = 0;
  double packets = 0;
};
NocBenchWork noc_bench_work(const NocBenchOptions& options);
// How a message names `option` with its `value`: "--nodes 9" from the command line, or
// "b.cfg: k = 3, n = 2, topology = mesh (nodes = 9)" when given_as holds it.
std::string option_label(const NocBenchOptions& o, const std::string& option, const std::string& value);
// Documented bounds (docs/noc.md, "Work bound and progress"), from rates measured on the 2-core
// reference machine: about 1.5e6 node-cycles/s at moderate load (1e9: ~11 minutes); at
// saturation about 8e4 packets/s and 120 bytes per undelivered packet (2e7: ~4 minutes, 2.4 GB).
constexpr double kMaxNocBenchNodeCycles = 1e9;
constexpr double kMaxNocBenchPackets = 2e7;

struct NocBenchResult {
  NocBenchOptions options;
  double offered = 0;   // flits per node per cycle created in the window (x destinations)
  double accepted = 0;  // flits per node per cycle delivered in the window (per destination)
  double avg_latency = 0, p99_latency = 0;  // cycles, creation to tail arrival, per delivery
  // Network latency: cycles from the head leaving the source for the network (after source
  // queueing) to tail arrival, per delivery; equals the latency above at zero load.
  double avg_network_latency = 0, p99_network_latency = 0, max_network_latency = 0;
  double p50_latency = 0, p90_latency = 0, p999_latency = 0, max_latency = 0;  // nearest rank
  // Latency histogram: counts[i] deliveries with latency in [i * bin, (i + 1) * bin) cycles; bin
  // is the smallest power of two that keeps the bins at most 64.
  int64_t histogram_bin = 1;
  std::vector<uint64_t> histogram;
  // Fairness: flits accepted per node per cycle in the window (as destination), lowest and highest
  // node, and each node's injected and accepted flits per cycle.
  double accepted_min = 0, accepted_max = 0;
  std::vector<double> node_injected, node_accepted;
  double avg_hops = -1;                     // routers traversed per delivery; -1: model has no routers
  uint64_t packets_measured = 0, deliveries_measured = 0, undelivered = 0;
  bool drained = false;        // every measured packet arrived within the drain allowance
  double latency_growth = 1;  // avg latency of packets created in the window's second half / first half
  // Not drained, accepted below 95% of offered, or latency still growing (latency_growth > 1.25).
  bool saturated = false;
  int64_t end_cycle = 0;
  // The measurement window actually used: [window_start, window_end) cycles (= warmup, warmup +
  // cycles with fixed windows); with the convergence rule, whether it converged.
  int64_t window_start = 0, window_end = 0;
  bool converged = true;
  struct Link {
    std::string name, kind;
    double utilisation;  // flits per cycle over the window
    std::vector<double> vc_utilisation;  // per virtual channel (router-to-router links of VC models)
  };
  std::vector<Link> links;
  double max_link_utilisation = 0, avg_link_utilisation = 0;  // over router-to-router links (all channels if none)
  double max_vc_utilisation = 0;  // busiest virtual channel of any link, flits per cycle
  StatsNode noc_stats;  // the model's counters (Noc::report_stats); JSON: runtime/report/noc_bench_json.h

  std::string line() const;  // one readable line
};

// The destination of every source under a deterministic pattern (transpose, bitcomp, bitrev,
// shuffle, tornado, neighbor, randperm), or an empty vector for random patterns. Digit patterns
// (tornado, neighbor) see the nodes as a k x k arrangement when the count is a square, else as
// one ring of k = nodes. Throws InputError when the pattern does not fit the node count.
std::vector<int> pattern_destinations(const NocBenchOptions& options);

// Throws InputError naming the option for bad options or model parameters.
NocBenchResult run_noc_bench(const NocRegistry& registry, const NocBenchOptions& options);

// Saturation search: bisection on the rate between `lo` (not saturated) and `hi` until the
// bracket is narrower than `tolerance`; returns the highest rate found not saturated (and the
// run there). The run at `lo` must not be saturated.
struct NocSaturation {
  double rate = 0;         // highest rate not saturated
  double saturated_at = 0; // lowest rate found saturated (hi when none)
  NocBenchResult at_rate;  // the run at `rate`
  int runs = 0;
};
NocSaturation find_saturation(const NocRegistry& registry, const NocBenchOptions& options, double lo = 0.01,
                              double hi = 1.0, double tolerance = 0.01);
// A latency-vs-load table, one row per result.
std::string noc_bench_table(const std::vector<NocBenchResult>& results);

}  // namespace ahbm
