#include "runtime/step/timeline.h"

#include <cmath>

namespace ahbm {

Timeline::Timeline(bool vcd) : spans_(std::make_unique<SpanRecorder>()), trace_(std::make_unique<TraceSink>(vcd)) {}

sc_core::sc_time Timeline::append(const SimResult& step) {
  const sc_core::sc_time start = now_;
  const SpanRecorder& from = *step.spans;
  std::vector<int> id(size_t(0));
  auto map = [&](int i) {
    if (size_t(i) >= id.size()) id.resize(size_t(i) + 1, -1);
    if (id[size_t(i)] < 0) id[size_t(i)] = spans_->intern(from.name(i));
    return id[size_t(i)];
  };
  for (const Span& s : from.spans())
    spans_->record(s.start + start, s.end + start, map(s.component), map(s.activity), map(s.phase), map(s.agent),
                   s.rows, s.bytes);
  spans_->declare_all(from.components());
  trace_->append(*step.trace, uint64_t(std::llround(now_ns())));
  for (size_t gt = 0; gt < step.tile_done_ns.size(); ++gt) {
    tile_done_ns_.push_back(now_ns() + step.tile_done_ns[gt]);
    tile_of_.push_back(step.tile_of[gt]);
  }
  // Each counter folds in by its own rule; means are weighted by the time each side covers.
  if (!stats_) stats_ = step.stats;
  else merge_stats(*stats_, step.stats, now_ns(), step.end_ns);
  now_ = start + sc_core::sc_time(step.end_ns, sc_core::SC_NS);
  return start;
}

sc_core::sc_time Timeline::advance(double ns) {
  const sc_core::sc_time start = now_;
  now_ = start + sc_core::sc_time(ns, sc_core::SC_NS);
  return start;
}

void Timeline::finish_into(SimResult& out) {
  out.spans = std::move(spans_);
  out.trace = std::move(trace_);
  out.end_ns = now_ns();
  out.tile_done_ns = std::move(tile_done_ns_);
  out.tile_of = std::move(tile_of_);
  out.stats = stats_ ? std::move(*stats_) : StatsNode();
  stats_.reset();
  spans_ = std::make_unique<SpanRecorder>();
  trace_ = std::make_unique<TraceSink>(false);
}

}  // namespace ahbm
