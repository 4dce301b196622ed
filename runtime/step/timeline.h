#pragma once
// Strings the simulations of successive steps into one run. A step depends on the previous
// one (decode step k+1 needs token k; the join needs every branch's result), so each step is
// simulated on its own chip and starts when the previous step's last O reached the host; its
// spans, waveform changes and tile completion times are shifted to that start, and its
// per-module statistics are folded into the run's (merge_stats, hw/common/observe/stats.h: each
// counter by its own rule).
#include <memory>
#include <optional>

#include "hw/chip/simulate.h"

namespace ahbm {

class Timeline {
 public:
  explicit Timeline(bool vcd);
  double now_ns() const { return to_ns(now_); }
  const sc_core::sc_time& now() const { return now_; }
  // Appends `step` (simulated from time 0) at now(); returns where it starts. now() moves to
  // its end.
  sc_core::sc_time append(const SimResult& step);
  // Moves now() on by `ns` with no hardware activity (a host-side wait); returns its start.
  sc_core::sc_time advance(double ns);
  SpanRecorder& spans() { return *spans_; }
  // Hands the merged spans, waveform, tile times (tile_of: (job, tile) within its own step)
  // and statistics to `out` and sets its end time; `out.outputs` is left alone.
  void finish_into(SimResult& out);

 private:
  std::unique_ptr<SpanRecorder> spans_;
  std::unique_ptr<TraceSink> trace_;
  std::vector<double> tile_done_ns_;
  std::vector<std::pair<int, int>> tile_of_;
  std::optional<StatsNode> stats_;  // none before the first step
  sc_core::sc_time now_ = sc_core::SC_ZERO_TIME;
};

}  // namespace ahbm
