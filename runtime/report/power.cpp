#include "runtime/report/power.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "hw/common/base/error.h"
#include "hw/common/base/timing.h"
#include "runtime/report/energy_json.h"

namespace ahbm::report {

std::vector<PowerSegment> power_segments(const std::vector<StepRecord>& steps, const StatsNode& chip,
                                         const HwConfig& hw, DType t, double total_ns) {
  std::vector<PowerSegment> out;
  for (const StepRecord& s : steps) {
    PowerSegment seg;
    seg.start_ns = s.timing.start_ns;
    seg.ns = s.timing.ns;
    seg.joules = step_energy(s, chip, hw, t).by_class;
    // A whole model's step reads its attention once per layer and adds the operators: only
    // layer 0's attention has hardware spans on the timeline.
    seg.by_spans = s.layers.is_null();
    out.push_back(seg);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const PowerSegment& a, const PowerSegment& b) { return a.start_ns < b.start_ns; });
  // Time in no step (none today; energy_json.cpp charges it the same way): static power alone.
  std::vector<PowerSegment> gaps;
  double at = 0;
  auto gap = [&](double until) {
    if (until > at) {
      PowerSegment g;
      g.start_ns = at;
      g.ns = until - at;
      g.joules = read_energy(chip, hw, t, g.ns, 0.0).by_class;
      gaps.push_back(g);
    }
  };
  for (const PowerSegment& s : out) {
    gap(s.start_ns);
    at = std::max(at, s.start_ns + s.ns);
  }
  gap(total_ns);
  out.insert(out.end(), gaps.begin(), gaps.end());
  std::stable_sort(out.begin(), out.end(),
                   [](const PowerSegment& a, const PowerSegment& b) { return a.start_ns < b.start_ns; });
  return out;
}

double PowerTrace::length_ns(size_t k) const {
  return std::max(0.0, std::min(window_ns, total_ns - start_ns(k)));
}

double PowerTrace::watts(size_t k) const {
  const double ns = length_ns(k);
  return ns > 0 ? total_of(windows[k]) / (ns * 1e-9) : 0.0;
}

double PowerTrace::watts(size_t k, EnergyClass c) const {
  const double ns = length_ns(k);
  return ns > 0 ? windows[k][size_t(c)] / (ns * 1e-9) : 0.0;
}

double PowerTrace::total_j() const {
  double j = 0;
  for (const ClassJoules& w : windows) j += total_of(w);
  return j;
}

size_t PowerTrace::peak_window() const {
  size_t best = 0;
  for (size_t k = 1; k < windows.size(); ++k)
    if (watts(k) > watts(best)) best = k;
  return best;
}

namespace {

// Adds `joules` of class `c` spread uniformly over [a, b) (ns); an instant (b <= a) goes into
// the window holding a. Times past the last window's end count in the last window.
class Spreader {
 public:
  explicit Spreader(PowerTrace& p) : p_(p) {}
  void add(double a, double b, EnergyClass c, double joules) {
    if (joules == 0) return;
    const size_t k0 = index(a);
    if (b <= a) {
      p_.windows[k0][size_t(c)] += joules;
      return;
    }
    const size_t k1 = index(b);
    const double per_ns = joules / (b - a);
    for (size_t k = k0; k <= k1; ++k) {
      const double from = std::max(a, p_.start_ns(k));
      const double to = k + 1 == p_.windows.size() ? b : std::min(b, p_.start_ns(k + 1));
      if (to > from) p_.windows[k][size_t(c)] += per_ns * (to - from);
    }
  }

 private:
  size_t index(double t) const {
    if (t <= 0) return 0;
    return std::min(p_.windows.size() - 1, size_t(std::floor(t / p_.window_ns)));
  }
  PowerTrace& p_;
};

}  // namespace

