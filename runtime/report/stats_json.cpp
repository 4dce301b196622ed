#include "runtime/report/stats_json.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "hw/chip/chip_stats.h"
#include "runtime/report/latency.h"
#include "runtime/report/stats_tree.h"

namespace ahbm::report {

namespace {

// Counters of every tree node that reports a span-recorder component, by component name. The
// Q buffer's are completed with its capacity and the high-water mark as a fraction of it.
void component_counters(const StatsNode& node, uint64_t q_capacity, std::map<std::string, Json>& out) {
  if (!node.component.empty()) {
    Json c = stats_json(node);
    if (node.has(QBufferStats::high_water) && q_capacity > 0) {
      c["capacity_bytes"] = q_capacity;
      c["high_water_fraction"] = double(node.get(QBufferStats::high_water)) / double(q_capacity);
    }
    out[node.component] = std::move(c);
  }
  for (const StatsNode& child : node.children()) component_counters(child, q_capacity, out);
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

Json module_stats(const SpanRecorder& spans, const StatsNode& chip, const Json& hw, double total_ns) {
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
  std::map<std::string, Json> counters_of;
  component_counters(chip, hw.is_object() ? hw.value("/cube/q_buffer/bytes"_json_pointer, uint64_t(0)) : 0, counters_of);
  for (auto& [name, counters] : counters_of) {
    if (!comps.contains(name))
      comps[name] = {{"busy_ns", 0.0}, {"busy_cycles", 0}, {"occupied_ns", 0.0}, {"utilisation", 0.0},
                     {"bytes", 0}, {"spans", 0}, {"activities", Json::object()}};
    comps[name]["counters"] = counters;
  }
  return Json{{"total_ns", total_ns},
              {"clock_ghz", ghz},
              {"components", comps},
              {"noc", chip.find(ChipStats::noc) ? stats_json(chip.at(ChipStats::noc)) : Json::object()},
              {"chip", stats_json(chip)}};
}

}  // namespace ahbm::report
