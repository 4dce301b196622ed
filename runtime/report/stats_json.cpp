#include "runtime/report/stats_json.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "hw/chip/chip_stats.h"
#include "hw/common/base/huge_page_allocator.h"
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

// A component's busy intervals: one per span, so hundreds of thousands in a long run (huge
// pages, hw/common/base/huge_page_allocator.h).
using Intervals = std::vector<std::pair<double, double>, HugePageAllocator<std::pair<double, double>>>;

// Length of the union of [start, end) intervals (sorted in place).
double covered_ns(Intervals& iv) {
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
  struct Activity {
    double busy = 0;
    int64_t bytes = 0, count = 0;
  };
  struct Acc {
    bool seen = false;
    double busy = 0;
    int64_t bytes = 0, count = 0;
    Intervals intervals;
    std::map<int, Activity> acts;  // by activity id
  };
  // Accumulated by component id (a long run has millions of spans), in span order so that
  // sums add in the same order as ever; keyed by name below.
  std::vector<Acc> by_id;
  std::vector<char> annotation;  // per component id: 1 annotation, 0 hardware, -1 not looked at
  for (const Span& s : spans.spans()) {
    const size_t id = size_t(s.component);
    if (id >= by_id.size()) {
      by_id.resize(id + 1);
      annotation.resize(id + 1, -1);
    }
    if (annotation[id] < 0) annotation[id] = is_annotation_component(spans.name(s.component)) ? 1 : 0;
    if (annotation[id]) continue;
    const double a = to_ns(s.start), b = to_ns(s.end);
    Acc& x = by_id[id];
    x.seen = true;
    x.busy += b - a;
    x.bytes += s.bytes;
    ++x.count;
    x.intervals.emplace_back(a, b);
    Activity& act = x.acts[s.activity];
    act.busy += b - a;
    act.bytes += s.bytes;
    ++act.count;
  }
  std::map<std::string, Acc*> acc;
  for (size_t id = 0; id < by_id.size(); ++id)
    if (by_id[id].seen) acc[spans.name(int(id))] = &by_id[id];
  Json comps = Json::object();
  for (auto& [name, xp] : acc) {
    Acc& x = *xp;
    const double occ = covered_ns(x.intervals);
    Json acts = Json::object();
    for (const auto& [act, v] : x.acts)
      acts[spans.name(act)] = {{"busy_ns", v.busy}, {"bytes", v.bytes}, {"count", v.count}};
    comps[name] = {{"busy_ns", x.busy},
                   {"busy_cycles", uint64_t(std::llround(x.busy * ghz))},
                   {"occupied_ns", occ},
                   {"utilisation", total_ns > 0 ? occ / total_ns : 0.0},
                   {"bytes", x.bytes},
                   {"spans", x.count},
                   {"activities", std::move(acts)}};
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
              {"chip", stats_json(chip)},
              {"counter_docs", stats_docs(chip)}};
}

}  // namespace ahbm::report
