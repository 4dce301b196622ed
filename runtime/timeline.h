#pragma once
// Strings the simulations of successive steps into one run. A step depends on the previous
// one (decode step k+1 needs token k; the join needs every branch's result), so each step is
// simulated on its own chip and starts when the previous step's last O reached the host; its
// spans and waveform changes are shifted to that start.
#include <memory>

#include "hw/chip/simulate.h"

namespace ahbm {

class Timeline {
 public:
  explicit Timeline(bool vcd);
  double now_ns() const { return now_.to_seconds() * 1e9; }
  const sc_core::sc_time& now() const { return now_; }
  // Appends `step` (simulated from time 0) at now(); returns where it starts. now() moves to
  // its end.
  sc_core::sc_time append(const SimResult& step);
  SpanRecorder& spans() { return *spans_; }
  // Hands the merged spans and waveform to `out` and sets its end time.
  void finish_into(SimResult& out);

 private:
  std::unique_ptr<SpanRecorder> spans_;
  std::unique_ptr<TraceSink> trace_;
  sc_core::sc_time now_ = sc_core::SC_ZERO_TIME;
};

}  // namespace ahbm
