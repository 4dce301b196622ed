#pragma once
// What summary.json says about the policy of a step: the decision with every estimate, the
// simulated time next to the chosen estimate, the roofline per phase, PE and group, and the
// kernel-launch overhead of a unified schedule against per-head launches (THInfer).
#include <vector>

#include "hw/chip/simulate.h"
#include "runtime/plan/choose.h"

namespace ahbm {

// Sets each job's kernel id: "unified" (one launch for the step) or "per-head" (one per job).
// Throws InputError for another name.
void set_launch_schedule(std::vector<AttentionJob>& jobs, const std::string& schedule);

// The step's summary.json "policy": the choice, the simulated time against the chosen estimate,
// the launch overhead and the roofline (part of the report stage).
Json policy_summary(const Choice& d, const HwConfig& hw, const std::vector<AttentionJob>& jobs,
                    const SimResult& sim);

}  // namespace ahbm
