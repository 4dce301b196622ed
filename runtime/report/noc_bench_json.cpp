#include "runtime/report/noc_bench_json.h"

#include "runtime/report/stats_tree.h"

namespace ahbm::report {

Json noc_bench_json(const NocBenchResult& r) {
  const NocBenchOptions& o = r.options;
  Json links_j = Json::array();
  for (const auto& l : r.links) {
    links_j.push_back({{"name", l.name}, {"kind", l.kind}, {"utilisation", l.utilisation}});
    if (!l.vc_utilisation.empty()) links_j.back()["vc_utilisation"] = l.vc_utilisation;
  }
  Json mix = Json::array();
  for (const auto& [flits, weight] : o.packet_mix) mix.push_back({flits, weight});
  const auto latency = [&](double cycles) { return r.deliveries_measured ? Json(cycles) : Json(); };
  return Json{{"noc", o.noc},
              {"params", o.params},
              {"traffic", o.traffic},
              {"include_self", o.include_self},
              {"rate", o.rate},
              {"rate_unit", o.rate_in_packets ? "packets" : "flits"},
              {"injection", o.injection == "on-off" ? Json{{"process", "on-off"}, {"alpha", o.burst_alpha}, {"beta", o.burst_beta}}
                                                    : Json{{"process", "bernoulli"}}},
              {"packet_flits", o.packet_flits},
              {"packet_mix", mix},
              {"perm_seed", o.perm_seed},
              {"nodes", o.nodes},
              {"cycles", o.cycles},
              {"warmup", o.warmup},
              {"drain", o.drain},
              {"seed", o.seed},
              {"window",
               o.converge ? Json{{"rule", "converge"},
                                 {"sample_period", o.sample_period},
                                 {"warmup_periods", o.warmup_periods},
                                 {"max_samples", o.max_samples},
                                 {"threshold", o.converge_threshold},
                                 {"start", r.window_start},
                                 {"end", r.window_end},
                                 {"converged", r.converged}}
                          : Json{{"rule", "fixed"}, {"start", r.window_start}, {"end", r.window_end}}},
              {"offered_flits_per_node_cycle", r.offered},
              {"accepted_flits_per_node_cycle", r.accepted},
              // No delivery measured: no latency to report (null, not 0).
              {"avg_latency_cycles", latency(r.avg_latency)},
              {"p99_latency_cycles", latency(r.p99_latency)},
              {"latency_percentiles_cycles",
               {{"p50", latency(r.p50_latency)}, {"p90", latency(r.p90_latency)}, {"p99", latency(r.p99_latency)},
                {"p99.9", latency(r.p999_latency)}, {"max", latency(r.max_latency)}}},
              {"network_latency_cycles",
               {{"avg", latency(r.avg_network_latency)}, {"p99", latency(r.p99_network_latency)},
                {"max", latency(r.max_network_latency)}}},
              {"latency_histogram", {{"bin_cycles", r.histogram_bin}, {"counts", r.histogram}}},
              {"fairness", {{"accepted_min", r.accepted_min}, {"accepted_max", r.accepted_max}}},
              {"per_node", {{"injected_flits_per_cycle", r.node_injected}, {"accepted_flits_per_cycle", r.node_accepted}}},
              {"avg_hops", r.avg_hops < 0 ? Json() : Json(r.avg_hops)},
              {"packets_measured", r.packets_measured},
              {"deliveries_measured", r.deliveries_measured},
              {"undelivered", r.undelivered},
              {"drained", r.drained},
              {"latency_growth", r.latency_growth},
              {"saturated", r.saturated},
              {"end_cycle", r.end_cycle},
              {"link_utilisation", {{"max", r.max_link_utilisation}, {"avg", r.avg_link_utilisation},
                                    {"max_vc", r.max_vc_utilisation}, {"links", links_j}}},
              {"noc_stats", stats_json(r.noc_stats)}};
}

}  // namespace ahbm::report
