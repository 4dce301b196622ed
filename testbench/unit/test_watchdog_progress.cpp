// The watchdog tells waiting from stalling (hw/chip/watchdog.h), on a module testbench of its
// own: a worker that completes a step after each long wait (progress), a poller that keeps
// waking without completing anything, a sleeper waiting for an event nobody notifies. A wait
// far longer than the window is never a stall, even after other processes ran in the window;
// polling without progress is a livelock a window plus kLivelockWakeups wake-ups after the last
// progress; nothing pending is a deadlock; a run beyond the range of simulated time is an
// InputError; invalid windows are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "hw/chip/simulate.h"
#include "hw/chip/watchdog.h"
#include "hw/common/sim/sim_context.h"
#include "hw/common/observe/span_recorder.h"
#include "hw/common/base/timing.h"

using namespace ahbm;
using sc_core::sc_time;
using sc_core::SC_NS;

namespace {

struct Bench : sc_core::sc_module {
  // The worker: `steps` waits of `work` each, one progress after each.
  sc_time work;
  int steps = 0;
  uint64_t done_steps = 0;
  sc_time last_progress = sc_core::SC_ZERO_TIME;
  // The poller: wakes every `poll` once the worker is done with `poll_after` steps (0: never polls).
  sc_time poll;
  int poll_after = -1;
  // The helper: one short activity at 10 ns, then sleeps for good (activity in the first window).
  bool helper = false;
  sc_core::sc_event never;

  SC_HAS_PROCESS(Bench);
  explicit Bench(sc_core::sc_module_name n) : sc_core::sc_module(n) {
    SC_THREAD(worker);
    SC_THREAD(poller);
    SC_THREAD(sleeper);
  }
  void worker() {
    for (int i = 0; i < steps; ++i) {
      wait(work);
      ++done_steps;
      last_progress = sc_core::sc_time_stamp();
    }
  }
  void poller() {
    if (poll_after < 0) return;
    while (int(done_steps) < poll_after) wait(sc_time(1, SC_NS));
    for (;;) wait(poll);
  }
  void sleeper() {
    if (helper) wait(sc_time(10, SC_NS));
    wait(never);
  }
};

// A bench in a context of its own, run under the watchdog until `steps` progress steps are done.
struct WatchdogRun {
  SimContext context;
  SimContext::Scope use{context};
  SpanRecorder names;
  NumericGuard guard{names};
  WaitRegistry waits;
  std::unique_ptr<Bench> bench = std::make_unique<Bench>("bench");
  int goal = 0;
  ~WatchdogRun() { unwind_threads(); }
  void go(double window_ns, int goal_steps) {
    goal = goal_steps;
    WatchdogSetup w;
    w.window_ns = window_ns;
    w.done = [this] { return int(bench->done_steps) >= goal; };
    w.progress = [this] { return bench->done_steps; };
    w.progress_at = [this] { return bench->last_progress; };
    w.status = [this] { return std::to_string(bench->done_steps) + " steps done"; };
    w.too_long_hint = [] { return std::string("the bench's work"); };
    w.waits = &waits;
    w.guard = &guard;
    run_with_watchdog(w);
  }
  double now_ns() const { return to_ns(sc_core::sc_time_stamp()); }
};

double stalled_at_ns(const std::string& err) {
  const std::string key = "stalled at ";
  const size_t at = err.find(key);
  return at == std::string::npos ? -1.0 : std::stod(err.substr(at + key.size()));
}

}  // namespace

TEST(WatchdogProgress, WaitFarLongerThanTheWindowIsNotAStall) {
  WatchdogRun r;
  r.bench->work = sc_time(1e9, SC_NS);  // 1 s per step against a 100 ns window
  r.bench->steps = 3;
  r.bench->helper = true;  // and a process that ran in the first window without progress
  EXPECT_NO_THROW(r.go(100, 3));
  EXPECT_EQ(r.bench->done_steps, 3u);
  EXPECT_DOUBLE_EQ(r.now_ns(), 3e9);
}

TEST(WatchdogProgress, PollingWithoutProgressIsALivelockAfterTheWindow) {
  WatchdogRun r;
  r.bench->work = sc_time(50, SC_NS);
  r.bench->steps = 1;
  r.bench->poll = sc_time(2, SC_NS);
  r.bench->poll_after = 1;  // after its one step the bench only polls
  try {
    r.go(1000, 2);
    FAIL() << "a polling livelock ran to " << r.now_ns() << " ns";
  } catch (const SimStall& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("livelock: processes kept running for 1000 ns of simulated time without progress"), std::string::npos) << m;
    EXPECT_NE(m.find("the last progress at 50 ns"), std::string::npos) << m;
    // A window after the last progress, then kLivelockWakeups polls 2 ns apart (each wake-up
    // runs the poller and nothing else).
    const double t = stalled_at_ns(m);
    EXPECT_GE(t, 50 + 1000 + 2.0 * (kLivelockWakeups - 1)) << m;
    EXPECT_LE(t, 50 + 1000 + 2.0 * (kLivelockWakeups + 1)) << m;
  }
}

TEST(WatchdogProgress, NothingPendingWithWorkLeftIsADeadlock) {
  WatchdogRun r;
  r.bench->work = sc_time(5e8, SC_NS);
  r.bench->steps = 2;
  try {
    r.go(100, 3);  // the third step never comes
    FAIL() << "a deadlock was not reported";
  } catch (const SimStall& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("deadlock: no event is pending"), std::string::npos) << m;
    EXPECT_DOUBLE_EQ(stalled_at_ns(m), 1e9) << "detected at the last event: " << m;
  }
}

TEST(WatchdogProgress, RunBeyondTheRangeOfSimulatedTimeIsAnInputError) {
  // Two steps of 3e15 ns: each representable, the second ending beyond 2^62 ps (4.6e15 ns).
  // Before the time limit SystemC ran on to 6e15 ns, and longer steps saturated at 2^63 ps.
  WatchdogRun r;
  r.bench->work = sc_time(3e15, SC_NS);
  r.bench->steps = 2;
  try {
    r.go(1e6, 2);
    FAIL() << "ran to " << r.now_ns() << " ns";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("the run would last longer than simulated time can represent: its next event is at 6e+15 ns"),
              std::string::npos) << m;
    EXPECT_NE(m.find("1 steps done; the hardware is too slow for this scenario: the bench's work"), std::string::npos) << m;
  }
  EXPECT_DOUBLE_EQ(r.now_ns(), 3e15) << "nothing ran beyond the limit";
}

TEST(WatchdogProgress, SaturatedDurationIsAnInputErrorNotANumber) {
  WatchdogRun r;
  r.bench->work = Clock(0.01).cycles(UINT64_MAX);  // a wrapped product would have been short
  r.bench->steps = 1;
  EXPECT_THROW(r.go(1e6, 1), InputError);
  EXPECT_EQ(r.bench->done_steps, 0u);
}

TEST(WatchdogProgress, InvalidWindowsAreRefused) {
  for (double bad : {-1.0, 2e15, std::nan(""), std::numeric_limits<double>::infinity()}) {
    try {
      check_watchdog_window(bad, "--watchdog-ns");
      FAIL() << bad << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--watchdog-ns: "), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("allowed: [0, 1e+15] ns"), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(check_watchdog_window(0, "w"));
  EXPECT_NO_THROW(check_watchdog_window(1e15, "w"));
  SimOptions opt;
  opt.watchdog_ns = std::nan("");
  EXPECT_THROW(Simulator(HwConfig{}, opt), InputError);
}
