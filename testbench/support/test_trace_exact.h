#pragma once
// trace.json (run's or serve's) read the way an exact reader reads it: ts and dur from the number
// text as exact decimals (pandas with Decimal, or any reader that does not go through a double),
// not from doubles. Checks what docs/outputs.md promises for both writers:
//  - every slice's ts and dur are whole nanoseconds (at most three fractional digits of µs, or
//    zeros beyond them);
//  - every (pid, tid) a slice uses has a thread_name event, every pid a process_name;
//  - slices on one track nest or are disjoint in integer ns: none starts inside another and ends
//    after it.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ahbm::test {

// A non-negative JSON number's text as an exact decimal: whole part and fractional digits (no
// trailing zeros), an exponent applied by moving the point. Compared and added digit by digit, so
// no double rounds it.
struct ExactDecimal {
  int64_t whole = 0;
  std::string frac;
};

inline std::optional<ExactDecimal> exact_decimal(const std::string& text) {
  std::string digits;  // all mantissa digits
  int64_t point = -1;  // digits before the point
  size_t i = 0;
  for (; i < text.size() && ((text[i] >= '0' && text[i] <= '9') || text[i] == '.'); ++i) {
    if (text[i] == '.') {
      if (point >= 0) return std::nullopt;
      point = int64_t(digits.size());
    } else {
      digits.push_back(text[i]);
    }
  }
  if (digits.empty()) return std::nullopt;  // a sign, or no number
  if (point < 0) point = int64_t(digits.size());
  if (i < text.size()) {
    if (text[i] != 'e' && text[i] != 'E') return std::nullopt;
    try {
      point += std::stoll(text.substr(i + 1));
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  while (point < 0) digits.insert(digits.begin(), '0'), ++point;  // 1.5e-05
  while (int64_t(digits.size()) < point) digits.push_back('0');   // 1.5e+03
  ExactDecimal d;
  const std::string whole = digits.substr(0, size_t(point));
  if (whole.size() > 18) return std::nullopt;
  d.whole = whole.empty() ? 0 : std::stoll(whole);
  d.frac = digits.substr(size_t(point));
  while (!d.frac.empty() && d.frac.back() == '0') d.frac.pop_back();
  return d;
}

inline bool operator<(const ExactDecimal& a, const ExactDecimal& b) {
  if (a.whole != b.whole) return a.whole < b.whole;
  return a.frac < b.frac;  // no trailing zeros: a prefix is the smaller
}
inline bool operator<=(const ExactDecimal& a, const ExactDecimal& b) { return !(b < a); }

inline ExactDecimal operator+(const ExactDecimal& a, const ExactDecimal& b) {
  const size_t n = std::max(a.frac.size(), b.frac.size());
  std::string x = a.frac, y = b.frac, sum(n, '0');
  x.resize(n, '0');
  y.resize(n, '0');
  int carry = 0;
  for (size_t i = n; i-- > 0;) {
    const int v = (x[i] - '0') + (y[i] - '0') + carry;
    sum[i] = char('0' + v % 10);
    carry = v / 10;
  }
  ExactDecimal r{a.whole + b.whole + carry, sum};
  while (!r.frac.empty() && r.frac.back() == '0') r.frac.pop_back();
  return r;
}

// `us` (a JSON number's text, in µs) as exact integer ns, or nothing when it is not a whole number
// of ns (a non-zero digit past the third fractional one) or not a non-negative number.
inline std::optional<int64_t> exact_ns(const std::string& us) {
  const auto d = exact_decimal(us);
  if (!d || d->frac.size() > 3) return std::nullopt;
  std::string frac = d->frac;
  frac.resize(3, '0');
  return d->whole * 1000 + std::stoll(frac);
}

struct TraceSlice {
  int64_t pid = 0, tid = 0;
  std::string name, ts, dur;  // ts and dur: the number text as written
};

struct TraceEventsText {
  std::vector<TraceSlice> slices;                        // "ph": "X"
  std::set<std::pair<int64_t, int64_t>> thread_names;    // (pid, tid) of thread_name events
  std::set<int64_t> process_names, pids;                 // pids of process_name events, of every event
};

// Reads the events through nlohmann's SAX interface, which hands over a float's text as written.
// Events are the objects one level inside the top-level object ({"traceEvents": [{...}, ...]}).
inline TraceEventsText read_trace_events(const std::string& text) {
  struct Reader : nlohmann::json_sax<nlohmann::json> {
    TraceEventsText out;
    int depth = 0;        // objects open
    std::string field;    // the last key of the event object (depth 2)
    std::string top;      // the last key of the top-level object: events are in "traceEvents"
    std::map<std::string, std::string> fields;  // the event's scalar fields as text
    bool value(const std::string& v) {
      if (depth == 2 && top == "traceEvents") fields[field] = v;
      return true;
    }
    bool null() override { return value("null"); }
    bool boolean(bool b) override { return value(b ? "true" : "false"); }
    bool number_integer(number_integer_t v) override { return value(std::to_string(v)); }
    bool number_unsigned(number_unsigned_t v) override { return value(std::to_string(v)); }
    bool number_float(number_float_t, const string_t& s) override { return value(s); }
    bool string(string_t& s) override { return value(s); }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override {
      if (++depth == 2) fields.clear();
      return true;
    }
    bool key(string_t& k) override {
      if (depth == 1) top = k;
      if (depth == 2) field = k;
      return true;
    }
    bool end_object() override {
      if (depth-- != 2 || top != "traceEvents") return true;
      const int64_t pid = fields.count("pid") ? std::stoll(fields["pid"]) : -1;
      const int64_t tid = fields.count("tid") ? std::stoll(fields["tid"]) : -1;
      out.pids.insert(pid);
      const std::string& ph = fields["ph"];
      if (ph == "M" && fields["name"] == "thread_name") out.thread_names.insert({pid, tid});
      if (ph == "M" && fields["name"] == "process_name") out.process_names.insert(pid);
      if (ph == "X") out.slices.push_back({pid, tid, fields["name"], fields["ts"], fields["dur"]});
      return true;
    }
    bool start_array(std::size_t) override { return true; }
    bool end_array() override { return true; }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
      throw std::runtime_error(std::string("trace.json does not parse: ") + e.what());
    }
  } reader;
  nlohmann::json::sax_parse(text, &reader);
  return reader.out;
}

struct TraceExactness {
  size_t slices = 0;
  int64_t last_end_ns = 0;
  std::vector<std::string> not_whole_ns;      // "name ts=... dur=..." of each such slice
  std::vector<std::string> unnamed_tracks;    // "pid N tid M" / "pid N" without a name event
  std::vector<std::string> partial_overlaps;  // "name [start, end) over name [start, end) us"
};

inline TraceExactness check_trace_exactness(const std::string& text) {
  const TraceEventsText ev = read_trace_events(text);
  TraceExactness r;
  struct Slice {
    ExactDecimal start, end;  // µs, exact
    const TraceSlice* s;
  };
  const auto show = [](const ExactDecimal& d) { return std::to_string(d.whole) + (d.frac.empty() ? "" : "." + d.frac); };
  std::map<std::pair<int64_t, int64_t>, std::vector<Slice>> tracks;
  for (const TraceSlice& s : ev.slices) {
    ++r.slices;
    const auto ts = exact_decimal(s.ts), dur = exact_decimal(s.dur);
    if (!ts || !dur) {
      r.not_whole_ns.push_back(s.name + " ts=" + s.ts + " dur=" + s.dur + " (not a non-negative number)");
      continue;
    }
    const auto ts_ns = exact_ns(s.ts), dur_ns = exact_ns(s.dur);
    if (!ts_ns || !dur_ns) r.not_whole_ns.push_back(s.name + " ts=" + s.ts + " dur=" + s.dur);
    else r.last_end_ns = std::max(r.last_end_ns, *ts_ns + *dur_ns);
    tracks[{s.pid, s.tid}].push_back({*ts, *ts + *dur, &s});
  }
  for (const int64_t pid : ev.pids)
    if (!ev.process_names.count(pid)) r.unnamed_tracks.push_back("pid " + std::to_string(pid));
  for (auto& [track, list] : tracks) {
    if (!ev.thread_names.count(track))
      r.unnamed_tracks.push_back("pid " + std::to_string(track.first) + " tid " + std::to_string(track.second));
    // Outer slices first among equal starts; then a stack of the enclosing slices.
    std::stable_sort(list.begin(), list.end(), [](const Slice& a, const Slice& b) {
      if (a.start < b.start || b.start < a.start) return a.start < b.start;
      return b.end < a.end;
    });
    std::vector<const Slice*> open;
    for (const Slice& s : list) {
      while (!open.empty() && open.back()->end <= s.start) open.pop_back();
      if (!open.empty() && open.back()->end < s.end) {
        r.partial_overlaps.push_back(s.s->name + " [" + show(s.start) + ", " + show(s.end) + ") over " +
                                     open.back()->s->name + " [" + show(open.back()->start) + ", " +
                                     show(open.back()->end) + ") us");
        continue;
      }
      open.push_back(&s);
    }
  }
  return r;
}

// The first few entries of a list, for a failure message.
inline std::string first_few(const std::vector<std::string>& list, size_t n = 5) {
  std::string out;
  for (size_t i = 0; i < list.size() && i < n; ++i) out += "\n  " + list[i];
  if (list.size() > n) out += "\n  ... " + std::to_string(list.size() - n) + " more";
  return out;
}

}  // namespace ahbm::test
