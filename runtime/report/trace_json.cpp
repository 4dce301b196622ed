#include "runtime/report/trace_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <vector>

#include "runtime/report/components.h"
#include "runtime/report/latency.h"
#include "runtime/report/trace_time.h"

namespace ahbm::report {

namespace {

struct Slice {
  sc_core::sc_time start, end;
  const Span* span = nullptr;  // nullptr: a phase slice
  int phase = -1;              // a phase slice's phase (interned name)
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

// Times in whole nanoseconds, written as exact decimal microseconds (runtime/report/trace_time.h:
// the rule and how Perfetto reads it back).
int64_t whole_ns(const sc_core::sc_time& t) { return report::whole_ns(to_ns(t)); }

// JSON text written directly, as nlohmann::json::dump() writes the same values (compact, keys
// in alphabetical order, numbers by its own shortest round-trip formatter), without building
// a document: a long run has millions of events.
class JsonText {
 public:
  explicit JsonText(std::ostream& os) : os_(os) { buf_.reserve(1 << 16); }
  ~JsonText() { flush(); }
  JsonText& raw(const char* s) {
    buf_.append(s);
    return *this;
  }
  JsonText& raw(char c) {
    buf_.push_back(c);
    return *this;
  }
  JsonText& str(const std::string& s) {  // a JSON string (UTF-8 passed through, as dump() does)
    buf_.push_back('"');
    const bool plain = std::none_of(s.begin(), s.end(), [](char c) {
      return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20;
    });
    if (plain) {  // the usual case: component and activity names need no escapes
      buf_.append(s);
      buf_.push_back('"');
      return *this;
    }
    for (const char c : s) {
      switch (c) {
        case '"': buf_.append("\\\""); break;
        case '\\': buf_.append("\\\\"); break;
        case '\b': buf_.append("\\b"); break;
        case '\f': buf_.append("\\f"); break;
        case '\n': buf_.append("\\n"); break;
        case '\r': buf_.append("\\r"); break;
        case '\t': buf_.append("\\t"); break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            char u[8];
            std::snprintf(u, sizeof u, "\\u%04x", unsigned(static_cast<unsigned char>(c)));
            buf_.append(u);
          } else {
            buf_.push_back(c);
          }
      }
    }
    buf_.push_back('"');
    return *this;
  }
  JsonText& num(int64_t v) {
    char b[24];
    const auto r = std::to_chars(b, b + sizeof b, v);
    buf_.append(b, size_t(r.ptr - b));
    return *this;
  }
  JsonText& num(double v) {
    if (!std::isfinite(v)) return raw("null");
    char b[64];
    const char* end = nlohmann::detail::to_chars(b, b + sizeof b, v);  // the formatter dump() uses
    buf_.append(b, size_t(end - b));
    return *this;
  }
  JsonText& us(int64_t ns) {  // a time: ns / 1000 as exact decimal text (trace_time.h)
    append_trace_us(buf_, ns);
    return *this;
  }
  void flush_if_full() {
    if (buf_.size() > (1u << 16) - 1024) flush();
  }
  void flush() {
    os_.write(buf_.data(), std::streamsize(buf_.size()));
    buf_.clear();
  }

