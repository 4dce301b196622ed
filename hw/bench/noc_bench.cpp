#include "hw/bench/noc_bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "hw/common/sim/sim_context.h"
#include "hw/common/observe/span_recorder.h"
#include "hw/common/observe/trace_sink.h"
#include "hw/noc/flit_network.h"

namespace ahbm {

namespace {

using Rng = SplitMix64;  // hw/noc/flit_network.h

void check(bool ok, const std::string& option, const std::string& what) {
  if (!ok) throw InputError(option + ": " + what);
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

const std::vector<std::string>& pattern_names() {
  static const std::vector<std::string> names = {"uniform",  "transpose", "bitcomp",  "bitrev",  "shuffle",
                                                 "tornado",  "neighbor",  "randperm", "hotspot", "multicast"};
  return names;
}

// log2(n) when n is a power of two, else -1.
int log2_exact(int n) {
  int b = 0;
  while ((1 << b) < n) ++b;
  return (1 << b) == n ? b : -1;
}

double mean_packet_flits(const NocBenchOptions& o) {
  if (o.packet_mix.empty()) return o.packet_flits;
  double w = 0, f = 0;
  for (const auto& [flits, weight] : o.packet_mix) w += weight, f += weight * flits;
  return f / w;
}

// The q-quantile of sorted values by nearest rank.
double nearest_rank(const std::vector<double>& sorted, double q) {
  return sorted[size_t(std::max(1.0, std::ceil(q * double(sorted.size())))) - 1];
}

// Packet probability per node per cycle (on average).
double packet_probability(const NocBenchOptions& o) { return o.rate_in_packets ? o.rate : o.rate / mean_packet_flits(o); }

// Creates the traffic, collects deliveries and samples the link counters at the window edges.
class Harness : public sc_core::sc_module, public NocClient {
 public:
  struct Record {
    int64_t created;
    bool measured;
    int flits;
  };
  Harness(sc_core::sc_module_name name, Noc& noc, const NocBenchOptions& o, uint64_t period)
      : sc_core::sc_module(name),
        win_start_(o.converge ? kNever : o.warmup),
        win_end_(o.converge ? kNever : o.warmup + o.cycles),
        noc_(noc),
        o_(o),
        period_(period),
        rng_(o.seed),
        fixed_(pattern_destinations(o)) {
    for (int e = 0; e < noc.endpoint_count(); ++e) noc.attach(e, this);
    node_flits_.assign(size_t(o.nodes), 0);
    SC_HAS_PROCESS(Harness);
    SC_THREAD(generate);
  }

  void noc_receive(int endpoint, const NocPacket& p) override {
    const int64_t cycle = int64_t((sc_core::sc_time_stamp().value() + period_ - 1) / period_);
    const Record& r = records_[size_t(p.tag)];
    if (cycle >= win_start_ && cycle < win_end_) {
      window_flits_ += uint64_t(r.flits);
      node_flits_[size_t(endpoint)] += uint64_t(r.flits);
    }
    period_lat_ += double(cycle - r.created);
    ++period_n_;
    period_flits_ += uint64_t(r.flits);
    if (!r.measured) return;
    latencies_.push_back(double(cycle - r.created));
    measured_created_.push_back(r.created);
    // The head left the source at a clock edge: injected is a whole number of cycles.
    network_latencies_.push_back(double(cycle - int64_t(p.injected.value() / period_)));
    if (p.hops >= 0) hops_sum_ += p.hops, ++hops_known_;
    --outstanding_;
  }
  bool done() const { return window_closed_ && outstanding_ == 0; }

  std::vector<Record> records_;
  std::vector<double> latencies_, network_latencies_;
  std::vector<int64_t> measured_created_;  // creation cycle of each measured delivery (as latencies_)
  std::vector<uint64_t> node_flits_;  // per node: flits accepted in the window
  uint64_t window_flits_ = 0, measured_packets_ = 0, measured_flit_copies_ = 0, outstanding_ = 0;
  uint64_t hops_sum_ = 0, hops_known_ = 0;
  bool window_closed_ = false;
  // The measurement window [win_start_, win_end_): the options' with fixed windows; with the
  // convergence rule decided at period ends (kNever until then).
  static constexpr int64_t kNever = std::numeric_limits<int64_t>::max() / 4;
  int64_t win_start_, win_end_;
  bool converged_ = true;
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
    if (o_.traffic == "uniform") return {o_.include_self ? rng_.below(n) : other()};
    if (!fixed_.empty()) return {fixed_[size_t(src)]};
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

  // A packet's size in flits: packet_flits, or drawn from the mix.
  int packet_size() {
    if (o_.packet_mix.empty()) return o_.packet_flits;
    double x = rng_.uniform() * mix_weight_;
    for (const auto& [flits, weight] : o_.packet_mix) {
      if (x < weight) return flits;
      x -= weight;
    }
    return o_.packet_mix.back().first;
  }

  // Whether node s creates a packet this cycle.
  bool creates(int s, double p) {
    if (!on_off_) return rng_.uniform() < p;
    // on-off: move the node's Markov source, then try at the on-state rate.
    char& on = on_[size_t(s)];
    on = on ? rng_.uniform() >= o_.burst_beta : rng_.uniform() < o_.burst_alpha;
    return on && rng_.uniform() < p * (o_.burst_alpha + o_.burst_beta) / o_.burst_alpha;
  }

  void generate() {
    const double p = packet_probability(o_);
    for (const auto& m : o_.packet_mix) mix_weight_ += m.second;
    // On-off sources start in their stationary state (on with probability alpha / (alpha + beta)).
    if (o_.injection == "on-off")
      for (int s = 0; s < o_.nodes; ++s)
        on_.push_back(rng_.uniform() < o_.burst_alpha / (o_.burst_alpha + o_.burst_beta));
    std::vector<NocPacket> batch;
    for (int64_t c = 0; !window_closed_ || c < win_end_ + o_.drain; ++c) {
      if (o_.converge && c > 0 && c % o_.sample_period == 0) {
        wait_until(before_edge(c));  // every delivery of the period that ends here has been seen
        end_period(c);
      }
      if (c == win_start_) {
        wait_until(before_edge(c));
        at_start_ = noc_.links();
      }
      if (c == win_end_) {
        wait_until(before_edge(c));
        at_end_ = noc_.links();
        window_closed_ = true;
      }
      const bool measured = c >= win_start_ && c < win_end_;
      batch.clear();
      for (int s = 0; s < o_.nodes; ++s) {
        if (!creates(s, p)) continue;
        NocPacket pk;
        pk.src = s;
        pk.dsts = destinations(s);
        const int flits = packet_size();
        pk.bytes = uint64_t(flits) * noc_.flit_bytes();
        pk.tag = int(records_.size());
        records_.push_back({c, measured, flits});
        if (measured) {
          ++measured_packets_;
          measured_flit_copies_ += pk.dsts.size() * uint64_t(flits);
          outstanding_ += pk.dsts.size();
        }
        batch.push_back(std::move(pk));
      }
      if (batch.empty()) continue;
      wait_until(before_edge(c));
      for (auto& pk : batch) noc_.send(std::move(pk));
    }
  }

  // The convergence rule at the end of a sample period (cycle c): decides where the window starts
  // and ends (NocBenchOptions::converge).
  void end_period(int64_t c) {
    const int64_t periods = c / o_.sample_period;
    const double lat = period_n_ ? period_lat_ / double(period_n_) : 0, acc = double(period_flits_);
    period_lat_ = 0, period_n_ = 0, period_flits_ = 0;
    auto close = [&](double now, double before) { return now > 0 && std::abs(now - before) < o_.converge_threshold * now; };
    if (win_start_ == kNever) {  // warming up: this period against the previous one
      const bool steady = periods >= std::max(2, o_.warmup_periods) && close(lat, prev_lat_) && close(acc, prev_acc_);
      prev_lat_ = lat, prev_acc_ = acc;
      if (steady) {
        win_start_ = c;
      } else if (periods + 1 >= o_.max_samples) {  // never steady: measure one last period
        win_start_ = c;
        win_end_ = c + o_.sample_period;
        converged_ = false;
      }
      return;
    }
    if (win_end_ != kNever) return;
    // Measuring: the cumulative figures of the measured packets against the previous period's.
    double sum = 0;
    for (double l : latencies_) sum += l;
    const double cum_lat = latencies_.empty() ? 0 : sum / double(latencies_.size());
    const double cum_acc = double(window_flits_) / double(c - win_start_);
    const bool stable = c - win_start_ > o_.sample_period && close(cum_lat, prev_lat_) && close(cum_acc, prev_acc_);
    stable_periods_ = stable ? stable_periods_ + 1 : 0;
    prev_lat_ = cum_lat, prev_acc_ = cum_acc;
    if (stable_periods_ >= 3) {
      win_end_ = c;
    } else if (periods >= o_.max_samples) {
      win_end_ = c;
      converged_ = false;
    }
  }

  double period_lat_ = 0, prev_lat_ = 0, prev_acc_ = 0;  // convergence rule: this period's sums, the last figures
  uint64_t period_n_ = 0, period_flits_ = 0;
  int stable_periods_ = 0;

  Noc& noc_;
  const NocBenchOptions& o_;
  uint64_t period_;
  Rng rng_;
  std::vector<int> fixed_;  // deterministic patterns: destination per source
  bool on_off_ = o_.injection == "on-off";
  std::vector<char> on_;    // on-off injection: per node, in a burst
  double mix_weight_ = 0;
};

}  // namespace

std::vector<int> pattern_destinations(const NocBenchOptions& o) {
  const int n = o.nodes;
  const std::string& t = o.traffic;
  std::vector<int> d;
  if (t == "transpose") {
    const int k = int(std::lround(std::sqrt(double(n))));
    check(k * k == n, option_label(o, "--nodes", std::to_string(n)), "transpose traffic needs a square node count");
    for (int s = 0; s < n; ++s) d.push_back((s % k) * k + s / k);
  } else if (t == "bitcomp" || t == "bitrev" || t == "shuffle") {
    const int b = log2_exact(n);
    check(b >= 1, option_label(o, "--nodes", std::to_string(n)), t + " traffic needs a power-of-two node count");
    for (int s = 0; s < n; ++s) {
      int x = 0;
      if (t == "bitcomp") x = ~s & (n - 1);                                          // d_i = not s_i
      if (t == "shuffle") x = ((s << 1) | (s >> (b - 1))) & (n - 1);                 // d_i = s_(i-1 mod b)
      if (t == "bitrev")
        for (int i = 0; i < b; ++i) x |= ((s >> i) & 1) << (b - 1 - i);              // d_i = s_(b-1-i)
      d.push_back(x);
    }
  } else if (t == "tornado" || t == "neighbor") {
    // Radix-k digits: the k x k arrangement when n is a square, else one ring of n nodes.
    const int r = int(std::lround(std::sqrt(double(n))));
    const int k = r * r == n ? r : n, digits = r * r == n ? 2 : 1;
    const int shift = t == "tornado" ? (k + 1) / 2 - 1 : 1;  // tornado: ceil(k/2) - 1
    for (int s = 0; s < n; ++s) {
      int x = 0, place = 1, rest = s;
      for (int i = 0; i < digits; ++i, place *= k, rest /= k) x += ((rest % k + shift) % k) * place;
      d.push_back(x);
    }
  } else if (t == "randperm") {
    for (int s = 0; s < n; ++s) d.push_back(s);
    Rng rng(o.perm_seed);
    for (int i = n - 1; i > 0; --i) std::swap(d[size_t(i)], d[size_t(rng.below(i + 1))]);  // Fisher-Yates
  }
  return d;
}

// The last cycle a run may reach: the window (fixed, or at most max_samples sample periods) and
// the drain allowance.
int64_t run_limit(const NocBenchOptions& o) {
  const int64_t drain = o.drain < 0 ? o.cycles : o.drain;
  return (o.converge ? o.sample_period * o.max_samples : o.warmup + o.cycles) + drain;
}

std::string option_label(const NocBenchOptions& o, const std::string& option, const std::string& value) {
  const auto it = o.given_as.find(option);
  if (it == o.given_as.end()) return option + " " + value;
  return it->second + " (" + option.substr(2) + " = " + value + ")";
}

NocBenchWork noc_bench_work(const NocBenchOptions& in) {
  const double drain = double(in.drain < 0 ? in.cycles : in.drain);
  const double nodes = double(in.nodes), injecting = double(run_limit(in)) - drain;
  NocBenchWork w;
  w.node_cycles = nodes * (injecting + drain);
  w.packets = nodes * injecting * packet_probability(in) * (in.traffic == "multicast" ? double(in.multicast_dests) : 1.0);
  return w;
}

NocBenchResult run_noc_bench(const NocRegistry& registry, const NocBenchOptions& in) {
  NocBenchOptions o = in;
  check(o.drain >= -1 && o.drain <= 100000000, option_label(o, "--drain", std::to_string(o.drain)),
        "must be -1 (as long as --cycles) or in [0, 1e8]");
  if (o.drain < 0) o.drain = o.cycles;
  const std::vector<std::string>& patterns = pattern_names();
  if (std::find(patterns.begin(), patterns.end(), o.traffic) == patterns.end()) {
    std::string list;
    for (const auto& p : patterns) list += (list.empty() ? "" : ", ") + p;
    throw InputError("--traffic " + o.traffic + ": unknown pattern (allowed: " + list + ")");
  }
  check(o.nodes >= 2 && o.nodes <= 4096, option_label(o, "--nodes", std::to_string(o.nodes)), "must be in [2, 4096]");
  check(o.rate > 0 && o.rate <= 1, option_label(o, "--rate", fmt("%g", o.rate)),
        std::string("must be in (0, 1] ") + (o.rate_in_packets ? "packets" : "flits") + "/node/cycle");
  check(o.packet_flits >= 1 && o.packet_flits <= 4096, option_label(o, "--packet-flits", std::to_string(o.packet_flits)),
        "must be in [1, 4096]");
  for (const auto& [flits, weight] : o.packet_mix) {
    check(flits >= 1 && flits <= 4096, "--packet-mix " + std::to_string(flits), "packet sizes must be in [1, 4096] flits");
    check(weight > 0 && std::isfinite(weight), "--packet-mix " + std::to_string(flits) + ":" + fmt("%g", weight),
          "weights must be positive");
  }
  check(o.injection == "bernoulli" || o.injection == "on-off", "--injection " + o.injection,
        "unknown process (allowed: bernoulli, on-off)");
  if (o.injection == "on-off") {
    check(o.burst_alpha > 0 && o.burst_alpha <= 1, "--burst-alpha " + fmt("%g", o.burst_alpha), "must be in (0, 1]");
    check(o.burst_beta > 0 && o.burst_beta <= 1, "--burst-beta " + fmt("%g", o.burst_beta), "must be in (0, 1]");
  }
  {
    const double p = packet_probability(o) * (o.injection == "on-off" ? (o.burst_alpha + o.burst_beta) / o.burst_alpha : 1.0);
    check(p <= 1, option_label(o, "--rate", fmt("%g", o.rate)),
          "needs a packet probability of " + fmt("%g", p) + " per cycle" +
              (o.injection == "on-off" ? " in the on state" : "") + ", above 1 (lower the rate or raise the packet size)");
  }
  pattern_destinations(o);  // checks that the pattern fits the node count
  check(o.cycles >= 1 && o.cycles <= 100000000, option_label(o, "--cycles", std::to_string(o.cycles)), "must be in [1, 1e8]");
  check(o.warmup >= 0 && o.warmup <= 100000000, option_label(o, "--warmup", std::to_string(o.warmup)), "must be in [0, 1e8]");
  if (o.converge) {
    check(o.sample_period >= 1 && o.sample_period <= 100000000, "--sample-period " + std::to_string(o.sample_period),
          "must be in [1, 1e8]");
    check(o.max_samples >= 3 && o.max_samples <= 100000, "--max-samples " + std::to_string(o.max_samples),
          "must be in [3, 100000]");
    check(o.warmup_periods >= 0 && o.warmup_periods < o.max_samples, "--warmup-periods " + std::to_string(o.warmup_periods),
          "must be in [0, --max-samples - 1 = " + std::to_string(o.max_samples - 1) + "]");
    check(o.converge_threshold > 0 && o.converge_threshold < 1, "--converge-threshold " + fmt("%g", o.converge_threshold),
          "must be in (0, 1)");
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
  const NocBenchWork work = noc_bench_work(o);
  if (!o.allow_large && (work.node_cycles > kMaxNocBenchNodeCycles || work.packets > kMaxNocBenchPackets))
    throw InputError(option_label(o, "--nodes", std::to_string(o.nodes)) + " x (" +
                     option_label(o, "--warmup", std::to_string(o.warmup)) + " + " +
                     option_label(o, "--cycles", std::to_string(o.cycles)) + " + " +
                     option_label(o, "--drain", std::to_string(o.drain)) + ") = " + fmt("%.3g", work.node_cycles) +
                     " node-cycles and " + fmt("%.3g", work.packets) + " packets at " +
                     option_label(o, "--rate", fmt("%g", o.rate)) + " exceed the bench's bound (allowed: up to " +
                     fmt("%.3g", kMaxNocBenchNodeCycles) + " node-cycles and " + fmt("%.3g", kMaxNocBenchPackets) +
                     " packets, about 10 minutes and 2.5 GiB; fewer nodes or cycles, or --allow-large)");

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
    const int64_t limit = run_limit(o), slice = 1024;
    for (int64_t at = 0; at < limit && !h.done(); at += slice) {
      sc_core::sc_start(sc_core::sc_time::from_value(uint64_t(std::min(slice, limit - at)) * period));
      if (o.progress) o.progress(std::min(limit, at + slice), limit);
    }
    res.end_cycle = int64_t(sc_core::sc_time_stamp().value() / period);

    res.window_start = h.win_start_;
    res.window_end = h.win_end_;
    res.converged = h.converged_;
    const int64_t window = h.win_end_ - h.win_start_;
    const double node_cycles = double(o.nodes) * double(window);
    res.packets_measured = h.measured_packets_;
    res.offered = double(h.measured_flit_copies_) / node_cycles;
    res.accepted = double(h.window_flits_) / node_cycles;
    res.deliveries_measured = h.latencies_.size();
    res.undelivered = h.outstanding_;
    res.drained = h.outstanding_ == 0;
    // Latency of packets created late in the window vs early: above 1 when queues keep growing.
    double half_sum[2] = {0, 0};
    uint64_t half_count[2] = {0, 0};
    for (size_t i = 0; i < h.measured_created_.size(); ++i) {
      const bool second_half = h.measured_created_[i] >= h.win_start_ + window / 2;
      half_sum[second_half] += h.latencies_[i];
      ++half_count[second_half];
    }
    if (half_count[0] && half_count[1])
      res.latency_growth = (half_sum[1] / double(half_count[1])) / (half_sum[0] / double(half_count[0]));
    if (!h.network_latencies_.empty()) {
      std::vector<double>& net = h.network_latencies_;
      double sum = 0;
      for (double l : net) sum += l;
      res.avg_network_latency = sum / double(net.size());
      std::sort(net.begin(), net.end());
      res.p99_network_latency = nearest_rank(net, 0.99);
      res.max_network_latency = net.back();
    }
    std::vector<double>& lat = h.latencies_;
    if (!lat.empty()) {
      double sum = 0;
      for (double l : lat) sum += l;
      res.avg_latency = sum / double(lat.size());
      std::sort(lat.begin(), lat.end());
      auto rank = [&](double q) { return nearest_rank(lat, q); };
      res.p50_latency = rank(0.5);
      res.p90_latency = rank(0.9);
      res.p99_latency = rank(0.99);
      res.p999_latency = rank(0.999);
      res.max_latency = lat.back();
      while (res.max_latency / double(res.histogram_bin) >= 64) res.histogram_bin *= 2;
      res.histogram.assign(size_t(res.max_latency / double(res.histogram_bin)) + 1, 0);
      for (double l : lat) ++res.histogram[size_t(l / double(res.histogram_bin))];
    }
    for (uint64_t f : h.node_flits_) res.node_accepted.push_back(double(f) / double(window));
    res.accepted_min = *std::min_element(res.node_accepted.begin(), res.node_accepted.end());
    res.accepted_max = *std::max_element(res.node_accepted.begin(), res.node_accepted.end());
    if (h.hops_known_) res.avg_hops = double(h.hops_sum_) / double(h.hops_known_);
    res.saturated =
        !res.drained || res.accepted < 0.95 * res.offered || res.latency_growth > 1.25 || !res.converged;
    // The sampler may not have reached the window's end when the run stopped early: then the
    // counters at the stop are the window's end (nothing measured is left in flight).
    if (h.at_end_.empty()) h.at_end_ = noc->links();
    const bool have_links = std::any_of(h.at_end_.begin(), h.at_end_.end(), [](const NocLink& l) { return l.kind == "link"; });
    double sum = 0;
    int counted = 0;
    for (size_t i = 0; i < h.at_end_.size(); ++i) {
      const uint64_t before = i < h.at_start_.size() ? h.at_start_[i].flits : 0;
      const double u = double(h.at_end_[i].flits - before) / double(window);
      res.links.push_back({h.at_end_[i].name, h.at_end_[i].kind, u, {}});
      const std::vector<uint64_t>& vc_end = h.at_end_[i].vc_flits;
      for (size_t v = 0; v < vc_end.size(); ++v) {
        const uint64_t vc_before = i < h.at_start_.size() && v < h.at_start_[i].vc_flits.size() ? h.at_start_[i].vc_flits[v] : 0;
        const double vu = double(vc_end[v] - vc_before) / double(window);
        res.links.back().vc_utilisation.push_back(vu);
        res.max_vc_utilisation = std::max(res.max_vc_utilisation, vu);
      }
      if (h.at_end_[i].kind == "inject") res.node_injected.push_back(u);  // one injection channel per node, in order
      if (have_links && h.at_end_[i].kind != "link") continue;
      res.max_link_utilisation = std::max(res.max_link_utilisation, u);
      sum += u;
      ++counted;
    }
    if (counted) res.avg_link_utilisation = sum / counted;
    noc->report_stats(res.noc_stats);
    unwind_threads();  // the traffic generators are still suspended: free what their stacks hold
  }
  return res;
}

NocSaturation find_saturation(const NocRegistry& registry, const NocBenchOptions& options, double lo, double hi,
                              double tolerance) {
  check(lo > 0 && lo < hi && hi <= 1, "--saturation", "needs 0 < lo < hi <= 1");
  check(tolerance > 0, "--saturation", "tolerance must be positive");
  NocSaturation s;
  NocBenchOptions o = options;
  o.rate = lo;
  s.at_rate = run_noc_bench(registry, o);
  s.runs = 1;
  check(!s.at_rate.saturated, "--saturation", "the network is already saturated at rate " + fmt("%g", lo));
  s.rate = lo;
  s.saturated_at = hi;
  o.rate = hi;
  NocBenchResult top = run_noc_bench(registry, o);
  ++s.runs;
  if (!top.saturated) {
    s.rate = hi;
    s.at_rate = std::move(top);
    return s;
  }
  while (s.saturated_at - s.rate > tolerance) {
    o.rate = (s.rate + s.saturated_at) / 2;
    NocBenchResult r = run_noc_bench(registry, o);
    ++s.runs;
    if (r.saturated) {
      s.saturated_at = o.rate;
    } else {
      s.rate = o.rate;
      s.at_rate = std::move(r);
    }
  }
  return s;
}

std::string NocBenchResult::line() const {
  std::ostringstream s;
  s << options.noc << " " << options.traffic << " rate " << fmt("%.3f", options.rate) << ": offered "
    << fmt("%.3f", offered) << " accepted " << fmt("%.3f", accepted) << " flits/node/cycle, "
    << (deliveries_measured ? "latency avg " + fmt("%.1f", avg_latency) + " p99 " + fmt("%.0f", p99_latency) +
                                  " (network avg " + fmt("%.1f", avg_network_latency) + ") cycles"
                            : std::string("no packets delivered in the window, no latency"))
    << ", hops "
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
    const bool none = r.deliveries_measured == 0;  // no latency: "n/a", not 0.0
    std::snprintf(buf, sizeof buf, "%8.3f %8.3f %9.3f %8s %8s %6s %9.2f  %s\n", r.options.rate, r.offered, r.accepted,
                  none ? "n/a" : fmt("%.1f", r.avg_latency).c_str(), none ? "n/a" : fmt("%.0f", r.p99_latency).c_str(),
                  r.avg_hops < 0 ? "n/a" : fmt("%.2f", r.avg_hops).c_str(), r.max_link_utilisation,
                  r.saturated ? "yes" : "no");
    s << buf;
  }
  return s.str();
}

}  // namespace ahbm
