#pragma once
// Reliability machinery of one simulation (docs/reliability.md):
//  - the wait registry (hw/common/sim/wait_registry.h): each module says, on demand, what it is
//    waiting for;
//  - the numeric guard (hw/common/observe/numeric_guard.h): the first NaN/Inf in the datapath;
//  - run_with_watchdog: runs the kernel in slices of simulated time and tells waiting from
//    stalling. Progress is anything a module completes (a span, an O tile at the host).
//      waiting:  work is unfinished and an event of the model is scheduled (a long DMA burst, a
//                slow GEMM): never a stall, however long;
//      deadlock: work is unfinished and no event is pending (SimStall);
//      livelock: a whole window has passed since the last progress and processes then keep
//                waking, at kLivelockWakeups distinct simulated times in a row, without any of
//                them progressing (SimStall);
//      too long: the next event lies beyond the longest run simulated time can hold
//                (hw/common/base/timing.h, max_run_ns): InputError naming the slow parameters.
#include <cstdint>
#include <functional>
#include <string>

#include <systemc>

#include "hw/common/observe/numeric_guard.h"
#include "hw/common/sim/wait_registry.h"

namespace ahbm {

// The largest watchdog window, in simulated ns (about 11.6 days); windows are checked against
// [0, kMaxWatchdogNs] (0 = no livelock detection, internal callers only; the CLI takes >= 1).
constexpr double kMaxWatchdogNs = 1e15;
// Distinct simulated times at which processes run without progress, once a window has passed
// since the last progress, that make a livelock. A legitimate wait ends in progress within a
// few (the completion, the next activity it starts); a polling loop reaches it in 1000 polls.
constexpr uint64_t kLivelockWakeups = 1000;

struct WatchdogSetup {
  // Simulated ns after the last progress from which processes waking without progress count
  // towards a livelock; 0 disables livelock detection (deadlocks are always detected).
  double window_ns = 1e6;
  std::function<bool()> done;              // all work finished
  std::function<uint64_t()> progress;      // grows whenever any module completes something
  // Optional: the simulated time of the latest progress (<= now). Without it, progress counts
  // from when run_with_watchdog sees it (the end of a slice), which detects livelocks later.
  std::function<sc_core::sc_time()> progress_at;
  std::function<std::string()> status;     // one line: how far the run got
  // Optional: what makes the run this long (the slow hardware parameters), for the too-long error.
  std::function<std::string()> too_long_hint;
  const WaitRegistry* waits = nullptr;
  const NumericGuard* guard = nullptr;
  // The run's start: reported times count from it, and the run may last max_run_ns() from it.
  // Below 2^62 time units (the Simulator starts a new chip rather than go beyond).
  sc_core::sc_time epoch = sc_core::SC_ZERO_TIME;
  // Optional: called after every slice of the run (progress reports); `true` on the last call.
  // Slices are then sized to about 50 ms of wall time; results do not depend on them.
  std::function<void(bool done)> on_slice;
};

// Throws InputError for a window outside [0, kMaxWatchdogNs] (NaN included); `what` names it.
void check_watchdog_window(double window_ns, const std::string& what);

// Runs the simulation until `done()`. Throws NumericFault when the guard tripped, SimStall with
// the wait report on a deadlock or livelock, InputError when the run would last longer than
// simulated time can represent.
void run_with_watchdog(const WatchdogSetup& w);

}  // namespace ahbm
