#include "runtime/report/trace_json.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <vector>

#include "runtime/report/components.h"
#include "runtime/report/latency.h"

namespace ahbm::report {

namespace {

struct Slice {
  sc_core::sc_time start, end;
  const Span* span = nullptr;  // nullptr: a phase slice
  std::string phase;
};

// Splits one component's slices into tracks on which slices nest or are disjoint. Slices are
// taken longest-first among equal starts, so an enclosing phase slice precedes its contents.
std::vector<std::vector<Slice>> nest_into_tracks(std::vector<Slice> slices) {
  std::stable_sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.end != b.end) return a.end > b.end;
    return a.span == nullptr && b.span != nullptr;
  });
  std::vector<std::vector<Slice>> tracks;
  std::vector<std::vector<sc_core::sc_time>> open;  // per track: ends of the enclosing slices
  for (const Slice& s : slices) {
    size_t t = 0;
    for (; t < tracks.size(); ++t) {
      auto& stack = open[t];
      while (!stack.empty() && stack.back() <= s.start && !(stack.back() == s.start && s.end == s.start)) stack.pop_back();
      if (stack.empty() || s.end <= stack.back()) break;
    }
    if (t == tracks.size()) {
      tracks.emplace_back();
      open.emplace_back();
    }
    tracks[t].push_back(s);
    open[t].push_back(s.end);
  }
  return tracks;
}

// Times are written in whole nanoseconds (sub-ns times, from clocks whose period is not a whole
// ns, round to the nearest; rounding keeps every child inside its parent), as microseconds, the
// unit of the trace-event format. Perfetto's JSON importer converts ts and dur to integer ns each
// on its own, by truncation: ns = int64(value * 1000) (displayTimeUnit does not change it). ns /
// 1e3 as a double is often a hair below the exact decimal (94.329 is 94.32899999...), so its
// truncation would lose 1 ns and a child could end 1 ns after its parent, which Perfetto drops.
// The value written is the smallest double at or above ns / 1e3 that truncates back to ns; it
// prints as the exact decimal (94.329) or, when that would truncate short, one ulp above it
// (94.32900000000001). Then ts + dur read back is end exactly and slices nest as they do here.
int64_t whole_ns(const sc_core::sc_time& t) { return std::llround(to_ns(t)); }

double perfetto_us(int64_t ns) {
  double us = double(ns) / 1e3;
  while (int64_t(us * 1e3) < ns) us = std::nextafter(us, INFINITY);
  return us;
}

}  // namespace

void for_each_trace_event(const SpanRecorder& spans, const std::function<void(const Json&)>& emit) {
  const ComponentTable& components = spans.components();
  // Component -> its spans, and per (component, phase) the extent of those spans.
  std::map<std::string, std::vector<const Span*>> by_comp;
  for (const Span& s : spans.spans()) by_comp[spans.name(s.component)].push_back(&s);

  struct Track {
    std::string component;
    std::vector<std::vector<Slice>> lanes;
  };
  std::map<std::string, std::vector<Track>> processes;  // section -> tracks
  for (const auto& [comp, list] : by_comp) {
    std::vector<Slice> slices;
    std::map<std::string, std::pair<sc_core::sc_time, sc_core::sc_time>> phase_ext;
    for (const Span* s : list) {
      slices.push_back({s->start, s->end, s, ""});
      const std::string& ph = spans.name(s->phase);
      auto [it, fresh] = phase_ext.try_emplace(ph, s->start, s->end);
      if (!fresh) {
        it->second.first = std::min(it->second.first, s->start);
        it->second.second = std::max(it->second.second, s->end);
      }
    }
    for (const auto& [ph, ext] : phase_ext) slices.push_back({ext.first, ext.second, nullptr, ph});
    processes[place(comp, components).section].push_back({comp, nest_into_tracks(std::move(slices))});
  }

  // Processes and their tracks in the order of components.h.
  std::vector<std::string> sections;
  for (auto& [sec, tracks] : processes) {
    sections.push_back(sec);
    std::sort(tracks.begin(), tracks.end(),
              [&](const Track& a, const Track& b) {
                return place(a.component, components).key < place(b.component, components).key;
              });
  }
  std::sort(sections.begin(), sections.end(), [&](const std::string& a, const std::string& b) {
    return place(processes[a].front().component, components).key < place(processes[b].front().component, components).key;
  });

  for (size_t pi = 0; pi < sections.size(); ++pi) {
    const int pid = int(pi) + 1;
    emit(Json({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"tid", 0},
               {"args", {{"name", place(processes[sections[pi]].front().component, components).label}}}}));
    emit(Json({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid}, {"tid", 0},
               {"args", {{"sort_index", pid}}}}));
    int tid = 0;
    for (const Track& track : processes[sections[pi]]) {
      const std::string item = place(track.component, components).item;
      for (size_t lane = 0; lane < track.lanes.size(); ++lane) {
        ++tid;
        const std::string tname = lane == 0 ? item : item + " #" + std::to_string(lane + 1);
        emit(Json({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", tid},
                   {"args", {{"name", tname}}}}));
        emit(Json({{"ph", "M"}, {"name", "thread_sort_index"}, {"pid", pid}, {"tid", tid},
                   {"args", {{"sort_index", tid}}}}));
        for (const Slice& s : track.lanes[lane]) {
          const int64_t start_ns = whole_ns(s.start), end_ns = whole_ns(s.end);
          Json e = {{"ph", "X"}, {"pid", pid}, {"tid", tid}, {"ts", perfetto_us(start_ns)},
                    {"dur", perfetto_us(end_ns - start_ns)}};
          if (!s.span) {
            e["name"] = s.phase;
            e["cat"] = "phase";
            e["args"] = {{"component", track.component}, {"phase", s.phase},
                         {"start_ns", to_ns(s.start)}, {"end_ns", to_ns(s.end)}};
          } else {
            const std::string& act = spans.name(s.span->activity);
            const std::string& phase = spans.name(s.span->phase);
            e["name"] = act;
            e["cat"] = activity_class(act, phase);
            e["args"] = {{"component", track.component}, {"activity", act}, {"phase", phase},
                         {"agent", spans.name(s.span->agent)}, {"rows", s.span->rows}, {"bytes", s.span->bytes},
                         {"start_ns", to_ns(s.start)}, {"end_ns", to_ns(s.end)}};
          }
          emit(e);
        }
      }
    }
  }
}

Json trace_events(const SpanRecorder& spans) {
  Json events = Json::array();
  for_each_trace_event(spans, [&](const Json& e) { events.push_back(e); });
  return events;
}

void write_trace_json(std::ostream& os, const SpanRecorder& spans) {
  // Streamed event by event (a long run has millions of them; a whole-document DOM took several
  // times the file's size), byte for byte what dumping the whole document gives: nlohmann::json
  // orders keys alphabetically, so "traceEvents" comes last and its array closes the document.
  const Json head = {{"displayTimeUnit", "ns"},
                     {"otherData", {{"generator", "ahbm-sim"}, {"time_unit_of_ts", "us"}}},
                     {"traceEvents", Json::array()}};
  std::string prefix = head.dump();
  prefix.resize(prefix.size() - 2);  // drop the empty array's "]" and the document's "}"
  os << prefix;
  bool first = true;
  for_each_trace_event(spans, [&](const Json& e) {
    if (!first) os << ',';
    first = false;
    os << e.dump();
  });
  os << "]}\n";
}

}  // namespace ahbm::report
