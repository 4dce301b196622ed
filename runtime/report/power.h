#pragma once
// Power over time (docs/energy.md, "Power over time"): the run's energy, per class and for the
// chip, in windows of `window_ns`. The joules are the step readings summary.json's `energy`
// adds up (energy_json.h step_energy: hw/chip/energy.h's costs times the activity counters);
// the spans only say when they were spent. Within a step, each class's energy is shared among
// the step's spans of the activities that spend it (hw/chip/energy.h span_energy_shares), in
// proportion to their bytes or duration, and each span's share is spread uniformly over the
// span; static power and activity with no span of its class in the step are spread uniformly
// over the step. So the windows add up to summary.json's energy total (tested), and the work
// is linear in spans plus windows.
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "hw/chip/energy.h"
#include "hw/common/base/json_reader.h"
#include "hw/common/observe/span_recorder.h"
#include "runtime/step/step_record.h"

namespace ahbm::report {

// One stretch of the run's timeline and the energy spent in it (a step, or time between steps).
struct PowerSegment {
  double start_ns = 0, ns = 0;
  ClassJoules joules{};
  // The dynamic classes follow the spans that start inside the segment; false: uniform (a
  // whole model's step, whose layers beyond the first have no hardware spans of their own; a
  // host-side wait; time between steps).
  bool by_spans = false;
};

// The segments of a run: each step with step_energy(), and timeline time outside every step at
// static power. `chip` is the run's merged statistics tree.
std::vector<PowerSegment> power_segments(const std::vector<StepRecord>& steps, const StatsNode& chip,
                                         const HwConfig& hw, DType t, double total_ns);

struct PowerTrace {
  double window_ns = 0, total_ns = 0;
  // J per class in window k = [k·window_ns, min((k+1)·window_ns, total_ns)).
  std::vector<ClassJoules> windows;

  double start_ns(size_t k) const { return double(k) * window_ns; }
  double length_ns(size_t k) const;
  double watts(size_t k) const;  // the chip's: every class
  double watts(size_t k, EnergyClass c) const;
  double total_j() const;
  size_t peak_window() const;  // the first window of the highest chip power
};

// At most this many windows (96 bytes each): a finer --power-window-ns is refused.
inline constexpr size_t kMaxPowerWindows = 1000000;

// The windows of `segments` over [0, total_ns), with the spans of `spans` (the run's timeline,
// every span) placing each shaped segment's dynamic energy. Throws InputError naming
// --power-window-ns when that makes more than kMaxPowerWindows windows.
PowerTrace power_trace(const SpanRecorder& spans, const std::vector<PowerSegment>& segments, double total_ns,
                       double window_ns);

// The default window: the smallest of 1, 2, 5 × 10^k ns that cuts the run into at most 1000
// windows (a 68 µs run: 100 ns, 680 windows).
double auto_power_window_ns(double total_ns);

// What a power cap did (runtime/run/power_cap.h, docs/energy.md "Power cap").
struct PowerCapReport {
  double cap_w = 0, clock_scale = 1;
  double throttled_ns = 0;  // the capped run's time beyond the uncapped run's
  double uncapped_ns = 0, uncapped_peak_w = 0;
  int runs = 0;  // runs simulated to find the clock scale
};

// summary.json "power": the trace's window, its highest window (the chip's power and each
// class's), its mean power and energy; with a power cap what the cap did.
struct PowerSummary {
  double window_ns = 0, mean_w = 0, total_j = 0;
  size_t windows = 0, peak_window = 0;  // how many; the peak's index
  double peak_w = 0, peak_start_ns = 0, peak_end_ns = 0;
  std::map<std::string, double> peak_by_class_w;
  std::optional<PowerCapReport> cap;
};
PowerSummary power_summary(const PowerTrace& p);
Json to_json(const PowerSummary& p);

// power.csv: window_start_ns, window_ns, power_w, then W per class (EnergyClass order).
void write_power_csv(std::ostream& os, const PowerTrace& p);

}  // namespace ahbm::report
