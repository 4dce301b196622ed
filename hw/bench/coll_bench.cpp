#include "hw/bench/coll_bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "hw/common/base/error.h"

namespace ahbm {

namespace {

// The index of `name` in `names`, or an InputError naming the option and the allowed names.
int choose(const std::string& option, const std::string& name, const std::vector<std::string>& names) {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return int(i);
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  throw InputError(option + " " + name + ": unknown (allowed: " + list + ")");
}

std::string number(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

CollBenchResult run_coll_bench(const NocRegistry& registry, const CollBenchOptions& in) {
  CollBenchResult res;
  res.options = in;
  CollBenchOptions& o = res.options;
  const int chips = o.network.chips;
  if (chips < 1 || chips > 4096) throw InputError("--chips " + std::to_string(chips) + ": must be in [1, 4096]");
  res.kind = CollectiveKind(choose("--collective", o.collective, collective_kind_names()));
  res.algo = o.algo.empty() ? collective_algorithms(res.kind).front()
                            : CollectiveAlgo(choose("--algo", o.algo, collective_algo_names()));
  {
    const std::vector<CollectiveAlgo> algos = collective_algorithms(res.kind);
    if (std::find(algos.begin(), algos.end(), res.algo) == algos.end()) {
      std::string list;
      for (CollectiveAlgo a : algos) list += (list.empty() ? "" : ", ") + collective_name(a);
      throw InputError("--algo " + o.algo + ": " + o.collective + " has no such algorithm (allowed: " + list + ")");
    }
  }
  if (o.min_bytes < 1 || o.min_bytes > kMaxCollBenchBytes)
    throw InputError("--min-bytes " + std::to_string(o.min_bytes) + ": must be in [1, " + std::to_string(kMaxCollBenchBytes) + "]");
  if (o.max_bytes < o.min_bytes || o.max_bytes > kMaxCollBenchBytes)
    throw InputError("--max-bytes " + std::to_string(o.max_bytes) + ": must be in [--min-bytes = " + std::to_string(o.min_bytes) +
                     ", " + std::to_string(kMaxCollBenchBytes) + "]");
  if (!(o.step_factor > 1 && o.step_factor <= 1024))
    throw InputError("--step-factor " + number("%g", o.step_factor) + ": must be in (1, 1024]");
  if (o.groups.empty()) {
    o.groups.emplace_back();
    for (int c = 0; c < chips; ++c) o.groups.back().push_back(res.kind == CollectiveKind::p2p && c > 1 ? -1 : c);
    o.groups.back().erase(std::remove(o.groups.back().begin(), o.groups.back().end(), -1), o.groups.back().end());
  }
  std::vector<CollectiveSpec> specs;
  for (size_t g = 0; g < o.groups.size(); ++g) {
    CollectiveSpec s;
    s.kind = res.kind;
    s.algo = res.algo;
    s.ranks = o.groups[g];
    s.reduce_ns_per_byte = o.reduce_ns_per_byte;
    s.name = "group" + std::to_string(g);
    if (s.ranks.size() != o.groups[0].size())
      throw InputError("--groups: group " + std::to_string(g) + " has " + std::to_string(s.ranks.size()) + " ranks, group 0 " +
                       std::to_string(o.groups[0].size()) + " (allowed: groups of one size)");
    check_collective(s, chips, "--groups: group " + std::to_string(g) + " (chips 0 to " + std::to_string(chips - 1) + ")");
    specs.push_back(std::move(s));
  }
  res.ranks = int(o.groups[0].size());
  res.bus_factor = bus_bandwidth_factor(res.kind, res.ranks);
  std::vector<uint64_t> sizes;
  for (double s = double(o.min_bytes); s <= double(o.max_bytes) * (1 + 1e-12); s *= o.step_factor) {
    sizes.push_back(uint64_t(std::llround(s)));
    if (int(sizes.size()) > kMaxCollBenchSizes)
      throw InputError("--min-bytes, --max-bytes, --step-factor: more than " + std::to_string(kMaxCollBenchSizes) +
                       " sizes (allowed: up to " + std::to_string(kMaxCollBenchSizes) + "; raise --step-factor)");
  }
  for (uint64_t bytes : sizes) {
    if (o.progress) o.progress(res.rows.size(), sizes.size(), bytes);
    for (CollectiveSpec& s : specs) s.bytes = bytes;
    CollectiveRun run = run_collectives(registry, o.network, specs);
    if (!res.alpha_beta) res.alpha_beta = run.alpha_beta;
    CollBenchRow row;
    row.bytes = bytes;
    for (const CollectiveResult& r : run.results) {
      row.group_time_us.push_back(r.time_ns() / 1e3);
      row.time_us = std::max(row.time_us, r.time_ns() / 1e3);
    }
    row.algbw_gbps = row.time_us > 0 ? double(bytes) / (row.time_us * 1e3) : 0;
    row.busbw_gbps = row.algbw_gbps * res.bus_factor;
    if (res.alpha_beta) {
      row.closed_form_us = collective_closed_form_ns(res.kind, res.algo, res.ranks, double(bytes), *res.alpha_beta) / 1e3;
      row.error_pct = row.closed_form_us > 0 ? (row.time_us - row.closed_form_us) / row.closed_form_us * 100 : 0;
    }
    res.rows.push_back(std::move(row));
    res.network_stats = std::move(run.network_stats);
  }
  if (o.progress) o.progress(sizes.size(), sizes.size(), 0);
  return res;
}

std::string coll_bench_table(const CollBenchResult& r) {
  std::string t = "# " + collective_name(r.kind) + " (" + collective_name(r.algo) + "), " + std::to_string(r.options.groups.size()) +
                  " group(s) of " + std::to_string(r.ranks) + " ranks on " + r.options.network.model + " (" +
                  std::to_string(r.options.network.chips) + " chips)";
  if (r.alpha_beta)
    t += "; closed form: alpha " + number("%g", r.alpha_beta->alpha_ns) + " ns, B " + number("%g", r.alpha_beta->gbps) + " GB/s";
  t += "\n";
  char line[256];
  std::snprintf(line, sizeof line, "%14s %12s %10s %10s %12s %8s\n", "size (B)", "time (us)", "algbw", "busbw", "closed (us)",
                "error");
  t += line;
  std::snprintf(line, sizeof line, "%14s %12s %10s %10s %12s %8s\n", "", "", "(GB/s)", "(GB/s)", "", "(%)");
  t += line;
  for (const CollBenchRow& row : r.rows) {
    if (row.closed_form_us >= 0)
      std::snprintf(line, sizeof line, "%14llu %12.3f %10.3f %10.3f %12.3f %8.3f\n", (unsigned long long)row.bytes, row.time_us,
                    row.algbw_gbps, row.busbw_gbps, row.closed_form_us, row.error_pct);
    else
      std::snprintf(line, sizeof line, "%14llu %12.3f %10.3f %10.3f %12s %8s\n", (unsigned long long)row.bytes, row.time_us,
                    row.algbw_gbps, row.busbw_gbps, "-", "-");
    t += line;
  }
  return t;
}

Json coll_bench_json(const CollBenchResult& r) {
  Json j = Json::object();
  j["network"] = {{"model", r.options.network.model}, {"params", r.options.network.params}, {"chips", r.options.network.chips}};
  j["collective"] = collective_name(r.kind);
  j["algorithm"] = collective_name(r.algo);
  j["groups"] = r.options.groups;
  j["ranks"] = r.ranks;
  j["reduce_ns_per_byte"] = r.options.reduce_ns_per_byte;
  j["bus_factor"] = r.bus_factor;
  if (r.alpha_beta) j["closed_form"] = {{"alpha_ns", r.alpha_beta->alpha_ns}, {"gbps", r.alpha_beta->gbps}};
  j["rows"] = Json::array();
  for (const CollBenchRow& row : r.rows) {
    Json x = {{"bytes", row.bytes}, {"time_us", row.time_us}, {"group_time_us", row.group_time_us},
              {"algbw_gbps", row.algbw_gbps}, {"busbw_gbps", row.busbw_gbps}};
    if (row.closed_form_us >= 0) {
      x["closed_form_us"] = row.closed_form_us;
      x["error_pct"] = row.error_pct;
    }
    j["rows"].push_back(std::move(x));
  }
  return j;
}

}  // namespace ahbm
