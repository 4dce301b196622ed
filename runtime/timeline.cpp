#include "runtime/timeline.h"

#include <cmath>

namespace ahbm {

Timeline::Timeline(bool vcd) : spans_(std::make_unique<SpanRecorder>()), trace_(std::make_unique<TraceSink>(vcd)) {}

sc_core::sc_time Timeline::append(const SimResult& step) {
  const sc_core::sc_time start = now_;
  const SpanRecorder& from = *step.spans;
  std::vector<int> id(size_t(0));
  auto map = [&](int i) {
    if (size_t(i) >= id.size()) id.resize(size_t(i) + 1, -1);
    if (id[size_t(i)] < 0) id[size_t(i)] = spans_->intern(from.name(i));
    return id[size_t(i)];
  };
  for (const Span& s : from.spans())
    spans_->record(s.start + start, s.end + start, map(s.component), map(s.activity), map(s.phase), map(s.agent),
                   s.rows, s.bytes);
  spans_->declare_all(from.components());
  trace_->append(*step.trace, uint64_t(std::llround(now_ns())));
  for (size_t gt = 0; gt < step.tile_done_ns.size(); ++gt) {
    tile_done_ns_.push_back(now_ns() + step.tile_done_ns[gt]);
    tile_of_.push_back(step.tile_of[gt]);
  }
  if (stats_.is_null()) stats_ = step.stats;
  else merge_stats(stats_, step.stats, now_ns(), step.end_ns);
  now_ = start + sc_core::sc_time(step.end_ns, sc_core::SC_NS);
  return start;
}

sc_core::sc_time Timeline::advance(double ns) {
  const sc_core::sc_time start = now_;
  now_ = start + sc_core::sc_time(ns, sc_core::SC_NS);
  return start;
}

namespace {
bool names_any(const std::string& key, std::initializer_list<const char*> words) {
  for (const char* w : words)
    if (key.find(w) != std::string::npos) return true;
  return false;
}
}  // namespace

void merge_stats(Json& acc, const Json& step, double acc_ns, double step_ns) {
  if (acc.is_object() && step.is_object()) {
    for (auto it = step.begin(); it != step.end(); ++it) {
      if (!acc.contains(it.key())) {
        acc[it.key()] = it.value();
        continue;
      }
      Json& a = acc[it.key()];
      const Json& s = it.value();
      if (a.is_number() && s.is_number()) {
        const std::string& k = it.key();
        if (k == "group" || k == "from" || k == "to") continue;
        if (names_any(k, {"max", "peak", "high_water"})) {
          if (s.get<double>() > a.get<double>()) a = s;
        } else if (names_any(k, {"avg", "mean", "util", "ratio", "rate", "fraction"})) {
          const double total = acc_ns + step_ns;
          a = total > 0 ? (a.get<double>() * acc_ns + s.get<double>() * step_ns) / total : s.get<double>();
        } else if (a.is_number_integer() && s.is_number_integer()) {
          a = a.get<int64_t>() + s.get<int64_t>();
        } else {
          a = a.get<double>() + s.get<double>();
        }
      } else {
        merge_stats(a, s, acc_ns, step_ns);
      }
    }
  } else if (acc.is_array() && step.is_array() && acc.size() == step.size()) {
    for (size_t i = 0; i < acc.size(); ++i) merge_stats(acc[i], step[i], acc_ns, step_ns);
  }
}

void Timeline::finish_into(SimResult& out) {
  out.spans = std::move(spans_);
  out.trace = std::move(trace_);
  out.end_ns = now_ns();
  out.tile_done_ns = std::move(tile_done_ns_);
  out.tile_of = std::move(tile_of_);
  out.stats = std::move(stats_);
  spans_ = std::make_unique<SpanRecorder>();
  trace_ = std::make_unique<TraceSink>(false);
}

}  // namespace ahbm
