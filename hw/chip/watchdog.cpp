#include "hw/chip/watchdog.h"

#include <algorithm>
#include <chrono>
#include <sstream>

#include "hw/common/error.h"
#include "hw/common/sim_context.h"

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

}  // namespace

void run_with_watchdog(const WatchdogSetup& w) {
  // The kernel runs in slices: to the end of the current watchdog window, and shorter (about
  // 50 ms of wall time each) when progress is reported. A slice always reaches the next pending
  // event, so every sc_start call advances the simulation. Starting and stopping the kernel
  // between slices changes no event order: results are those of one sc_start() run.
  using sc_core::sc_time;
  const bool windows = w.window_ns > 0;
  const sc_time window(w.window_ns, sc_core::SC_NS);
  sc_time step(1000, sc_core::SC_NS);
  sc_core::sc_start(sc_core::SC_ZERO_TIME);  // elaborate and run time 0: events become pending
  resync_sanitizer_stack();
  uint64_t window_progress = w.progress();
  auto window_deltas = sc_core::sc_delta_count();
  sc_time window_end = sc_core::sc_time_stamp() + window;
  for (;;) {
    if (w.guard->tripped()) throw NumericFault("non-finite value in the datapath: " + w.guard->fault());
    const bool done = w.done();
    if (w.on_slice) w.on_slice(done);
    if (done) return;
    if (!sc_core::sc_pending_activity()) stall(w, "deadlock: no event is pending");
    const sc_time now = sc_core::sc_time_stamp();
    const sc_time next = now + sc_core::sc_time_to_pending_activity();
    if (windows && next >= window_end) {
      // The window is over. A long legitimate wait (one slow transfer) runs no process in it;
      // a livelock keeps processes waking without any of them completing anything.
      if (w.progress() == window_progress && sc_core::sc_delta_count() != window_deltas) {
        std::ostringstream os;
        os << "livelock: processes kept running for " << w.window_ns << " ns of simulated time without progress";
        stall(w, os.str());
      }
      window_progress = w.progress();
      window_deltas = sc_core::sc_delta_count();
      window_end = next + window;
    }
    if (!windows && !w.on_slice) {
      sc_core::sc_start();
    } else {
      sc_time end = windows ? window_end : sc_core::sc_max_time();
      if (w.on_slice) end = std::min(end, std::max(now + step, next + sc_core::sc_get_time_resolution()));
      const auto t0 = std::chrono::steady_clock::now();
      sc_core::sc_start(end - now, sc_core::SC_EXIT_ON_STARVATION);
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      step = step * std::clamp(0.05 / std::max(wall, 1e-4), 0.5, 4.0);
    }
    resync_sanitizer_stack();
  }
}

}  // namespace ahbm
