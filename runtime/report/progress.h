#pragma once
// Progress lines for long runs, on a terminal only: "phase fanout | 45.2 us simulated | 37% of
// planned work", rewritten in place (\r) at most every 0.2 s of wall time, cleared at the end.
#include <functional>
#include <ostream>

#include "hw/chip/simulate.h"

namespace ahbm::report {

// A SimOptions::progress callback printing to `os`, or an empty function when `fd` (the file
// descriptor behind `os`) is not a terminal.
std::function<void(const SimProgress&)> terminal_progress(std::ostream& os, int fd);

}  // namespace ahbm::report
