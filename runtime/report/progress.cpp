#include "runtime/report/progress.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include <unistd.h>

namespace ahbm::report {

namespace {

std::string duration_text(double seconds) {
  char buf[48];
  const long s = std::lround(seconds);
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%ld s", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%ld min %02ld s", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld h %02ld min", s / 3600, (s % 3600) / 60);
  return buf;
}

}  // namespace

std::function<void(const SimProgress&)> progress_printer(std::ostream& os, std::function<double()> wall_seconds) {
  struct State {
    double start = -1, last = -1e9;
    bool shown = false;
  };
  auto st = std::make_shared<State>();
  return [&os, st, wall_seconds = std::move(wall_seconds)](const SimProgress& p) {
    const double now = wall_seconds();
    if (st->start < 0) st->start = now;
    const bool last_step = p.steps == 0 || p.step >= p.steps;
    if (p.done) {
      if (last_step && st->shown) {
        os << "\r\033[K" << std::flush;  // leave the terminal as it was
        st->shown = false;
      }
      return;
    }
    if (now - st->last < 0.2) return;
    st->last = now;
    st->shown = true;
    char buf[256];
    if (p.steps == 0) {
      std::snprintf(buf, sizeof buf, "\r\033[Kphase %s | %.1f us simulated | %.0f%% of planned work", p.phase.c_str(),
                    p.sim_ns / 1000.0, 100.0 * p.fraction);
    } else if (p.step > p.steps) {
      std::snprintf(buf, sizeof buf, "\r\033[Kstep %d %s | %.1f us simulated | joining", p.step, p.step_label.c_str(),
                    p.sim_ns / 1000.0);
    } else {
      const double run = (double(p.step - 1) + p.fraction) / double(p.steps);
      const double elapsed = now - st->start;
      const std::string eta =
          run > 0.01 && elapsed > 0 ? " | ETA " + duration_text(elapsed * (1.0 - run) / run) : std::string();
      std::snprintf(buf, sizeof buf, "\r\033[Kstep %d/%d %s | %.1f us simulated | %.0f%% of the run%s", p.step, p.steps,
                    p.step_label.c_str(), p.sim_ns / 1000.0, 100.0 * run, eta.c_str());
    }
    os << buf << std::flush;
  };
}

std::function<void(const SimProgress&)> terminal_progress(std::ostream& os, int fd) {
  if (!isatty(fd)) return {};
  using Clock = std::chrono::steady_clock;
  return progress_printer(os, [] { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); });
}

}  // namespace ahbm::report
