#pragma once
// NumericGuard: the first NaN/Inf seen in the datapath (PE block states, CUBE reducer,
// inter-CUBE reduction, O at the host), with where and when it appeared (docs/reliability.md).
#include <string>

#include <systemc>

#include "hw/common/model/attn_state.h"

namespace ahbm {

class SpanRecorder;

// The simulated time since `epoch` (a run's start) in ns, with 3 decimals, for messages.
std::string ns_since(const sc_core::sc_time& epoch);

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

}  // namespace ahbm
