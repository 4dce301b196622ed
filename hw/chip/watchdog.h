#pragma once
// Reliability machinery of one simulation (docs/reliability.md):
//  - WaitNote / WaitRegistry: each module says, on demand, what it is waiting for. Processes
//    keep a WaitNote (two stores) before a wait that might never end; the registry turns the
//    notes into a stall report only when the watchdog fires.
//  - NumericGuard: the first NaN/Inf seen in the datapath (PE block states, CUBE reducer,
//    inter-CUBE reduction, O at the host), with where and when it appeared.
//  - run_with_watchdog: runs the kernel in windows of simulated time and stops with SimStall
//    when time stops advancing with work pending (deadlock: no event left) or advances for a
//    whole window without any progress (livelock).
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <systemc>

#include "hw/common/attn_state.h"

namespace ahbm {

class SpanRecorder;

// What one process is blocked on: a static description and the global tile it concerns.
struct WaitNote {
  const char* what = nullptr;  // nullptr: not blocked on anything outstanding
  int tile = -1;
  void set(const char* w, int t = -1) { what = w, tile = t; }
  void clear() { what = nullptr, tile = -1; }
  // "what (tile t)", or "" when clear.
  std::string str() const;
};

// "0-3, 7, 9-10": a sorted list of ids, runs collapsed (for tile and CUBE lists in reports).
std::string id_list(std::vector<int> ids);

class WaitRegistry {
 public:
  // `describe` returns "" when the module has nothing outstanding.
  void add(std::string module, std::function<std::string()> describe);
  // "module: description" for every module with something outstanding, in registration order;
  // modules with the same description share one line ("a, b, c: description").
  std::vector<std::string> report() const;

 private:
  std::vector<std::pair<std::string, std::function<std::string()>>> entries_;
};

class NumericGuard {
 public:
  explicit NumericGuard(const SpanRecorder& names) : names_(names) {}
  // A softmax state is sane when o and l are finite and m is finite or -inf (a row that has
  // seen no visible key yet). Records the first violation; returns false on one.
  bool check(const AttnState& s, int component, int tile);
  bool check(const MatrixRM& o, int component, int tile);
  bool tripped() const { return !fault_.empty(); }
  // A new run starting at simulated time `epoch` (reported times count from it): no fault yet.
  void begin_run(const sc_core::sc_time& epoch) {
    epoch_ = epoch;
    fault_.clear();
  }
  const std::string& fault() const { return fault_; }

 private:
  void record(const char* part, long row, long col, float value, int component, int tile);
  const SpanRecorder& names_;
  sc_core::sc_time epoch_ = sc_core::SC_ZERO_TIME;
  std::string fault_;
};

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
