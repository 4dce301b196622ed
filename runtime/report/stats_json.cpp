#include "runtime/report/stats_json.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "runtime/report/latency.h"

namespace ahbm::report {

namespace {

// Counters of Chip::stats(), keyed by the component names the span recorder uses. Tolerant of
// missing fields so a richer or leaner chip statistics tree never breaks the report.
std::map<std::string, Json> chip_counters(const Json& chip, const Json& hw) {
  std::map<std::string, Json> out;
  if (!chip.is_object() || !chip.contains("groups")) return out;
  const uint64_t qcap = hw.is_object() ? hw.value("/cube/q_buffer/bytes"_json_pointer, uint64_t(0)) : 0;
  for (const Json& g : chip["groups"]) {
    const std::string gp = "group" + std::to_string(g.value("group", 0));
    const Json cubes = g.value("cubes", Json::array());
    for (size_t c = 0; c < cubes.size(); ++c) {
      const std::string cp = gp + ".cube" + std::to_string(c);
      const Json& cj = cubes[c];
      Json& qb = out[cp + ".q_buffer"];
      Json& red = out[cp + ".reducer"];
      for (const auto& [k, v] : cj.items()) {
        if (k.rfind("q_buffer_", 0) == 0) qb[k.substr(9)] = v;
        else if (k.rfind("reducer_", 0) == 0) red[k.substr(8)] = v;
      }
      if (qb.contains("high_water_bytes") && qcap > 0) {
        qb["capacity_bytes"] = qcap;
        qb["high_water_fraction"] = qb["high_water_bytes"].get<double>() / double(qcap);
      }
      const Json pes = cj.value("pes", Json::array());
      for (size_t p = 0; p < pes.size(); ++p) out[cp + ".pe" + std::to_string(p)] = pes[p];
    }
    for (const Json& l : g.value("links", Json::array()))
      out[gp + ".link.cube" + std::to_string(l.value("from", 0)) + "_to_cube" + std::to_string(l.value("to", 0))] = l;
  }
  return out;
}

// Length of the union of [start, end) intervals.
double covered_ns(std::vector<std::pair<double, double>> iv) {
  std::sort(iv.begin(), iv.end());
  double total = 0, cur_a = 0, cur_b = -1;
  for (const auto& [a, b] : iv) {
    if (a > cur_b) {
      if (cur_b > cur_a) total += cur_b - cur_a;
      cur_a = a;
      cur_b = b;
    } else {
      cur_b = std::max(cur_b, b);
    }
  }
  if (cur_b > cur_a) total += cur_b - cur_a;
  return total;
}

}  // namespace

Json module_stats(const SpanRecorder& spans, const Json& chip_stats, const Json& hw, double total_ns) {
  const double ghz = hw.is_object() ? hw.value("clock_ghz", 1.0) : 1.0;
  struct Acc {
    double busy = 0;
    int64_t bytes = 0, count = 0;
    std::vector<std::pair<double, double>> intervals;
    std::map<std::string, Json> acts;
  };
  std::map<std::string, Acc> acc;
  for (const Span& s : spans.spans()) {
    const std::string& comp = spans.name(s.component);
    if (is_annotation_component(comp)) continue;
    const double a = to_ns(s.start), b = to_ns(s.end);
    Acc& x = acc[comp];
    x.busy += b - a;
    x.bytes += s.bytes;
    ++x.count;
    x.intervals.emplace_back(a, b);
    Json& act = x.acts[spans.name(s.activity)];
    if (act.is_null()) act = {{"busy_ns", 0.0}, {"bytes", 0}, {"count", 0}};
    act["busy_ns"] = act["busy_ns"].get<double>() + (b - a);
    act["bytes"] = act["bytes"].get<int64_t>() + s.bytes;
    act["count"] = act["count"].get<int64_t>() + 1;
  }
  Json comps = Json::object();
  for (auto& [name, x] : acc) {
    const double occ = covered_ns(x.intervals);
    comps[name] = {{"busy_ns", x.busy},
                   {"busy_cycles", uint64_t(std::llround(x.busy * ghz))},
                   {"occupied_ns", occ},
                   {"utilisation", total_ns > 0 ? occ / total_ns : 0.0},
                   {"bytes", x.bytes},
                   {"spans", x.count},
                   {"activities", x.acts}};
  }
  for (auto& [name, counters] : chip_counters(chip_stats, hw)) {
    if (!comps.contains(name))
      comps[name] = {{"busy_ns", 0.0}, {"busy_cycles", 0}, {"occupied_ns", 0.0}, {"utilisation", 0.0},
                     {"bytes", 0}, {"spans", 0}, {"activities", Json::object()}};
    comps[name]["counters"] = counters;
  }
  return Json{{"total_ns", total_ns},
              {"clock_ghz", ghz},
              {"components", comps},
              {"noc", chip_stats.is_object() ? chip_stats.value("noc", Json::object()) : Json::object()},
              {"chip", chip_stats}};
}

}  // namespace ahbm::report
