#include "runtime/timeline.h"

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
  trace_->append(*step.trace, uint64_t(std::llround(now_ns())));
  now_ = start + sc_core::sc_time(step.end_ns, sc_core::SC_NS);
  return start;
}

void Timeline::finish_into(SimResult& out) {
  out.spans = std::move(spans_);
  out.trace = std::move(trace_);
  out.end_ns = now_ns();
  spans_ = std::make_unique<SpanRecorder>();
  trace_ = std::make_unique<TraceSink>(false);
}

}  // namespace ahbm
