#pragma once
// Reliability machinery of one simulation (docs/reliability.md):
//  - the wait registry (hw/common/wait_registry.h): each module says, on demand, what it is
//    waiting for;
//  - the numeric guard (hw/common/numeric_guard.h): the first NaN/Inf in the datapath;
//  - run_with_watchdog: runs the kernel in windows of simulated time and stops with SimStall
//    when time stops advancing with work pending (deadlock: no event left) or advances for a
//    whole window without any progress (livelock).
#include <cstdint>
#include <functional>
#include <string>

#include <systemc>

#include "hw/common/numeric_guard.h"
#include "hw/common/wait_registry.h"

namespace ahbm {

struct WatchdogSetup {
  // Simulated time without progress after which a run that is still busy counts as a livelock;
  // 0 disables livelock detection (a deadlock is always detected).
  double window_ns = 1e6;
  std::function<bool()> done;              // all work finished
  std::function<uint64_t()> progress;      // grows whenever any module completes something
  std::function<std::string()> status;     // one line: how far the run got
  const WaitRegistry* waits = nullptr;
  const NumericGuard* guard = nullptr;
  sc_core::sc_time epoch = sc_core::SC_ZERO_TIME;  // the run's start: reported times count from it
  // Optional: called after every slice of the run (progress reports); `true` on the last call.
  // Slices are then sized to about 50 ms of wall time; results do not depend on them.
  std::function<void(bool done)> on_slice;
};

// Runs the simulation until `done()`. Throws NumericFault when the guard tripped, SimStall with
// the wait report on a deadlock or livelock.
void run_with_watchdog(const WatchdogSetup& w);

}  // namespace ahbm
