#pragma once
#include <cstddef>
#include <functional>
#include <string>

// One validation point of the cost model: every policy simulated (timing only) and estimated
// for a scenario and a hardware config; the auto choice against the simulated winner.
#include "hw/common/config/hw_config.h"
#include "runtime/plan/choose.h"
#include "runtime/scenario/scenario.h"

namespace ahbm {

// Every candidate (policy, Q tile rows) of the fan-out step simulated (timing only) and
// estimated, the choices made for `objective` (choose.h). {"objective": name, "policies": [per
// policy: "policy", "tile_rows" (the cost model's pick for it, what `run --policy P --objective O`
// runs), "simulated_ns", "estimate_ns", "energy_j", "dynamic_energy_j", "edp_j_s" (the
// simulation's, hw/chip/energy.h), "estimate_energy_j", "error", "energy_error" (estimate vs
// simulation), "estimate": {terms}, "largest" and "best" (lowest simulated cost) as {"tile_rows",
// "simulated_ns", "estimate_ns", "energy_j", "estimate_energy_j"}, "tiles": [every candidate
// tile, largest first]; or {"policy", "unavailable": reason}], "auto": name, "auto_tile_rows",
// "simulated_winner", "simulated_winner_tile_rows" (the candidate of lowest simulated cost:
// time, energy or their product), "auto_hit": bool, "auto_regret": cost(auto) / cost(winner) - 1,
// simulated}
// `progress` (if set) is called before each candidate's simulation and once at the end, with the
// candidates done, their number and the next one ("B2 tile 64"; "" at the end).
using PolicyEvalProgress = std::function<void(size_t done, size_t total, const std::string& next)>;
Json evaluate_policies(const Scenario& sc, const HwConfig& hw, const PolicyEvalProgress& progress = {},
                       Objective objective = Objective::time);

}  // namespace ahbm
