#include "runtime/report/progress.h"

#include <chrono>
#include <cstdio>
#include <memory>

#include <unistd.h>

namespace ahbm::report {

std::function<void(const SimProgress&)> terminal_progress(std::ostream& os, int fd) {
  if (!isatty(fd)) return {};
  using Clock = std::chrono::steady_clock;
  auto last = std::make_shared<Clock::time_point>();  // epoch: the first call prints at once
  auto shown = std::make_shared<bool>(false);
  return [&os, last, shown](const SimProgress& p) {
    const auto now = Clock::now();
    if (p.done) {
      if (*shown) os << "\r\033[K" << std::flush;  // leave the terminal as it was
      return;
    }
    if (now - *last < std::chrono::milliseconds(200)) return;
    *last = now;
    *shown = true;
    char buf[160];
    std::snprintf(buf, sizeof buf, "\r\033[Kphase %s | %.1f us simulated | %.0f%% of planned work", p.phase.c_str(),
                  p.sim_ns / 1000.0, 100.0 * p.fraction);
    os << buf << std::flush;
  };
}

}  // namespace ahbm::report
