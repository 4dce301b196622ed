#pragma once
// The choose stage of a step (runtime/step/step_runner.h: plan -> choose -> apply -> simulate ->
// report): which of the planner's candidate layouts (policy, Q tile rows) the step runs with.
// Every candidate that can run is laid out (tensor-free) and estimated by the cost model in one
// entry; a rule then picks one: the requested policy, or for "auto" the lowest estimate.
// A search over more candidates (several tile sizes per policy) plugs in here: the planner
// proposes them, the cost model estimates them in the same one call, `pick` chooses.
#include <string>
#include <vector>

#include "hw/common/config/choice.h"
#include "hw/common/contract/job.h"
#include "hw/common/config/hw_config.h"
#include "hw/common/base/json_reader.h"
#include "runtime/plan/planner.h"
#include "runtime/policy/cost_model.h"

namespace ahbm {

// What a choice minimises over its candidates (`auto`: every policy's; a named policy: its tile
// sizes): the estimate's time (total_ns), its energy (energy_j: the layout's activity priced by
// energy.*, plus static power over the time) or their product, the energy-delay product.
#define AHBM_OBJECTIVES(V) V(time, "time") V(energy, "energy") V(edp, "edp")
AHBM_CHOICE(Objective, AHBM_OBJECTIVES)
// Throws InputError naming `field`, the value and the allowed names.
Objective parse_objective(const std::string& name, const std::string& field);
// The cost of a time and an energy under `o` (an estimate's, or a simulation's in policy-eval).
double objective_cost(double ns, double energy_j, Objective o);
inline double objective_cost(const PolicyEstimate& e, Objective o) { return objective_cost(e.total_ns, e.energy_j, o); }

struct Choice {
  Layout chosen;
  bool automatic = false;
  Objective objective = Objective::time;
  std::vector<PolicyEstimate> estimates;  // every candidate that can run, in candidate order
  std::vector<Layout> estimated;          // the layout of each estimate
  std::vector<std::string> unavailable;   // "B3: <reason>" for candidates that cannot run
  // summary.json policy.decision: chosen, automatic, estimates, unavailable.
  int chosen_at = -1;                     // index of the chosen candidate's estimate
  Json to_json() const;
  const PolicyEstimate* chosen_estimate() const { return chosen_at < 0 ? nullptr : &estimates[size_t(chosen_at)]; }
};

// A candidate with its estimate (or why it cannot run).
struct Scored {
  Layout layout;
  const PolicyEstimate* estimate = nullptr;  // null: unavailable
};

// The rule: `requested` ("A".."B5") names the policy to run; "auto" takes the lowest cost
// (objective_cost), costs within 0.1% being a tie broken towards the policy that moves less KV
// per step and keeps less extra state (A, B4, B3, B2, B1, B5). Returns the index into `scored`.
// Throws InputError for an unknown name.
size_t pick(const std::vector<Scored>& scored, const std::string& requested, Objective objective = Objective::time);

// The candidates `pick` can choose for `requested`: all of them for "auto", else the named
// policy's (its tile sizes). A caller that needs only the chosen layout, not every policy's
// estimate for a report, passes these to `choose`: the choice is the same, and the cost model
// estimates one policy instead of six (serve's steps: runtime/step/step_runner.cpp batch_jobs).
std::vector<Candidate> candidates_for(const std::vector<Candidate>& candidates, const std::string& requested);

// The stage: lays out `policy_a_jobs` for each candidate, estimates them in one call of `model`
// and picks. Throws InputError for an unknown policy name or a requested policy that cannot run.
Choice choose(const std::vector<AttentionJob>& policy_a_jobs, const std::vector<Candidate>& candidates,
              const HwConfig& hw, const std::string& requested, CostModel& model,
              Objective objective = Objective::time);

}  // namespace ahbm
