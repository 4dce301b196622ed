#include "runtime/plan/policy_report.h"

#include <set>

#include "hw/common/base/error.h"
#include "runtime/policy/roofline.h"

namespace ahbm {

void set_launch_schedule(std::vector<AttentionJob>& jobs, const std::string& schedule) {
  if (schedule != "unified" && schedule != "per-head")
    throw InputError("--launch: unknown schedule \"" + schedule + "\" (allowed: unified, per-head)");
  for (size_t j = 0; j < jobs.size(); ++j) jobs[j].kernel = schedule == "unified" ? 0 : int(j);
}

Json policy_summary(const Choice& d, const HwConfig& hw, const std::vector<AttentionJob>& jobs,
                    const SimResult& sim) {
  Json j = d.to_json();
  if (const PolicyEstimate* e = d.chosen_estimate()) {
    j["chosen_estimate_ns"] = e->total_ns;
    j["estimate_error"] = sim.end_ns > 0 ? (e->total_ns - sim.end_ns) / sim.end_ns : 0.0;
  }
  j["simulated_ns"] = sim.end_ns;
  // Launch overhead: T_create_group + T_launch_group per kernel, paid serially on the host.
  std::set<int> kernels;
  for (const auto& job : jobs) kernels.insert(job.kernel);
  const double l = hw.host.kernel_launch_ns;
  const double heads = double(jobs.size());
  j["launch"] = {{"kernel_launch_ns", l},
                 {"kernels", kernels.size()},
                 {"schedule", kernels.size() <= 1 ? "unified" : "per-head"},
                 {"unified_overhead_ns", l},
                 {"per_head_overhead_ns", heads * l},
                 {"per_head_minus_unified_ns", (heads - 1) * l}};
  return Json{{"decision", j}, {"roofline", roofline_summary(hw, jobs, sim.stats, sim.end_ns)}};
}

}  // namespace ahbm
