#include "runtime/policy/policy_eval.h"

#include <limits>

#include "hw/chip/simulate.h"
#include "hw/common/error.h"
#include "runtime/planner.h"
#include "runtime/policy/choose.h"

namespace ahbm {

Json evaluate_policies(const Scenario& sc, const HwConfig& hw) {
  const Plan plan = plan_fanout(sc, hw, sc.seed, false);
  CostModel model(hw);
  const Choice d = choose(plan.jobs, plan.candidates, hw, "auto", model);
  Json out = Json::array();
  double best = std::numeric_limits<double>::infinity(), auto_sim = 0;
  std::string winner;
  Simulator sim(hw);  // every policy on one elaborated chip
  for (size_t i = 0; i < d.estimates.size(); ++i) {
    const PolicyEstimate& e = d.estimates[i];
    const SimResult r = sim.run(apply_layout(plan.jobs, hw, d.estimated[i]));
    out.push_back({{"policy", policy_name(e.policy)},
                   {"simulated_ns", r.end_ns},
                   {"estimate_ns", e.total_ns},
                   {"error", (e.total_ns - r.end_ns) / r.end_ns},
                   {"estimate", e.to_json()}});
    if (r.end_ns < best) best = r.end_ns, winner = policy_name(e.policy);
    if (int(i) == d.chosen_at) auto_sim = r.end_ns;
  }
  for (const std::string& u : d.unavailable) out.push_back({{"policy", u.substr(0, u.find(':'))}, {"unavailable", u}});
  return Json{{"policies", out},
              {"auto", policy_name(d.chosen.policy)},
              {"simulated_winner", winner},
              // A tie in simulated time (B2 and B3 often tie) counts as a hit.
              {"auto_hit", auto_sim <= best * (1 + 1e-9)},
              {"auto_regret", auto_sim / best - 1.0}};
}

}  // namespace ahbm
