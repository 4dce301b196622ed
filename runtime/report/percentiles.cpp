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

// The distribution of x[0..n), which it sorts.
Distribution sorting_distribution(double* x, size_t n) {
  Distribution d;
  if (n == 0) return d;
  d.count = n;
  d.total = std::accumulate(x, x + n, 0.0);  // in the samples' order, as before
  std::sort(x, x + n);
  d.min = x[0];
  d.mean = d.total / double(n);
  d.p50 = percentile_of_sorted(x, n, 50);
  d.p90 = percentile_of_sorted(x, n, 90);
  d.p99 = percentile_of_sorted(x, n, 99);
  d.max = x[n - 1];
  return d;
}

}  // namespace

double percentile(std::vector<double> x, double p) {
  if (x.empty()) throw std::invalid_argument("percentile of no samples");
  std::sort(x.begin(), x.end());
  return percentile_of_sorted(x.data(), x.size(), p);
}

Json to_json(const Distribution& d, const std::string& unit) {
  if (d.count == 0) return Json{{"count", 0}};
  return Json{{"count", d.count},       {"min" + unit, d.min}, {"mean" + unit, d.mean}, {"p50" + unit, d.p50},
              {"p90" + unit, d.p90},    {"p99" + unit, d.p99}, {"max" + unit, d.max},   {"total" + unit, d.total}};
}

Distribution distribution(const std::vector<double>& s) {
  std::vector<double> sorted = s;
  return sorting_distribution(sorted.data(), sorted.size());
}

Distribution distribution_sorting(Samples& s) { return sorting_distribution(s.data(), s.size()); }

}  // namespace ahbm::report
