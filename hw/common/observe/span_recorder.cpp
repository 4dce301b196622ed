#include "hw/common/observe/span_recorder.h"

namespace ahbm {

int SpanRecorder::intern(const std::string& s) {
  auto it = ids_.find(s);
  if (it != ids_.end()) return it->second;
  names_.push_back(s);
  ids_[s] = int(names_.size()) - 1;
  return int(names_.size()) - 1;
}

SpanRecorder SpanRecorder::take_run() {
  SpanRecorder run;
  run.names_ = names_;
  run.ids_ = ids_;
  run.spans_ = std::move(spans_);
  run.components_ = components_;
  spans_.clear();
  return run;
}

}  // namespace ahbm
