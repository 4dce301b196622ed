#pragma once
// Standalone NoC testbench: synthetic traffic on any registered model, the standard metrics
// (see docs/noc.md). Each node is one endpoint ("n0", "n1", ...) that creates packets of
// `packet_flits` flits by Bernoulli trials, one per cycle, with probability rate / packet_flits,
// so the offered load is `rate` flits per node per cycle. Packets created in the measurement
// window [warmup, warmup + cycles) are measured; the run continues (injection included) until
// they have all arrived or `drain` more cycles have passed, so it always stops.
#include <cstdint>
#include <string>
#include <vector>

#include "hw/noc/noc.h"

namespace ahbm {

struct NocBenchOptions {
  std::string noc = "mesh";
  Json params = Json::object();   // the model's parameters (as noc.params in a hw config)
  std::string traffic = "uniform";  // uniform | transpose | hotspot | multicast
  double rate = 0.1;                // offered flits per node per cycle, in (0, 1]
  int packet_flits = 4;
  int64_t cycles = 10000;  // measurement window
  int64_t warmup = 1000;
  int64_t drain = -1;      // cycles allowed after the window for measured packets; -1 = `cycles`
  uint64_t seed = 1;
  int nodes = 16;
  double hotspot_fraction = 0.2;  // hotspot: share of packets sent to `hotspot_node`
  int hotspot_node = 0;
  int multicast_dests = 4;        // multicast: distinct random destinations per packet
};

struct NocBenchResult {
  NocBenchOptions options;
  double offered = 0;   // flits per node per cycle created in the window (x destinations)
  double accepted = 0;  // flits per node per cycle delivered in the window (per destination)
  double avg_latency = 0, p99_latency = 0;  // cycles, creation to tail arrival, per delivery
  double avg_hops = -1;                     // routers traversed per delivery; -1: model has no routers
  uint64_t packets_measured = 0, deliveries_measured = 0, undelivered = 0;
  bool drained = false;        // every measured packet arrived within the drain allowance
  double latency_growth = 1;  // avg latency of packets created in the window's second half / first half
  // Not drained, accepted below 95% of offered, or latency still growing (latency_growth > 1.25).
  bool saturated = false;
  int64_t end_cycle = 0;
  struct Link {
    std::string name, kind;
    double utilisation;  // flits per cycle over the window
  };
  std::vector<Link> links;
  double max_link_utilisation = 0, avg_link_utilisation = 0;  // over router-to-router links (all channels if none)
  Json noc_stats;

  Json to_json() const;
  std::string line() const;  // one readable line
};

// Throws InputError naming the option for bad options or model parameters.
NocBenchResult run_noc_bench(const NocRegistry& registry, const NocBenchOptions& options);
// A latency-vs-load table, one row per result.
std::string noc_bench_table(const std::vector<NocBenchResult>& results);

}  // namespace ahbm
