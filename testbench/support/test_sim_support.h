#pragma once
// Helpers for tests that look into one simulation's result: its spans by component and
// activity, and O's error against the float64 reference.
#include <cmath>
#include <string>
#include <vector>

#include "hw/chip/simulate.h"
#include "runtime/numerics/reference.h"

namespace ahbm::test {

// The spans of `component` doing `activity`, in recording order.
inline std::vector<const Span*> spans_of(const SimResult& r, const std::string& component, const std::string& activity) {
  std::vector<const Span*> out;
  for (const Span& s : r.spans->spans())
    if (r.spans->name(s.component) == component && r.spans->name(s.activity) == activity) out.push_back(&s);
  return out;
}

// Largest |O - float64 reference| of `job`'s output `o`.
inline double max_err_vs_reference(const AttentionJob& job, const MatrixRM& o) {
  std::vector<float> k, v;
  std::vector<KvInfo> info;
  for (const KvShard& s : job.shards) {
    k.insert(k.end(), s.k.begin(), s.k.end());
    v.insert(v.end(), s.v.begin(), s.v.end());
    info.insert(info.end(), s.info.begin(), s.info.end());
  }
  const Eigen::MatrixXd ref =
      reference_attention(job.q, job.rows, k, v, info, job.head_dim, 1.0 / std::sqrt(double(job.head_dim)));
  return compare_to_reference(o, ref).max_abs_err;
}

}  // namespace ahbm::test
