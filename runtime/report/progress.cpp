#include "runtime/report/progress.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include <unistd.h>

#include "hw/chip/simulate.h"

namespace ahbm::report {

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

std::string time_text(double ns) {
  static const char* const units[] = {"ns", "us", "ms", "s"};
  if (!std::isfinite(ns)) return std::to_string(ns) + " ns";
  double v = ns;
  int u = 0;
  // The unit chosen after rounding to 3 significant digits: 999.7 ns is "1.00 us".
  while (u < 3 && std::fabs(v) >= 999.5) v /= 1000.0, ++u;
  char buf[48];
  const double a = std::fabs(v);
  if (a == 0 || a >= 99.95)
    std::snprintf(buf, sizeof buf, "%.0f %s", v, units[u]);
  else if (a >= 9.995)
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  else
    std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
  return buf;
}

namespace {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

constexpr double kRewriteSeconds = 0.2;

}  // namespace

struct ProgressLine::State {
  std::ostream* os = nullptr;
  Verbosity v = Verbosity::info;
  bool live = false;
  std::function<double()> wall;
  double start = -1, last = -1e9;
  bool shown = false;
  long mark = 0;  // -v: the last item (or tenth) a line was printed for

  ~State() {
    if (shown) *os << "\r\033[K" << std::flush;
  }
  // -v lines: one per item up to 50 items, else one per tenth.
  static long mark_of(double done, double total) {
    if (total <= 0) return 0;
    return total <= 50 ? long(std::floor(done)) : long(std::floor(done * 10.0 / total));
  }
  void erase() {
    if (shown) *os << "\r\033[K";
    shown = false;
  }
};

ProgressLine::ProgressLine(std::ostream& os, Verbosity v, bool live, std::function<double()> wall_seconds) {
  if (v == Verbosity::quiet || (!live && v != Verbosity::debug)) return;
  st_ = std::make_shared<State>();
  st_->os = &os;
  st_->v = v;
  st_->live = live;
  st_->wall = std::move(wall_seconds);
}

ProgressLine ProgressLine::on(std::ostream& os, int fd, Verbosity v) {
  return ProgressLine(os, v, isatty(fd) == 1, steady_seconds);
}

bool ProgressLine::due(double done, double total) const {
  if (!st_) return false;
  if (st_->v == Verbosity::debug && done > 0 && State::mark_of(done, total) > st_->mark) return true;
  return st_->live && st_->wall() - st_->last >= kRewriteSeconds;
}

void ProgressLine::update(double done, double total, const std::string& text) {
  if (!st_) return;
  State& s = *st_;
  const double now = s.wall();
  if (s.start < 0) s.start = now;
  const double share = total > 0 ? std::min(1.0, done / total) : 0.0;
  const double elapsed = now - s.start;
  char pct[16];
  std::snprintf(pct, sizeof pct, " | %.0f%%", 100.0 * share);
  bool noted = false;
  const long mark = State::mark_of(done, total);
  if (s.v == Verbosity::debug && done > 0 && mark > s.mark) {
    s.mark = mark;
    s.erase();
    *s.os << text << pct << " | " << duration_text(elapsed) << " elapsed\n";
    noted = true;
  }
  if (!s.live || (!noted && now - s.last < kRewriteSeconds)) {
    if (noted) s.os->flush();
    return;
  }
  s.last = now;
  s.shown = true;
  const std::string eta =
      share > 0.01 && share < 1.0 && elapsed > 0 ? " | ETA " + duration_text(elapsed * (1.0 - share) / share) : "";
  *s.os << "\r\033[K" << text << pct << eta << std::flush;
}

void ProgressLine::note(const std::string& line) {
  if (!st_) return;
  st_->erase();
  *st_->os << line << "\n" << std::flush;
  st_->last = -1e9;  // the live line comes back at the next update
}

void ProgressLine::show(const std::string& text, bool now) {
  if (!st_ || !st_->live) return;
  const double t = st_->wall();
  if (!now && t - st_->last < kRewriteSeconds) return;
  st_->last = t;
  st_->shown = true;
  *st_->os << "\r\033[K" << text << std::flush;
}

void ProgressLine::clear() {
  if (!st_ || !st_->shown) return;
  st_->erase();
  st_->os->flush();
}

std::function<void(const SimProgress&)> progress_printer(std::ostream& os, std::function<double()> wall_seconds) {
  struct State {
    ProgressLine line;
    double start = -1;
  };
  auto st = std::make_shared<State>();
  st->line = ProgressLine(os, Verbosity::info, true, wall_seconds);
  return [st, wall_seconds = std::move(wall_seconds)](const SimProgress& p) {
    const double now = wall_seconds();
    if (st->start < 0) st->start = now;
    const bool last_step = p.steps == 0 || p.step >= p.steps;
    if (p.done) {
      if (last_step) st->line.clear();  // leave the terminal as it was
      return;
    }
    if (!st->line.due(0, 0)) return;
    char buf[256];
    if (p.steps == 0) {
      std::snprintf(buf, sizeof buf, "phase %s | %.1f us simulated | %.0f%% of planned work", p.phase.c_str(),
                    p.sim_ns / 1000.0, 100.0 * p.fraction);
    } else if (p.step > p.steps) {
      std::snprintf(buf, sizeof buf, "step %d %s | %.1f us simulated | joining", p.step, p.step_label.c_str(),
                    p.sim_ns / 1000.0);
    } else {
      const double run = (double(p.step - 1) + p.fraction) / double(p.steps);
      const double elapsed = now - st->start;
      const std::string eta =
          run > 0.01 && elapsed > 0 ? " | ETA " + duration_text(elapsed * (1.0 - run) / run) : std::string();
      std::snprintf(buf, sizeof buf, "step %d/%d %s | %.1f us simulated | %.0f%% of the run%s", p.step, p.steps,
                    p.step_label.c_str(), p.sim_ns / 1000.0, 100.0 * run, eta.c_str());
    }
    st->line.show(buf, true);
  };
}

std::function<void(const SimProgress&)> terminal_progress(std::ostream& os, int fd, Verbosity v) {
  if (v == Verbosity::quiet || !isatty(fd)) return {};
  return progress_printer(os, steady_seconds);
}

}  // namespace ahbm::report
