#pragma once
// Join reports: one JSON object per strategy, and the side-by-side comparison of several
// strategies as JSON, a fixed-width text table and CSV. All three are built from one list
// of metric columns (metric_columns), so they always agree.
#include <string>
#include <utility>
#include <vector>

#include "runtime/join/plan.h"

namespace ahbm::join {

// The flat metrics of one plan in a fixed order: (column name, value). Latency columns are
// null until the runtime fills them from simulation.
std::vector<std::pair<std::string, Json>> metric_columns(const JoinPlan& p);

// Metrics plus the plan's details: segments, reducer tasks, evidence fetches, warnings and
// the main agent's continuation-prefill shape.
Json plan_json(const JoinPlan& p);
// {"strategies": [plan_json...]} in the given order.
Json comparison_json(const std::vector<JoinPlan>& plans);
// Human-readable side-by-side table (one row per strategy); warnings listed below it.
std::string comparison_table(const std::vector<JoinPlan>& plans);
// Header + one row per strategy with every metric column; null values are empty cells.
std::string comparison_csv(const std::vector<JoinPlan>& plans);

}  // namespace ahbm::join
