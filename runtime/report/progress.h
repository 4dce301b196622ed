#pragma once
// Progress on a terminal for every long command (ahbm-sim run, serve, policy-eval, noc-bench,
// hbm-bench; docs/outputs.md, "Progress"): one line rewritten in place (\r) at most every 0.2 s
// of wall time, cleared at the end, printed only when the stream is a terminal and the command
// line did not ask for quiet (-q). With -v (Verbosity::debug) a plain line per finished item (or
// per tenth of the items when there are more than 50) goes to the stream as well, terminal or not.
//   run:   "step 12/122 decode[10] | 45.2 us simulated | 9% of the run | ETA 1 min 05 s"
//   serve: "serve: 312/1000 workflows | 1.23 s simulated | 31% | ETA 1 min 05 s"
// run's line: the run's share is (steps done + this step's share of its planned MACs) / planned
// steps; the ETA extrapolates the wall time so far. "us simulated" is the run's simulated time so
// far (the StepRunner adds the steps before this one to the step's own simulation time). A join
// strategy's steps, decided as it goes, come after the planned ones:
// "step 125 join.reduce_prefill | ... | joining".
#include <functional>
#include <memory>
#include <ostream>
#include <string>

namespace ahbm {
struct SimProgress;  // hw/chip/simulate.h
}

namespace ahbm::report {

// How much a command prints besides its results and errors: quiet (-q: no progress, no notes),
// info (the default: progress on a terminal), debug (-v: also a line per finished item).
enum class Verbosity { quiet = 0, info = 1, debug = 2 };

// Wall-clock durations for people (ETAs, elapsed): "5 s", "1 min 05 s", "2 h 03 min".
std::string duration_text(double seconds);
// A simulated (or any) time in ns in a readable unit, 3 significant digits: "812 ns", "45.2 us",
// "2.17 ms", "25.5 ms", "1.49 s"; from 1000 s on, whole seconds ("1520 s").
std::string time_text(double ns);

// A counted progress line: "TEXT | 31% | ETA 1 min 05 s" (the share is done / total, the ETA
// extrapolates the wall time since the first update). Copies share one line; it is cleared when
// the last copy goes (an error's message then starts on a clean line) or by clear(). A
// default-constructed one prints nothing.
class ProgressLine {
 public:
  ProgressLine() = default;
  // Live line and -v lines on `os` as `v` says, `live` telling whether `os` is a terminal; the
  // wall clock (seconds, monotonic) given: tests use their own.
  ProgressLine(std::ostream& os, Verbosity v, bool live, std::function<double()> wall_seconds);
  // On `os` (file descriptor `fd`), live only when `fd` is a terminal; the steady clock.
  static ProgressLine on(std::ostream& os, int fd, Verbosity v);

  bool active() const { return st_ != nullptr; }
  // Whether update(done, total, ...) would print now: callers whose text costs something ask
  // first (a call per simulated chunk or step boundary).
  bool due(double done, double total) const;
  // TEXT is the caller's own ("serve: 312/1000 workflows | 1.23 s simulated").
  void update(double done, double total, const std::string& text);
  // A finished line of text above the live one (or alone when not live).
  void note(const std::string& line);
  // The live line rewritten with `text` as is (no share, no ETA), at most every 0.2 s; `now`
  // forces it. What run's step printer uses.
  void show(const std::string& text, bool now = false);
  void clear();

 private:
  struct State;
  std::shared_ptr<State> st_;
};

// A SimOptions::progress callback printing to `os`, or an empty function when `fd` (the file
// descriptor behind `os`) is not a terminal or `v` is quiet.
std::function<void(const SimProgress&)> terminal_progress(std::ostream& os, int fd, Verbosity v = Verbosity::info);

// The printer itself, with the wall clock (seconds, monotonic) given: what terminal_progress
// uses with the steady clock, and tests with their own.
std::function<void(const SimProgress&)> progress_printer(std::ostream& os, std::function<double()> wall_seconds);

}  // namespace ahbm::report
