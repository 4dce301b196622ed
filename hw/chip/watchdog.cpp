#include "hw/chip/watchdog.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "hw/common/error.h"
#include "hw/common/sim_context.h"
#include "hw/common/span_recorder.h"
#include "hw/common/timing.h"


namespace ahbm {

namespace {


// The current simulated time in ns since `epoch` (the run's start), for messages.
std::string now_ns(const sc_core::sc_time& epoch) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", to_ns(sc_core::sc_time_stamp() - epoch));
  return buf;
}

}  // namespace

std::string WaitNote::str() const {
  if (!what) return "";
  return tile >= 0 ? std::string(what) + " (tile " + std::to_string(tile) + ")" : std::string(what);
}

void WaitRegistry::add(std::string module, std::function<std::string()> describe) {
  entries_.emplace_back(std::move(module), std::move(describe));
}

std::string id_list(std::vector<int> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::string out;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    out += (out.empty() ? "" : ", ") + std::to_string(ids[i]) + (j > i ? "-" + std::to_string(ids[j]) : "");
    i = j + 1;
  }
  return out;
}

std::vector<std::string> WaitRegistry::report() const {
  // 32 PEs waiting for the same Q tile make one line, not 32.
  std::vector<std::pair<std::string, std::string>> lines;  // modules, description
  for (const auto& [module, describe] : entries_) {
    const std::string d = describe();
    if (d.empty()) continue;
    auto it = std::find_if(lines.begin(), lines.end(), [&](const auto& l) { return l.second == d; });
    if (it == lines.end()) lines.emplace_back(module, d);
    else it->first += ", " + module;
  }
  std::vector<std::string> out;
  for (const auto& [modules, d] : lines) out.push_back(modules + ": " + d);
  return out;
}

void NumericGuard::record(const char* part, long row, long col, float value, int component, int tile) {
  if (tripped()) return;  // the first appearance is the one worth reporting
  std::ostringstream os;
  os << (std::isnan(value) ? "NaN" : value > 0 ? "+Inf" : "-Inf") << " in " << part << " at row " << row;
  if (col >= 0) os << ", column " << col;
  os << " of tile " << tile << " in " << names_.name(component) << " at " << now_ns(epoch_) << " ns";
  fault_ = os.str();
}

bool NumericGuard::check(const MatrixRM& o, int component, int tile) {
  if (o.allFinite()) return true;
  for (long r = 0; r < o.rows(); ++r)
    for (long c = 0; c < o.cols(); ++c)
      if (!std::isfinite(o(r, c))) {
        record("o", r, c, o(r, c), component, tile);
        return false;
      }
  return false;
}

bool NumericGuard::check(const AttnState& s, int component, int tile) {
  for (long r = 0; r < s.m.size(); ++r)
    if (std::isnan(s.m[r]) || s.m[r] == std::numeric_limits<float>::infinity()) {
      record("softmax state m", r, -1, s.m[r], component, tile);
      return false;
    }
  if (!s.l.allFinite())
    for (long r = 0; r < s.l.size(); ++r)
      if (!std::isfinite(s.l[r])) {
        record("softmax state l", r, -1, s.l[r], component, tile);
        return false;
      }
  return check(s.o, component, tile);
}

namespace {

[[noreturn]] void stall(const WatchdogSetup& w, const std::string& kind) {
  std::ostringstream os;
  os << "simulation stalled at " << now_ns(w.epoch) << " ns (" << kind
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
