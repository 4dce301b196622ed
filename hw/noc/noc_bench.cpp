#include "hw/noc/noc_bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "hw/common/sim_context.h"
#include "hw/common/span_recorder.h"
#include "hw/common/trace_sink.h"

namespace ahbm {

namespace {

// splitmix64: a small, fully specified generator, so a seed gives the same traffic everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
  int below(int n) { return int((unsigned __int128)next() * unsigned(n) >> 64); }

 private:
  uint64_t s_;
};

void check(bool ok, const std::string& option, const std::string& what) {
  if (!ok) throw InputError(option + ": " + what);
}

// Creates the traffic, collects deliveries and samples the link counters at the window edges.
class Harness : public sc_core::sc_module, public NocClient {
 public:
  struct Record {
    int64_t created;
    bool measured;
  };
  Harness(sc_core::sc_module_name name, Noc& noc, const NocBenchOptions& o, uint64_t period)
      : sc_core::sc_module(name), noc_(noc), o_(o), period_(period), rng_(o.seed) {
    for (int e = 0; e < noc.endpoint_count(); ++e) noc.attach(e, this);
    SC_HAS_PROCESS(Harness);
    SC_THREAD(generate);
    SC_THREAD(sample);
  }

  void noc_receive(int, const NocPacket& p) override {
    const int64_t cycle = int64_t((sc_core::sc_time_stamp().value() + period_ - 1) / period_);
    if (cycle >= o_.warmup && cycle < o_.warmup + o_.cycles) window_flits_ += uint64_t(o_.packet_flits);
    const Record& r = records_[size_t(p.tag)];
    if (!r.measured) return;
    latencies_.push_back(double(cycle - r.created));
    const bool second_half = r.created >= o_.warmup + o_.cycles / 2;
    half_sum_[second_half] += double(cycle - r.created);
    ++half_count_[second_half];
    if (p.hops >= 0) hops_sum_ += p.hops, ++hops_known_;
    --outstanding_;
  }
  bool done() const { return window_closed_ && outstanding_ == 0; }

  std::vector<Record> records_;
  std::vector<double> latencies_;
  uint64_t window_flits_ = 0, measured_packets_ = 0, measured_copies_ = 0, outstanding_ = 0;
  uint64_t hops_sum_ = 0, hops_known_ = 0;
  double half_sum_[2] = {0, 0};  // latency of packets created in the window's first / second half
  uint64_t half_count_[2] = {0, 0};
  bool window_closed_ = false;
  std::vector<NocLink> at_start_, at_end_;

 private:
  // Bench cycle c's packets are handed to the network half a cycle before edge c, so they enter
  // at edge c whatever order SystemC runs processes in at that instant.
  sc_core::sc_time before_edge(int64_t c) const {
    return sc_core::sc_time::from_value(c == 0 ? 0 : uint64_t(c) * period_ - period_ / 2);
  }
  void wait_until(const sc_core::sc_time& t) {
    if (t > sc_core::sc_time_stamp()) sc_core::wait(t - sc_core::sc_time_stamp());
  }

  std::vector<int> destinations(int src) {
    const int n = o_.nodes;
    auto other = [&]() {
      const int d = rng_.below(n - 1);
      return d >= src ? d + 1 : d;
    };
    if (o_.traffic == "uniform") return {other()};
    if (o_.traffic == "transpose") {
      const int k = int(std::lround(std::sqrt(double(n))));
      return {(src % k) * k + src / k};
    }
    if (o_.traffic == "hotspot") {
      if (src != o_.hotspot_node && rng_.uniform() < o_.hotspot_fraction) return {o_.hotspot_node};
      return {other()};
    }
    // multicast: a random subset of the other nodes (partial Fisher-Yates)
    std::vector<int> pool;
    for (int d = 0; d < n; ++d)
      if (d != src) pool.push_back(d);
    for (int i = 0; i < o_.multicast_dests; ++i) std::swap(pool[size_t(i)], pool[size_t(i + rng_.below(int(pool.size()) - i))]);
    pool.resize(size_t(o_.multicast_dests));
    std::sort(pool.begin(), pool.end());
    return pool;
  }

  void generate() {
    const double p = o_.rate / o_.packet_flits;
    const int64_t end = o_.warmup + o_.cycles + o_.drain;
    const uint64_t bytes = uint64_t(o_.packet_flits) * noc_.flit_bytes();
    std::vector<NocPacket> batch;
    for (int64_t c = 0; c < end; ++c) {
      if (c == o_.warmup + o_.cycles) window_closed_ = true;
      const bool measured = c >= o_.warmup && c < o_.warmup + o_.cycles;
      batch.clear();
      for (int s = 0; s < o_.nodes; ++s) {
        if (rng_.uniform() >= p) continue;
        NocPacket pk;
        pk.src = s;
        pk.dsts = destinations(s);
        pk.bytes = bytes;
        pk.tag = int(records_.size());
        records_.push_back({c, measured});
        if (measured) {
          ++measured_packets_;
          measured_copies_ += pk.dsts.size();
          outstanding_ += pk.dsts.size();
        }
        batch.push_back(std::move(pk));
      }
      if (batch.empty()) continue;
      wait_until(before_edge(c));
      for (auto& pk : batch) noc_.send(std::move(pk));
    }
  }