 private:
  std::ostream& os_;
  std::string buf_;
};

// The processes and their tracks, in file order.
struct Track {
  int component;
  std::string name;
  Placement where;
  std::vector<std::vector<Slice>> lanes;
};
struct Process {
  std::vector<Track> tracks;
};

// `spans` (span slices of one component) followed by one phase slice per phase they belong to:
// the extent of its spans, in the order of the phases' names.
std::vector<Slice> with_phase_slices(std::vector<Slice> spans, const SpanRecorder& names) {
  std::map<int, std::pair<sc_core::sc_time, sc_core::sc_time>> ext;
  for (const Slice& sl : spans) {
    if (!sl.span) continue;  // a phase slice already there: the extents come from the spans
    auto [it, fresh] = ext.try_emplace(sl.span->phase, sl.start, sl.end);
    if (!fresh) {
      it->second.first = std::min(it->second.first, sl.start);
      it->second.second = std::max(it->second.second, sl.end);
    }
  }
  std::map<std::string, int> by_name;
  for (const auto& [ph, e] : ext) by_name.emplace(names.name(ph), ph);
  for (const auto& [name, ph] : by_name) spans.push_back({ext[ph].first, ext[ph].second, nullptr, ph});
  return spans;
}

std::vector<Process> layout(const SpanRecorder& spans) {
  const ComponentTable& components = spans.components();
  // Component id -> its spans (ids, not names, per span: the names are looked up per component).
  std::vector<std::vector<const Span*>> by_id;
  for (const Span& s : spans.spans()) {
    if (size_t(s.component) >= by_id.size()) by_id.resize(size_t(s.component) + 1);
    by_id[size_t(s.component)].push_back(&s);
  }
  std::map<std::string, int> by_comp;  // components by name, the order tracks are built in
  for (size_t id = 0; id < by_id.size(); ++id)
    if (!by_id[id].empty()) by_comp.emplace(spans.name(int(id)), int(id));

  std::map<std::string, std::vector<Track>> processes;  // section -> tracks
  for (const auto& [comp, id] : by_comp) {
    const std::vector<const Span*>& list = by_id[size_t(id)];
    std::vector<Slice> slices;
    slices.reserve(list.size() + 4);
    for (const Span* s : list) slices.push_back({s->start, s->end, s, -1});
    Placement where = place(comp, components);
    std::vector<std::vector<Slice>> nested = nest_into_tracks(with_phase_slices(std::move(slices), spans));
    // A component whose spans overlap (a reducer's inter-CUBE merge of one Q tile during the next
    // tile's intra-CUBE merges) spills onto further tracks; each of those gets its own phase
    // slices too, so on every track the phase is the outermost slice.
    for (size_t t = 1; t < nested.size(); ++t) {
      // A track that took a phase slice of the first pass (phase slices of a long run can
      // overlap one another) keeps it and gets no second one.
      if (std::any_of(nested[t].begin(), nested[t].end(), [](const Slice& sl) { return !sl.span; })) continue;
      std::vector<std::vector<Slice>> again = nest_into_tracks(with_phase_slices(nested[t], spans));
      if (again.size() == 1) nested[t] = std::move(again.front());
    }
    processes[where.section].push_back({id, comp, std::move(where), std::move(nested)});
  }

  // Processes and their tracks in the order of components.h.
  std::vector<Process> out;
  for (auto& [sec, tracks] : processes) {
    std::sort(tracks.begin(), tracks.end(), [](const Track& a, const Track& b) { return a.where.key < b.where.key; });
    out.push_back({std::move(tracks)});
  }
  std::sort(out.begin(), out.end(),
            [](const Process& a, const Process& b) { return a.tracks.front().where.key < b.tracks.front().where.key; });
  return out;
}

void metadata(JsonText& j, const char* name, int pid, int tid, const char* arg, const std::string* text, int number) {
  j.raw("{\"args\":{\"").raw(arg).raw("\":");
  if (text) j.str(*text); else j.num(int64_t(number));
  j.raw("},\"name\":\"").raw(name).raw("\",\"ph\":\"M\",\"pid\":").num(int64_t(pid)).raw(",\"tid\":").num(int64_t(tid)).raw('}');
}

}  // namespace

void write_trace_json(std::ostream& os, const SpanRecorder& spans, const PowerTrace* power) {
  const std::vector<Process> procs = layout(spans);
  JsonText j(os);
  // Keys in alphabetical order, as nlohmann::json orders them: "traceEvents" comes last and its
  // array closes the document.
  j.raw("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"ahbm-sim\",\"time_unit_of_ts\":\"us\"},"
        "\"traceEvents\":[");
  bool first = true;
  const auto next = [&] {
    if (!first) j.raw(',');
    first = false;
    j.flush_if_full();
  };
  // Class of each (activity, phase) pair, looked up once.
  std::map<std::pair<int, int>, std::string> classes;
  for (size_t pi = 0; pi < procs.size(); ++pi) {
    const int pid = int(pi) + 1;
    next();
    metadata(j, "process_name", pid, 0, "name", &procs[pi].tracks.front().where.label, 0);
    next();
    metadata(j, "process_sort_index", pid, 0, "sort_index", nullptr, pid);
    int tid = 0;
    for (const Track& track : procs[pi].tracks) {
      const std::string& item = track.where.item;
      for (size_t lane = 0; lane < track.lanes.size(); ++lane) {
        ++tid;
        const std::string tname = lane == 0 ? item : item + " #" + std::to_string(lane + 1);
        next();
        metadata(j, "thread_name", pid, tid, "name", &tname, 0);
        next();
        metadata(j, "thread_sort_index", pid, tid, "sort_index", nullptr, tid);
        for (const Slice& s : track.lanes[lane]) {
          const int64_t start_ns = whole_ns(s.start), end_ns = whole_ns(s.end);
          next();
          if (!s.span) {
            const std::string& phase = spans.name(s.phase);
            j.raw("{\"args\":{\"component\":").str(track.name).raw(",\"end_ns\":").num(to_ns(s.end));
            j.raw(",\"phase\":").str(phase).raw(",\"start_ns\":").num(to_ns(s.start));
            j.raw("},\"cat\":\"phase\",\"dur\":").us(end_ns - start_ns).raw(",\"name\":").str(phase);
          } else {
            const Span& sp = *s.span;
            const std::string& act = spans.name(sp.activity);
            const std::string& phase = spans.name(sp.phase);
            auto cls = classes.find({sp.activity, sp.phase});
            if (cls == classes.end()) cls = classes.emplace(std::make_pair(sp.activity, sp.phase), activity_class(act, phase)).first;
            j.raw("{\"args\":{\"activity\":").str(act).raw(",\"agent\":").str(spans.name(sp.agent));
            j.raw(",\"bytes\":").num(sp.bytes).raw(",\"component\":").str(track.name).raw(",\"end_ns\":").num(to_ns(s.end));
            j.raw(",\"phase\":").str(phase).raw(",\"rows\":").num(sp.rows).raw(",\"start_ns\":").num(to_ns(s.start));
            j.raw("},\"cat\":").str(cls->second).raw(",\"dur\":").us(end_ns - start_ns).raw(",\"name\":").str(act);
          }
          j.raw(",\"ph\":\"X\",\"pid\":").num(int64_t(pid)).raw(",\"tid\":").num(int64_t(tid)).raw(",\"ts\":").us(start_ns).raw('}');
        }
      }
    }
  }
  if (power) {
    // Counter tracks: keys in alphabetical order as everywhere (the classes are sorted by name).
    const int pid = int(procs.size()) + 1;
    const std::string label = "chip power";
    next();
    metadata(j, "process_name", pid, 0, "name", &label, 0);
    next();
    metadata(j, "process_sort_index", pid, 0, "sort_index", nullptr, pid);
    std::map<std::string, EnergyClass> by_name;
    for (size_t c = 0; c < kEnergyClasses; ++c) by_name.emplace(energy_class_name(EnergyClass(c)), EnergyClass(c));
    auto counters = [&](int64_t ns, size_t k, bool zero) {
      next();
      j.raw("{\"args\":{\"chip\":").num(zero ? 0.0 : power->watts(k));
      j.raw("},\"name\":\"power_w\",\"ph\":\"C\",\"pid\":").num(int64_t(pid)).raw(",\"ts\":").us(ns).raw('}');
      next();
      j.raw("{\"args\":{");
      bool first_arg = true;
      for (const auto& [name, c] : by_name) {
        if (!first_arg) j.raw(',');
        first_arg = false;
        j.str(name).raw(':').num(zero ? 0.0 : power->watts(k, c));
      }
      j.raw("},\"name\":\"power_by_class_w\",\"ph\":\"C\",\"pid\":").num(int64_t(pid)).raw(",\"ts\":").us(ns).raw('}');
    };
    for (size_t k = 0; k < power->windows.size(); ++k) counters(report::whole_ns(power->start_ns(k)), k, false);
    const int64_t end = report::whole_ns(power->total_ns);
    if (end > report::whole_ns(power->start_ns(power->windows.size() - 1))) counters(end, 0, true);
  }
  j.raw("]}\n");
}

Json trace_events(const SpanRecorder& spans, const PowerTrace* power) {
  std::ostringstream os;
  write_trace_json(os, spans, power);
  return Json::parse(os.str())["traceEvents"];
}

}  // namespace ahbm::report