PowerTrace power_trace(const SpanRecorder& spans, const std::vector<PowerSegment>& segments, double total_ns,
                       double window_ns) {
  const double windows = std::max(1.0, std::ceil(total_ns / window_ns));
  if (windows > double(kMaxPowerWindows)) {
    std::ostringstream m;
    m << "--power-window-ns = " << window_ns << " cuts the run's " << total_ns << " ns into " << windows
      << " windows (allowed: at most " << kMaxPowerWindows << " windows, --power-window-ns >= "
      << std::ceil(total_ns / double(kMaxPowerWindows)) << " for this run)";
    throw InputError(m.str());
  }
  PowerTrace p;
  p.window_ns = window_ns;
  p.total_ns = total_ns;
  p.windows.assign(size_t(windows), ClassJoules{});
  Spreader spread(p);

  // The shaped segment each span starts in (-1: none), and each activity's shares, looked up once.
  std::vector<double> starts;
  for (const PowerSegment& s : segments) starts.push_back(s.start_ns);
  auto segment_of = [&](double t) -> int {
    const auto it = std::upper_bound(starts.begin(), starts.end(), t);
    if (it == starts.begin()) return -1;
    const int i = int(it - starts.begin()) - 1;
    return segments[size_t(i)].by_spans ? i : -1;
  };
  std::vector<std::vector<SpanEnergyShare>> shares_of;
  std::vector<bool> known;
  auto shares = [&](int activity) -> const std::vector<SpanEnergyShare>& {
    if (size_t(activity) >= shares_of.size()) {
      shares_of.resize(size_t(activity) + 1);
      known.resize(size_t(activity) + 1, false);
    }
    if (!known[size_t(activity)]) {
      shares_of[size_t(activity)] = span_energy_shares(spans.name(activity));
      known[size_t(activity)] = true;
    }
    return shares_of[size_t(activity)];
  };
  auto weight = [](const Span& s, const SpanEnergyShare& sh) {
    return sh.by_bytes ? double(std::max<int64_t>(0, s.bytes)) : to_ns(s.end - s.start);
  };

  // Pass 1: each shaped segment's weight per class.
  std::vector<ClassJoules> weights(segments.size(), ClassJoules{});
  std::vector<int> seg_of(spans.spans().size(), -1);
  for (size_t i = 0; i < spans.spans().size(); ++i) {
    const Span& s = spans.spans()[i];
    const std::vector<SpanEnergyShare>& sh = shares(s.activity);
    if (sh.empty()) continue;
    seg_of[i] = segment_of(to_ns(s.start));
    if (seg_of[i] < 0) continue;
    for (const SpanEnergyShare& x : sh) weights[size_t(seg_of[i])][size_t(x.c)] += weight(s, x);
  }
  // Pass 2: each span's share, over the span.
  for (size_t i = 0; i < spans.spans().size(); ++i) {
    if (seg_of[i] < 0) continue;
    const Span& s = spans.spans()[i];
    const PowerSegment& seg = segments[size_t(seg_of[i])];
    for (const SpanEnergyShare& x : shares(s.activity)) {
      const double w = weight(s, x), sum = weights[size_t(seg_of[i])][size_t(x.c)];
      if (w > 0) spread.add(to_ns(s.start), to_ns(s.end), x.c, seg.joules[size_t(x.c)] * (w / sum));
    }
  }
  // Static power, and every class no span of the segment carries: uniform over the segment.
  for (size_t i = 0; i < segments.size(); ++i) {
    const PowerSegment& seg = segments[i];
    for (size_t c = 0; c < kEnergyClasses; ++c) {
      const bool shaped = seg.by_spans && !is_static(EnergyClass(c)) && weights[i][c] > 0;
      if (!shaped) spread.add(seg.start_ns, seg.start_ns + seg.ns, EnergyClass(c), seg.joules[c]);
    }
  }
  return p;
}

double auto_power_window_ns(double total_ns) {
  constexpr double kMaxWindows = 1000;
  for (double decade = 1;; decade *= 10)
    for (const double m : {1.0, 2.0, 5.0})
      if (m * decade * kMaxWindows >= total_ns) return m * decade;
}

PowerSummary power_summary(const PowerTrace& p) {
  PowerSummary s;
  const size_t k = p.peak_window();
  for (size_t c = 0; c < kEnergyClasses; ++c)
    s.peak_by_class_w[energy_class_name(EnergyClass(c))] = p.watts(k, EnergyClass(c));
  s.window_ns = p.window_ns;
  s.windows = p.windows.size();
  s.peak_w = p.watts(k);
  s.peak_window = k;
  s.peak_start_ns = p.start_ns(k);
  s.peak_end_ns = p.start_ns(k) + p.length_ns(k);
  s.total_j = p.total_j();
  s.mean_w = p.total_ns > 0 ? s.total_j / (p.total_ns * 1e-9) : 0.0;
  return s;
}

Json to_json(const PowerSummary& p) {
  Json j = {{"window_ns", p.window_ns}, {"windows", p.windows}, {"peak_w", p.peak_w},
            {"peak_window", {{"index", p.peak_window}, {"start_ns", p.peak_start_ns}, {"end_ns", p.peak_end_ns}}},
            {"peak_by_class_w", p.peak_by_class_w}, {"mean_w", p.mean_w}, {"total_j", p.total_j},
            {"note", "the energy of summary.energy per window of window_ns (the last one may be shorter): each "
                     "step's class energy shared among its spans by bytes or duration, static power uniform "
                     "(docs/energy.md, Power over time); power.csv has every window"}};
  if (p.cap) {
    const PowerCapReport& c = *p.cap;
    j["throttled_ns"] = c.throttled_ns;
    j["cap"] = {{"cap_w", c.cap_w}, {"clock_scale", c.clock_scale}, {"throttled_ns", c.throttled_ns},
                {"uncapped_ns", c.uncapped_ns}, {"uncapped_peak_w", c.uncapped_peak_w}, {"runs", c.runs},
                {"note", "the highest clock scale (PE clock, HBM and link bandwidth; within 1 %) whose power windows "
                         "all stay at or below cap_w (docs/energy.md, Power cap)"}};
  }
  return j;
}

void write_power_csv(std::ostream& os, const PowerTrace& p) {
  os << "window_start_ns,window_ns,power_w";
  for (size_t c = 0; c < kEnergyClasses; ++c) os << ',' << energy_class_name(EnergyClass(c)) << "_w";
  os << '\n';
  char buf[64];
  for (size_t k = 0; k < p.windows.size(); ++k) {
    std::snprintf(buf, sizeof buf, "%.0f,%.17g,%.9g", p.start_ns(k), p.length_ns(k), p.watts(k));
    os << buf;
    for (size_t c = 0; c < kEnergyClasses; ++c) {
      std::snprintf(buf, sizeof buf, ",%.9g", p.watts(k, EnergyClass(c)));
      os << buf;
    }
    os << '\n';
  }
}

}  // namespace ahbm::report
