#pragma once
// Event-driven timing helpers. Nothing here ticks a clock: a process computes how long its
// work takes in closed form and waits once for that time (or for an event).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include <systemc>

#include "hw/common/base/checked_math.h"

namespace ahbm {

using sc_core::sc_time;

inline uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }


// THE RANGE OF SIMULATED TIME. sc_time counts 2^64 units of the time resolution (1 ps: 1.8e16 ns),
// and SystemC converts a longer double duration to garbage (2^63 on x86-64, or 0). A run may
// therefore last at most kMaxRunUnits from its epoch (2^62 ps = 4.61e15 ns, 53 days), and a
// single duration of the model at most kSaturatedUnits (2^63): every duration below is computed
// with that cap, so an epoch below 2^62 plus any number of capped durations the watchdog lets
// run (it stops a run whose next event lies beyond its limit) stays far from wrapping.
constexpr uint64_t kMaxRunUnits = uint64_t(1) << 62;
constexpr uint64_t kSaturatedUnits = uint64_t(1) << 63;
inline sc_time saturated_time() { return sc_time::from_value(kSaturatedUnits); }
// The longest run, in ns (4.61e15 at 1 ps resolution), for messages and closed-form checks.
inline double max_run_ns() { return sc_time::from_value(kMaxRunUnits).to_seconds() * 1e9; }
// a + b, held at saturated_time().
inline sc_time sum_sat(const sc_time& a, const sc_time& b) {
  return a.value() >= kSaturatedUnits || b.value() >= kSaturatedUnits - a.value() ? saturated_time() : a + b;
}
// `ns` as a duration, held at saturated_time() (same rounding as sc_time(ns, SC_NS) below it).
inline sc_time duration_ns(double ns) {
  return ns >= saturated_time().to_seconds() * 1e9 ? saturated_time() : sc_time(ns, sc_core::SC_NS);
}

// A simulated time in ns, the unit of every report and trace.
inline double to_ns(const sc_time& t) { return t.to_seconds() * 1e9; }

class Clock {
 public:
  explicit Clock(double ghz) : period_(1.0 / ghz, sc_core::SC_NS) {}
  // n periods, held at saturated_time() (n = UINT64_MAX from a saturated product included).
  sc_time cycles(uint64_t n) const {
    return double(period_.value()) * double(n) >= double(kSaturatedUnits) ? saturated_time() : period_ * double(n);
  }
  const sc_time& period() const { return period_; }

 private:
  sc_time period_;
};

// Time to move `bytes` at `gbps` GB/s (1 GB/s = 1 byte/ns).
inline sc_time transfer_time(uint64_t bytes, double gbps) { return duration_ns(double(bytes) / gbps); }

// A FIFO whose items become visible at a given time. A consumer SC_THREAD blocks in pop()
// until the earliest item is due. One event is re-armed for the next due item, so an idle
// queue costs nothing.
template <class T>
class TimedQueue {
 public:
  void push(T item, const sc_time& delay = sc_core::SC_ZERO_TIME) {
    const sc_time due = sc_core::sc_time_stamp() + delay;
    items_.emplace(std::make_pair(due, seq_++), std::move(item));
    event_.notify(delay);  // an earlier pending notification wins, which is what we want
  }
  T pop() {
    for (;;) {
      if (!items_.empty()) {
        const sc_time now = sc_core::sc_time_stamp();
        auto first = items_.begin();
        if (first->first.first <= now) {
          T item = std::move(first->second);
          items_.erase(first);
          return item;
        }
        sc_core::wait(first->first.first - now, event_);
      } else {
        sc_core::wait(event_);
      }
    }
  }
  // The first item due by `deadline`, waiting for it until then; none if nothing is due by then
  // (the caller is at `deadline` after that).
  std::optional<T> pop_by(const sc_time& deadline) {
    for (;;) {
      const sc_time now = sc_core::sc_time_stamp();
      if (!items_.empty() && items_.begin()->first.first <= now) {
        auto first = items_.begin();
        T item = std::move(first->second);
        items_.erase(first);
        return item;
      }
      if (now >= deadline) return std::nullopt;
      const sc_time until = items_.empty() ? deadline : std::min(deadline, items_.begin()->first.first);
      sc_core::wait(until - now, event_);
    }
  }
  size_t size() const { return items_.size(); }
  // Empties the queue (a chip reused for another run starts from empty queues).
  void clear() {
    items_.clear();
    seq_ = 0;
  }

 private:
  std::multimap<std::pair<sc_time, uint64_t>, T> items_;
  sc_core::sc_event event_;
  uint64_t seq_ = 0;
};

// Books one of the servers whose next free times are `free_at` for `duration`, to start no
// earlier than `ready`: a server already free by then (the one freed last, so earlier-freed
// ones stay for work that is ready sooner), else the one that frees first. Returns the start and
// advances that server. ServerPool books simulated time with it; the cost model books ns
// (runtime/policy/cost_model.cpp), so both share one rule.
template <class T, class Add>
T book_server(std::vector<T>& free_at, const T& ready, const T& duration, Add add) {
  auto best = free_at.end();
  for (auto it = free_at.begin(); it != free_at.end(); ++it)
    if (!(ready < *it) && (best == free_at.end() || *best < *it)) best = it;
  if (best == free_at.end()) best = std::min_element(free_at.begin(), free_at.end());
  const T start = std::max(*best, ready);
  *best = add(start, duration);
  return start;
}

// `n` identical servers (ports, a bus, a link, merge units) granted first come, first served.
// reserve() books a server for `duration` from now (reserve_from: from a later time its input
// is ready) and returns when that booking starts and ends; the caller waits until then, or
// schedules what follows. Busy time is accumulated for utilisation statistics.
class ServerPool {
 public:
  explicit ServerPool(int n = 1) : free_at_(size_t(std::max(n, 1)), sc_core::SC_ZERO_TIME) {}
  // Returns {start, end} of the booking.
  std::pair<sc_time, sc_time> reserve(const sc_time& duration) { return reserve_from(sc_core::sc_time_stamp(), duration); }
  // The same, starting no earlier than `ready` (>= now).
  std::pair<sc_time, sc_time> reserve_from(const sc_time& ready, const sc_time& duration) {
    const sc_time start = book_server(free_at_, std::max(ready, sc_core::sc_time_stamp()), duration, sum_sat);
    busy_ = sum_sat(busy_, duration);
    return {start, sum_sat(start, duration)};
  }
  int size() const { return int(free_at_.size()); }
  const sc_time& busy() const { return busy_; }
  // Every server free, no busy time: the state of a new pool.
  void reset() {
    std::fill(free_at_.begin(), free_at_.end(), sc_core::SC_ZERO_TIME);
    busy_ = sc_core::SC_ZERO_TIME;
  }

 private:
  std::vector<sc_time> free_at_;
  sc_time busy_ = sc_core::SC_ZERO_TIME;
};

}  // namespace ahbm
