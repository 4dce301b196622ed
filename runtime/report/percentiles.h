#pragma once
// Percentiles of latency samples, as used in summary.json ("latency") and stats.json.
// Definition: linear interpolation between closest ranks (numpy's default): for sorted
// samples x[0..n-1], the p-th percentile is x[i] + f * (x[i+1] - x[i]) with
// i + f = p / 100 * (n - 1). One sample gives that sample for every p.
#include <string>
#include <vector>

#include "hw/common/base/huge_page_allocator.h"
#include "hw/common/base/json_reader.h"

namespace ahbm::report {

// `p` in [0, 100]; `samples` non-empty (any order).
double percentile(std::vector<double> samples, double p);

// The distribution of some samples: how many, their extremes, mean, percentiles and sum (the
// sum in the samples' order). With no samples every number is 0.
struct Distribution {
  size_t count = 0;
  double min = 0, mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0, total = 0;
};

// {"count", "min_ns", "mean_ns", "p50_ns", "p90_ns", "p99_ns", "max_ns", "total_ns"};
// {"count": 0} for no samples. `unit` is the keys' suffix ("_j" for joules).
Json to_json(const Distribution& d, const std::string& unit = "_ns");

Distribution distribution(const std::vector<double>& samples);

// The samples of one distribution in a long run's latency summary: hundreds of thousands per
// activity, so they live on huge pages (huge_page_allocator.h), and are sorted where they lie.
using Samples = std::vector<double, HugePageAllocator<double>>;
// distribution() of `samples`, which it leaves sorted.
Distribution distribution_sorting(Samples& samples);

}  // namespace ahbm::report
