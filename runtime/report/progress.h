#pragma once
// Progress lines for long runs, on a terminal only, rewritten in place (\r) at most every 0.2 s
// of wall time and cleared at the end:
//   "step 12/122 decode[10] | 45.2 us simulated | 9% of the run | ETA 1 min 05 s"
// The run's share is (steps done + this step's share of its planned MACs) / planned steps; the
// ETA extrapolates the wall time so far. "us simulated" is the run's simulated time so far (the
// StepRunner adds the steps before this one to the step's own simulation time). A join strategy's steps, decided as it goes, come after
// the planned ones: "step 125 join.reduce_prefill | ... | joining".
#include <functional>
#include <ostream>

#include "hw/chip/simulate.h"

namespace ahbm::report {

// A SimOptions::progress callback printing to `os`, or an empty function when `fd` (the file
// descriptor behind `os`) is not a terminal.
std::function<void(const SimProgress&)> terminal_progress(std::ostream& os, int fd);

// The printer itself, with the wall clock (seconds, monotonic) given: what terminal_progress
// uses with the steady clock, and tests with their own.
std::function<void(const SimProgress&)> progress_printer(std::ostream& os, std::function<double()> wall_seconds);

}  // namespace ahbm::report
