#include "runtime/plan/policy_eval.h"

#include <limits>
#include <map>

#include "hw/chip/energy.h"
#include "hw/chip/simulate.h"
#include "hw/common/base/error.h"
#include "runtime/plan/planner.h"
#include "runtime/plan/choose.h"

namespace ahbm {

namespace {

struct Point {
  int tile_rows = 0;
  double simulated_ns = 0, estimate_ns = 0;
  double energy_j = 0, dynamic_j = 0;  // the simulation's energy (hw/chip/energy.h)
  double estimate_energy_j = 0;
  Json terms;
  // The simulation's cost under the objective.
  double cost(Objective o) const { return objective_cost(simulated_ns, energy_j, o); }
  Json to_json() const {
    return Json{{"tile_rows", tile_rows}, {"simulated_ns", simulated_ns}, {"estimate_ns", estimate_ns},
                {"energy_j", energy_j}, {"estimate_energy_j", estimate_energy_j}};
  }
};

}  // namespace

Json evaluate_policies(const Scenario& sc, const HwConfig& hw, const PolicyEvalProgress& progress, Objective objective) {
  const Plan plan = plan_fanout(sc, hw, sc.seed, false);
  CostModel model(hw);
  const Choice d = choose(plan.jobs, plan.candidates, hw, "auto", model, objective);
  // Every candidate (policy, tile) the planner proposed and the cost model estimated is
  // simulated on one elaborated chip; per policy: the tile the cost model picks, the largest
  // tile and the best simulated tile.
  Simulator sim(hw);
  std::map<Policy, std::vector<Point>> by_policy;  // candidate order: largest tile first
  std::vector<Scored> scored;
  double best = std::numeric_limits<double>::infinity(), auto_cost = 0;
  Layout winner;
  for (size_t i = 0; i < d.estimates.size(); ++i) {
    const PolicyEstimate& e = d.estimates[i];
    const Layout& l = d.estimated[i];
    if (progress) progress(i, d.estimates.size(), policy_name(l.policy) + " tile " + std::to_string(l.tile_rows));
    const SimResult r = sim.run(apply_layout(plan.jobs, hw, l));
    const EnergyReading en = read_energy(r.stats, hw, sc.model.dtype, r.end_ns);
    const Point pt{l.tile_rows, r.end_ns, e.total_ns, en.total_j(), en.dynamic_j(), e.energy_j, e.to_json()};
    by_policy[l.policy].push_back(pt);
    scored.push_back({l, &e});
    if (pt.cost(objective) < best) best = pt.cost(objective), winner = l;
    if (int(i) == d.chosen_at) auto_cost = pt.cost(objective);
  }
  if (progress) progress(d.estimates.size(), d.estimates.size(), "");
  Json out = Json::array();
  for (Policy p : all_policies()) {
    const auto it = by_policy.find(p);
    if (it == by_policy.end()) continue;
    const std::vector<Point>& pts = it->second;
    // The cost model's pick for this policy (what `--policy P` runs).
    const size_t k = pick(scored, policy_name(p), objective);
    const Point* picked = nullptr;
    for (const Point& q : pts)
      if (q.tile_rows == scored[k].layout.tile_rows) picked = &q;
    const Point* cheapest = &pts.front();
    Json tiles = Json::array();
    for (const Point& q : pts) {
      if (q.cost(objective) < cheapest->cost(objective)) cheapest = &q;
      tiles.push_back(q.to_json());
    }
    out.push_back({{"policy", policy_name(p)},
                   {"tile_rows", picked->tile_rows},
                   {"simulated_ns", picked->simulated_ns},
                   {"estimate_ns", picked->estimate_ns},
                   {"energy_j", picked->energy_j},
                   {"dynamic_energy_j", picked->dynamic_j},
                   {"edp_j_s", picked->energy_j * picked->simulated_ns * 1e-9},
                   {"estimate_energy_j", picked->estimate_energy_j},
                   {"error", (picked->estimate_ns - picked->simulated_ns) / picked->simulated_ns},
                   // 0 when the energy costs are all 0 (energy.* set so): nothing to compare.
                   {"energy_error", picked->energy_j > 0 ? (picked->estimate_energy_j - picked->energy_j) / picked->energy_j : 0.0},
                   {"estimate", picked->terms},
                   {"largest", pts.front().to_json()},
                   {"best", cheapest->to_json()},
                   {"tiles", tiles}});
  }
  for (const std::string& u : d.unavailable) out.push_back({{"policy", u.substr(0, u.find(':'))}, {"unavailable", u}});
  return Json{{"objective", choice_name(objective)},
              {"policies", out},
              {"auto", policy_name(d.chosen.policy)},
              {"auto_tile_rows", d.chosen.tile_rows},
              {"simulated_winner", policy_name(winner.policy)},
              {"simulated_winner_tile_rows", winner.tile_rows},
              // A tie (B2 and B3 often tie in time) counts as a hit.
              {"auto_hit", auto_cost <= best * (1 + 1e-9)},
              {"auto_regret", auto_cost / best - 1.0}};
}

}  // namespace ahbm
