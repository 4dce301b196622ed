#pragma once
#include <cstddef>
#include <functional>
#include <string>

// One validation point of the cost model: every policy simulated (timing only) and estimated
// for a scenario and a hardware config; the auto choice against the simulated winner.
#include "hw/common/config/hw_config.h"
#include "runtime/scenario/scenario.h"

namespace ahbm {

// Every candidate (policy, Q tile rows) of the fan-out step simulated (timing only) and
// estimated. {"policies": [per policy: "policy", "tile_rows" (the cost model's pick for it, what
// `run --policy P` runs), "simulated_ns", "estimate_ns", "energy_j", "dynamic_energy_j", "edp_j_s"
// (hw/chip/energy.h), "error", "estimate": {terms}, "largest"
// and "best" (simulated) as {"tile_rows", "simulated_ns", "estimate_ns"}, "tiles": [every
// candidate tile, largest first]; or {"policy", "unavailable": reason}], "auto": name,
// "auto_tile_rows", "simulated_winner", "simulated_winner_tile_rows" (fastest simulated
// candidate), "auto_hit": bool, "auto_regret": simulated(auto) / simulated(winner) - 1}
// `progress` (if set) is called before each candidate's simulation and once at the end, with the
// candidates done, their number and the next one ("B2 tile 64"; "" at the end).
using PolicyEvalProgress = std::function<void(size_t done, size_t total, const std::string& next)>;
Json evaluate_policies(const Scenario& sc, const HwConfig& hw, const PolicyEvalProgress& progress = {});

}  // namespace ahbm
