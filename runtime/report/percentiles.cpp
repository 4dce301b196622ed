#include "runtime/report/percentiles.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace ahbm::report {

namespace {

// The definition on samples already sorted (one sort serves every percentile of a distribution).
double percentile_of_sorted(const std::vector<double>& x, double p) {
  const double pos = std::clamp(p, 0.0, 100.0) / 100.0 * double(x.size() - 1);
  const size_t i = size_t(std::floor(pos));
  if (i + 1 >= x.size()) return x.back();
  return x[i] + (pos - double(i)) * (x[i + 1] - x[i]);
}

}  // namespace

double percentile(std::vector<double> x, double p) {
  if (x.empty()) throw std::invalid_argument("percentile of no samples");
  std::sort(x.begin(), x.end());
  return percentile_of_sorted(x, p);
}

Json distribution(const std::vector<double>& s, const std::string& unit) {
  if (s.empty()) return Json{{"count", 0}};
  const double total = std::accumulate(s.begin(), s.end(), 0.0);  // in the samples' order, as before
  std::vector<double> sorted = s;
  std::sort(sorted.begin(), sorted.end());
  return Json{{"count", s.size()},
              {"min" + unit, sorted.front()},
              {"mean" + unit, total / double(s.size())},
              {"p50" + unit, percentile_of_sorted(sorted, 50)},
              {"p90" + unit, percentile_of_sorted(sorted, 90)},
              {"p99" + unit, percentile_of_sorted(sorted, 99)},
              {"max" + unit, sorted.back()},
              {"total" + unit, total}};
}

}  // namespace ahbm::report
