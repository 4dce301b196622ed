#pragma once
// One validation point of the cost model: every policy simulated (timing only) and estimated
// for a scenario and a hardware config; the auto choice against the simulated winner.
#include "hw/common/hw_config.h"
#include "runtime/scenario.h"

namespace ahbm {

// {"policies": [{"policy", "simulated_ns", "estimate_ns", "error", "estimate": {...}} or
//  {"policy", "unavailable": reason}], "auto": name, "simulated_winner": name, "auto_hit": bool,
//  "auto_regret": simulated(auto) / simulated(winner) - 1}
Json evaluate_policies(const Scenario& sc, const HwConfig& hw);

}  // namespace ahbm
