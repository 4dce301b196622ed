#pragma once
// Records what each component did and when: (start, end, component, activity, phase, agent,
// rows, bytes). The latency trace (latency.csv) and the busy-time statistics come from here.
// Strings are interned so recording a span is a push_back of integers.
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include <systemc>

#include "hw/common/base/component.h"
#include "hw/common/base/huge_page_allocator.h"

namespace ahbm {

struct Span {
  sc_core::sc_time start, end;
  int component;
  int activity;
  int phase;
  int agent;
  int64_t rows;
  int64_t bytes;
};

// A long run records hundreds of thousands of spans (48 bytes each): huge pages (below).
using SpanList = std::vector<Span, HugePageAllocator<Span>>;

class SpanRecorder {
 public:
  int intern(const std::string& s);
  const std::string& name(int id) const { return names_[id]; }
  // `start` and `end` are simulated times; the span keeps them relative to the epoch.
  void record(const sc_core::sc_time& start, const sc_core::sc_time& end, int component, int activity,
              int phase, int agent, int64_t rows, int64_t bytes) {
    spans_.push_back({start - epoch_, end - epoch_, component, activity, phase, agent, rows, bytes});
  }
  const SpanList& spans() const { return spans_; }
  // What component `path` is (a module declares the names it records or signals under).
  void declare(const std::string& path, ComponentInfo info) { components_[path] = std::move(info); }
  // Every declared component, with those of `other` (a recorder whose spans were copied here).
  const ComponentTable& components() const { return components_; }
  void declare_all(const ComponentTable& other) { components_.insert(other.begin(), other.end()); }

  // A chip reused for several runs (hw/chip/simulate.h) starts each run at a later simulated
  // time, its epoch; recorded times count from it, so a run's spans do not depend on what ran
  // before on the same chip.
  void set_epoch(const sc_core::sc_time& t) { epoch_ = t; }
  // Hands over this run's spans with the names interned so far, and keeps the names (the
  // modules hold their ids) with no spans.
  SpanRecorder take_run();
  // Drops this run's spans but keeps their buffer for the next run: a chip whose runs are timed
  // for their end and statistics only (SimOptions::keep_spans) records into the same memory run
  // after run instead of growing a new buffer (and faulting in its pages) every time.
  void drop_run() { spans_.clear(); }

 private:
  sc_core::sc_time epoch_ = sc_core::SC_ZERO_TIME;
  std::vector<std::string> names_;
  // Hashed: modules intern some names as they record (a GEMM's phase, "x_in"), once per burst.
  std::unordered_map<std::string, int> ids_;
  SpanList spans_;
  ComponentTable components_;
};

}  // namespace ahbm
