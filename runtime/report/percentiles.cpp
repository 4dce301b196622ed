#include "runtime/report/percentiles.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace ahbm::report {

namespace {

// The definition on samples already sorted (one sort serves every percentile of a distribution).
double percentile_of_sorted(const double* x, size_t n, double p) {
  const double pos = std::clamp(p, 0.0, 100.0) / 100.0 * double(n - 1);
  const size_t i = size_t(std::floor(pos));
  if (i + 1 >= n) return x[n - 1];
  return x[i] + (pos - double(i)) * (x[i + 1] - x[i]);
}

// The summary of x[0..n), which it sorts.
Json sorting_distribution(double* x, size_t n, const std::string& unit) {
  if (n == 0) return Json{{"count", 0}};
  const double total = std::accumulate(x, x + n, 0.0);  // in the samples' order, as before
  std::sort(x, x + n);
  return Json{{"count", n},
              {"min" + unit, x[0]},
              {"mean" + unit, total / double(n)},
              {"p50" + unit, percentile_of_sorted(x, n, 50)},
              {"p90" + unit, percentile_of_sorted(x, n, 90)},
              {"p99" + unit, percentile_of_sorted(x, n, 99)},
              {"max" + unit, x[n - 1]},
              {"total" + unit, total}};
}

}  // namespace

double percentile(std::vector<double> x, double p) {
  if (x.empty()) throw std::invalid_argument("percentile of no samples");
  std::sort(x.begin(), x.end());
  return percentile_of_sorted(x.data(), x.size(), p);
}

Json distribution(const std::vector<double>& s, const std::string& unit) {
  std::vector<double> sorted = s;
  return sorting_distribution(sorted.data(), sorted.size(), unit);
}

Json distribution_sorting(Samples& s, const std::string& unit) { return sorting_distribution(s.data(), s.size(), unit); }

}  // namespace ahbm::report
