#pragma once
// Records what each component did and when: (start, end, component, activity, phase, agent,
// rows, bytes). The latency trace (latency.csv) and the busy-time statistics come from here.
// Strings are interned so recording a span is a push_back of integers.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <systemc>

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

class SpanRecorder {
 public:
  int intern(const std::string& s);
  const std::string& name(int id) const { return names_[id]; }
  void record(const sc_core::sc_time& start, const sc_core::sc_time& end, int component, int activity,
              int phase, int agent, int64_t rows, int64_t bytes) {
    spans_.push_back({start, end, component, activity, phase, agent, rows, bytes});
  }
  const std::vector<Span>& spans() const { return spans_; }

 private:
  std::vector<std::string> names_;
  std::map<std::string, int> ids_;
  std::vector<Span> spans_;
};

}  // namespace ahbm
