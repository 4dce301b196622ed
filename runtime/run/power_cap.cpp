#include "runtime/run/power_cap.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "hw/common/base/error.h"

namespace ahbm {

namespace {

double peak_w(const RunOutput& r) { return r.power.watts(r.power.peak_window()); }

}  // namespace

RunOutput run_power_capped(const HwConfig& hw, const std::string& hw_file,
                           const std::function<RunOutput(const HwConfig&, double)>& run_at, double window_ns) {
  const double cap = hw.power_cap_w;
  RunOutput uncapped = run_at(hw, window_ns);
  const double window = uncapped.power.window_ns;
  const double static_w = uncapped.summary.energy.static_power_w;
  if (cap < static_w) throw InputError(hw_file + ": " + power_cap_below_static(cap, static_w));
  const double uncapped_ns = uncapped.sim.end_ns, uncapped_peak = peak_w(uncapped);
  int runs = 1;
  double best_f = 1;
  RunOutput best;
  bool found = uncapped_peak <= cap;
  if (found) {
    best = std::move(uncapped);
  } else {
    // The first guess: dynamic power scaled down to what the cap leaves over the static power.
    const double f_min = min_clock_scale(hw);
    double fail = 1, ok = 0;
    auto attempt = [&](double f) {
      RunOutput r = run_at(at_clock_scale(hw, f), window);
      ++runs;
      if (peak_w(r) <= cap) {
        ok = f;
        if (!found || f > best_f) best = std::move(r), best_f = f;
        found = true;
      } else {
        fail = std::min(fail, f);
      }
    };
    attempt(std::clamp((cap - static_w) / (uncapped_peak - static_w), f_min, 1.0));
    if (!found && fail > f_min) attempt(f_min);
    if (!found) {
      std::ostringstream s;
      s << hw_file << ": power_cap_w (the chip's power cap) = " << cap << " W cannot be met: at the lowest clock scale " << f_min
        << " the peak power is still above it (static " << static_w << " W; uncapped peak " << uncapped_peak
        << " W; the NoC and the host link are not scaled)";
      throw InputError(s.str());
    }
    // Bisection (geometric) between the highest scale that met the cap and the lowest that did not.
    while (fail / ok > 1.01) attempt(std::sqrt(ok * fail));
  }
  RunOutput& r = best;
  const double throttled = r.sim.end_ns - uncapped_ns;
  r.summary.config.hw = to_json(hw);  // the config as given; the scale is in power.cap
  r.summary.power.cap = report::PowerCapReport{cap, best_f, throttled, uncapped_ns, uncapped_peak, runs};
  return std::move(r);
}

}  // namespace ahbm
