#pragma once
// Event-driven timing helpers. Nothing here ticks a clock: a process computes how long its
// work takes in closed form and waits once for that time (or for an event).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include <systemc>

namespace ahbm {

using sc_core::sc_time;

inline uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// A simulated time in ns, the unit of every report and trace.
inline double to_ns(const sc_time& t) { return t.to_seconds() * 1e9; }

class Clock {
 public:
  explicit Clock(double ghz) : period_(1.0 / ghz, sc_core::SC_NS) {}
  sc_time cycles(uint64_t n) const { return period_ * double(n); }
  const sc_time& period() const { return period_; }

 private:
  sc_time period_;
};

// Time to move `bytes` at `gbps` GB/s (1 GB/s = 1 byte/ns).
inline sc_time transfer_time(uint64_t bytes, double gbps) {
  return sc_time(double(bytes) / gbps, sc_core::SC_NS);
}

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

// `n` identical servers (ports, a bus, a link) granted first come, first served. reserve()
// books the earliest-free server for `duration` and returns when that booking ends; the caller
// waits until then. Busy time is accumulated for utilisation statistics.
class ServerPool {
 public:
  explicit ServerPool(int n = 1) : free_at_(size_t(std::max(n, 1)), sc_core::SC_ZERO_TIME) {}
  // Returns {start, end} of the booking.
  std::pair<sc_time, sc_time> reserve(const sc_time& duration) {
    auto it = std::min_element(free_at_.begin(), free_at_.end());
    const sc_time start = std::max(*it, sc_core::sc_time_stamp());
    *it = start + duration;
    busy_ += duration;
    return {start, *it};
  }
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