  void sample() {
    wait_until(before_edge(o_.warmup));
    at_start_ = noc_.links();
    wait_until(before_edge(o_.warmup + o_.cycles));
    at_end_ = noc_.links();
  }

  Noc& noc_;
  const NocBenchOptions& o_;
  uint64_t period_;
  Rng rng_;
};

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

NocBenchResult run_noc_bench(const NocRegistry& registry, const NocBenchOptions& in) {
  NocBenchOptions o = in;
  if (o.drain < 0) o.drain = o.cycles;
  const std::vector<std::string> patterns = {"uniform", "transpose", "hotspot", "multicast"};
  if (std::find(patterns.begin(), patterns.end(), o.traffic) == patterns.end())
    throw InputError("--traffic " + o.traffic + ": unknown pattern (allowed: uniform, transpose, hotspot, multicast)");
  check(o.nodes >= 2 && o.nodes <= 4096, "--nodes " + std::to_string(o.nodes), "must be in [2, 4096]");
  check(o.rate > 0 && o.rate <= 1, "--rate " + fmt("%g", o.rate), "must be in (0, 1] flits/node/cycle");
  check(o.packet_flits >= 1 && o.packet_flits <= 4096, "--packet-flits " + std::to_string(o.packet_flits),
        "must be in [1, 4096]");
  check(o.cycles >= 1 && o.cycles <= 100000000, "--cycles " + std::to_string(o.cycles), "must be in [1, 1e8]");
  check(o.warmup >= 0 && o.warmup <= 100000000, "--warmup " + std::to_string(o.warmup), "must be in [0, 1e8]");
  check(o.drain <= 100000000, "--drain " + std::to_string(o.drain), "must be at most 1e8");
  if (o.traffic == "transpose") {
    const int k = int(std::lround(std::sqrt(double(o.nodes))));
    check(k * k == o.nodes, "--nodes " + std::to_string(o.nodes), "transpose traffic needs a square node count");
  }
  if (o.traffic == "hotspot") {
    check(o.hotspot_node >= 0 && o.hotspot_node < o.nodes, "--hotspot-node " + std::to_string(o.hotspot_node),
          "must be a node in [0, " + std::to_string(o.nodes - 1) + "]");
    check(o.hotspot_fraction >= 0 && o.hotspot_fraction <= 1, "--hotspot-fraction " + fmt("%g", o.hotspot_fraction),
          "must be in [0, 1]");
  }
  if (o.traffic == "multicast")
    check(o.multicast_dests >= 1 && o.multicast_dests < o.nodes, "--mc-dests " + std::to_string(o.multicast_dests),
          "must be in [1, nodes - 1 = " + std::to_string(o.nodes - 1) + "]");

  NocBenchResult res;
  res.options = o;
  SimContext context;
  SimContext::Scope use_context(context);
  TraceSink trace(false);
  SpanRecorder spans;
  NocContext ctx;
  ctx.params = o.params;
  ctx.config_file = "noc-bench";
  ctx.params_field = "--params";
  ctx.trace = &trace;
  ctx.spans = &spans;
  for (int n = 0; n < o.nodes; ++n) ctx.endpoints.push_back("n" + std::to_string(n));
  {
    const NocModelInfo& model = registry.get(o.noc, "noc-bench", "--noc");
    std::unique_ptr<Noc> noc = model.make("noc", ctx);
    Harness h("bench", *noc, o, uint64_t(ctx.clock.period().value()));
    const uint64_t period = ctx.clock.period().value();
    // Run in slices until every measured packet has arrived or the drain allowance is used up.
    const int64_t limit = o.warmup + o.cycles + o.drain, slice = 1024;
    for (int64_t at = 0; at < limit && !h.done(); at += slice)
      sc_core::sc_start(sc_core::sc_time::from_value(uint64_t(std::min(slice, limit - at)) * period));
    res.end_cycle = int64_t(sc_core::sc_time_stamp().value() / period);

    const double node_cycles = double(o.nodes) * double(o.cycles);
    res.packets_measured = h.measured_packets_;
    res.offered = double(h.measured_copies_) * o.packet_flits / node_cycles;
    res.accepted = double(h.window_flits_) / node_cycles;
    res.deliveries_measured = h.latencies_.size();
    res.undelivered = h.outstanding_;
    res.drained = h.outstanding_ == 0;
    std::vector<double>& lat = h.latencies_;
    if (!lat.empty()) {
      double sum = 0;
      for (double l : lat) sum += l;
      res.avg_latency = sum / double(lat.size());
      std::sort(lat.begin(), lat.end());
      res.p99_latency = lat[size_t(std::ceil(0.99 * double(lat.size()))) - 1];  // nearest rank
    }
    if (h.hops_known_) res.avg_hops = double(h.hops_sum_) / double(h.hops_known_);
    // Latency of packets created late in the window vs early: above 1 when queues keep growing.
    if (h.half_count_[0] && h.half_count_[1])
      res.latency_growth = (h.half_sum_[1] / double(h.half_count_[1])) / (h.half_sum_[0] / double(h.half_count_[0]));
    res.saturated = !res.drained || res.accepted < 0.95 * res.offered || res.latency_growth > 1.25;
    // The sampler may not have reached the window's end when the run stopped early: then the
    // counters at the stop are the window's end (nothing measured is left in flight).
    if (h.at_end_.empty()) h.at_end_ = noc->links();
    const bool have_links = std::any_of(h.at_end_.begin(), h.at_end_.end(), [](const NocLink& l) { return l.kind == "link"; });
    double sum = 0;
    int counted = 0;
    for (size_t i = 0; i < h.at_end_.size(); ++i) {
      const uint64_t before = i < h.at_start_.size() ? h.at_start_[i].flits : 0;
      const double u = double(h.at_end_[i].flits - before) / double(o.cycles);
      res.links.push_back({h.at_end_[i].name, h.at_end_[i].kind, u});
      if (have_links && h.at_end_[i].kind != "link") continue;
      res.max_link_utilisation = std::max(res.max_link_utilisation, u);
      sum += u;
      ++counted;
    }
    if (counted) res.avg_link_utilisation = sum / counted;
    res.noc_stats = noc->stats();
    unwind_threads();  // the traffic generators are still suspended: free what their stacks hold
  }
  return res;
}

Json NocBenchResult::to_json() const {
  const NocBenchOptions& o = options;
  Json links_j = Json::array();
  for (const auto& l : links) links_j.push_back({{"name", l.name}, {"kind", l.kind}, {"utilisation", l.utilisation}});
  return Json{{"noc", o.noc},
              {"params", o.params},
              {"traffic", o.traffic},
              {"rate", o.rate},
              {"packet_flits", o.packet_flits},
              {"nodes", o.nodes},
              {"cycles", o.cycles},
              {"warmup", o.warmup},
              {"drain", o.drain},
              {"seed", o.seed},
              {"offered_flits_per_node_cycle", offered},
              {"accepted_flits_per_node_cycle", accepted},
              {"avg_latency_cycles", avg_latency},
              {"p99_latency_cycles", p99_latency},
              {"avg_hops", avg_hops < 0 ? Json() : Json(avg_hops)},
              {"packets_measured", packets_measured},
              {"deliveries_measured", deliveries_measured},
              {"undelivered", undelivered},
              {"drained", drained},
              {"latency_growth", latency_growth},
              {"saturated", saturated},
              {"end_cycle", end_cycle},
              {"link_utilisation", {{"max", max_link_utilisation}, {"avg", avg_link_utilisation}, {"links", links_j}}},
              {"noc_stats", noc_stats}};
}

std::string NocBenchResult::line() const {
  std::ostringstream s;
  s << options.noc << " " << options.traffic << " rate " << fmt("%.3f", options.rate) << ": offered "
    << fmt("%.3f", offered) << " accepted " << fmt("%.3f", accepted) << " flits/node/cycle, latency avg "
    << fmt("%.1f", avg_latency) << " p99 " << fmt("%.0f", p99_latency) << " cycles, hops "
    << (avg_hops < 0 ? std::string("n/a") : fmt("%.2f", avg_hops)) << ", link util max "
    << fmt("%.2f", max_link_utilisation) << " avg " << fmt("%.2f", avg_link_utilisation) << ", "
    << (saturated ? "SATURATED" : "not saturated");
  if (!drained) s << " (" << undelivered << " measured deliveries still in flight)";
  return s.str();
}

std::string noc_bench_table(const std::vector<NocBenchResult>& results) {
  std::ostringstream s;
  s << "    rate  offered  accepted  avg_lat  p99_lat   hops  max_link  saturated\n";
  for (const auto& r : results) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%8.3f %8.3f %9.3f %8.1f %8.0f %6s %9.2f  %s\n", r.options.rate, r.offered,
                  r.accepted, r.avg_latency, r.p99_latency,
                  r.avg_hops < 0 ? "n/a" : fmt("%.2f", r.avg_hops).c_str(), r.max_link_utilisation,
                  r.saturated ? "yes" : "no");
    s << buf;
  }
  return s.str();
}

}  // namespace ahbm
