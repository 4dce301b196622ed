#include "runtime/report/percentiles.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace ahbm::report {

double percentile(std::vector<double> x, double p) {
  if (x.empty()) throw std::invalid_argument("percentile of no samples");
  std::sort(x.begin(), x.end());
  const double pos = std::clamp(p, 0.0, 100.0) / 100.0 * double(x.size() - 1);
  const size_t i = size_t(std::floor(pos));
  if (i + 1 >= x.size()) return x.back();
  return x[i] + (pos - double(i)) * (x[i + 1] - x[i]);
}

Json distribution(const std::vector<double>& s, const std::string& unit) {
  if (s.empty()) return Json{{"count", 0}};
  const double total = std::accumulate(s.begin(), s.end(), 0.0);
  return Json{{"count", s.size()},
              {"min" + unit, *std::min_element(s.begin(), s.end())},
              {"mean" + unit, total / double(s.size())},
              {"p50" + unit, percentile(s, 50)},
              {"p90" + unit, percentile(s, 90)},
              {"p99" + unit, percentile(s, 99)},
              {"max" + unit, *std::max_element(s.begin(), s.end())},
              {"total" + unit, total}};
}

}  // namespace ahbm::report
