#include "hw/common/observe/numeric_guard.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "hw/common/observe/span_recorder.h"
#include "hw/common/base/timing.h"

namespace ahbm {

std::string ns_since(const sc_core::sc_time& epoch) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", to_ns(sc_core::sc_time_stamp() - epoch));
  return buf;
}

void NumericGuard::record(const char* part, long row, long col, float value, int component, int tile) {
  if (tripped()) return;  // the first appearance is the one worth reporting
  std::ostringstream os;
  os << (std::isnan(value) ? "NaN" : value > 0 ? "+Inf" : "-Inf") << " in " << part << " at row " << row;
  if (col >= 0) os << ", column " << col;
  os << " of tile " << tile << " in " << names_.name(component) << " at " << ns_since(epoch_) << " ns";
  fault_ = os.str();
}

bool NumericGuard::check(const MatrixRM& o, int component, int tile) {
  if (o.allFinite()) return true;
  for (long r = 0; r < o.rows(); ++r)
    for (long c = 0; c < o.cols(); ++c)
      if (!std::isfinite(o(r, c))) {
        record("o", r, c, o(r, c), component, tile);
        return false;
      }
  return false;
}

bool NumericGuard::check(const AttnState& s, int component, int tile) {
  for (long r = 0; r < s.m.size(); ++r)
    if (std::isnan(s.m[r]) || s.m[r] == std::numeric_limits<float>::infinity()) {
      record("softmax state m", r, -1, s.m[r], component, tile);
      return false;
    }
  if (!s.l.allFinite())
    for (long r = 0; r < s.l.size(); ++r)
      if (!std::isfinite(s.l[r])) {
        record("softmax state l", r, -1, s.l[r], component, tile);
        return false;
      }
  return check(s.o, component, tile);
}

}  // namespace ahbm
