#include "hw/chip/watchdog.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>

#include "hw/common/base/error.h"
#include "hw/common/sim/sim_context.h"
#include "hw/common/base/timing.h"

namespace ahbm {

namespace {

[[noreturn]] void stall(const WatchdogSetup& w, const std::string& kind) {
  std::ostringstream os;
  os << "simulation stalled at " << ns_since(w.epoch) << " ns (" << kind
     << "): " << w.status() << "\nwaiting:";
  const std::vector<std::string> lines = w.waits->report();
  for (const auto& l : lines) os << "\n  " << l;
  if (lines.empty()) os << " (no module reports a wait)";
  throw SimStall(os.str());
}

[[noreturn]] void too_long(const WatchdogSetup& w, const sc_core::sc_time& next) {
  std::ostringstream os;
  os << "the run would last longer than simulated time can represent: its next event is at "
     << to_ns(next - w.epoch) << " ns, beyond the limit of " << max_run_ns() << " ns (2^62 ps) after its start, with "
     << w.status();
  const std::string hint = w.too_long_hint ? w.too_long_hint() : std::string();
  os << "; the hardware is too slow for this scenario" << (hint.empty() ? std::string() : ": " + hint);
  throw InputError(os.str());
}

}  // namespace

void check_watchdog_window(double window_ns, const std::string& what) {
  if (!(window_ns >= 0 && window_ns <= kMaxWatchdogNs)) {
    std::ostringstream os;
    os << what << ": " << window_ns << " ns is not a watchdog window (allowed: [0, " << kMaxWatchdogNs << "] ns)";
    throw InputError(os.str());
  }
}

void run_with_watchdog(const WatchdogSetup& w) {
  // The kernel runs in slices: to the end of the window that follows the last progress, to the
  // next simulated time only once that window is over (to count wake-ups without progress),
  // and shorter (about 50 ms of wall time each) when progress is reported. A slice always
  // reaches the next pending event, so every sc_start call advances the simulation, and none
  // goes past the run's time limit. Starting and stopping the kernel between slices changes no
  // event order: results are those of one sc_start() run.
  using sc_core::sc_time;
  check_watchdog_window(w.window_ns, "watchdog window");
  const bool windows = w.window_ns > 0;
  const sc_time window(w.window_ns, sc_core::SC_NS);
  const sc_time resolution = sc_core::sc_get_time_resolution();
  const sc_time limit_end = w.epoch + sc_time::from_value(kMaxRunUnits);
  sc_time step(1000, sc_core::SC_NS);
  sc_core::sc_start(sc_core::SC_ZERO_TIME);  // elaborate and run time 0: events become pending
  resync_sanitizer_stack();
  uint64_t seen_progress = w.progress();
  sc_time progress_at = sc_core::sc_time_stamp();
  uint64_t wakeups = 0;  // simulated times run without progress once the window was over
  for (;;) {
    if (w.guard->tripped()) throw NumericFault("non-finite value in the datapath: " + w.guard->fault());
    const bool done = w.done();
    if (w.on_slice) w.on_slice(done);
    if (done) return;
    if (!sc_core::sc_pending_activity()) stall(w, "deadlock: no event is pending");
    const sc_time now = sc_core::sc_time_stamp();
    const sc_time next = now + sc_core::sc_time_to_pending_activity();
    if (w.progress() != seen_progress) {
      seen_progress = w.progress();
      progress_at = w.progress_at ? std::clamp(w.progress_at(), progress_at, now) : now;
      wakeups = 0;
    }
    if (next >= limit_end) too_long(w, next);
    sc_time end = limit_end;
    if (windows) {
      if (next >= progress_at + window) {
        // A window without progress is over. Waiting (a slow transfer, a long GEMM) is fine:
        // its completion is progress. Processes that keep waking without any of them
        // completing anything are a livelock.
        if (++wakeups > kLivelockWakeups) {
          std::ostringstream os;
          os << "livelock: processes kept running for " << w.window_ns
             << " ns of simulated time without progress (" << kLivelockWakeups
             << " wake-ups after the window, the last progress at " << to_ns(progress_at - w.epoch) << " ns)";
          stall(w, os.str());
        }
        end = next + resolution;  // exactly the processes of the next simulated time
      } else {
        end = std::min(end, progress_at + window);
      }
    }
    if (w.on_slice) end = std::min(end, std::max(now + step, next + resolution));
    const auto t0 = std::chrono::steady_clock::now();
    sc_core::sc_start(end - now, sc_core::SC_EXIT_ON_STARVATION);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    step = step * std::clamp(0.05 / std::max(wall, 1e-4), 0.5, 4.0);
    resync_sanitizer_stack();
  }
}

}  // namespace ahbm
