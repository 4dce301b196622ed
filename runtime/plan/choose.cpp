#include "runtime/plan/choose.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "hw/common/base/error.h"

namespace ahbm {

Json Choice::to_json() const {
  Json e = Json::array();
  for (size_t i = 0; i < estimates.size(); ++i) {
    Json x = estimates[i].to_json();
    x["tile_rows"] = estimated[i].tile_rows;
    e.push_back(std::move(x));
  }
  return Json{{"chosen", policy_name(chosen.policy)}, {"chosen_tile_rows", chosen.tile_rows}, {"automatic", automatic},
              {"objective", choice_name(objective)}, {"estimates", e}, {"unavailable", unavailable}};
}

Objective parse_objective(const std::string& name, const std::string& field) {
  if (const std::optional<Objective> o = find_choice<Objective>(name)) return *o;
  throw InputError(field + ": value \"" + name + "\" is not an objective (allowed: " + choice_list<Objective>() + ")");
}

double objective_cost(double ns, double energy_j, Objective o) {
  switch (o) {
    case Objective::time: return ns;
    case Objective::energy: return energy_j;
    case Objective::edp: return energy_j * ns;
  }
  return ns;
}

namespace {

// The lowest cost of the candidates of `only` (every policy when null).
double best_cost(const std::vector<Scored>& scored, const Policy* only, Objective objective) {
  double best = std::numeric_limits<double>::infinity();
  for (const Scored& s : scored)
    if (s.estimate && (!only || s.layout.policy == *only)) best = std::min(best, objective_cost(*s.estimate, objective));
  return best;
}

}  // namespace

size_t pick(const std::vector<Scored>& scored, const std::string& requested, Objective objective) {
  const bool automatic = requested == "auto";
  const Policy want = automatic ? Policy::A : parse_policy(requested);
  const double best = best_cost(scored, automatic ? nullptr : &want, objective);
  // Candidate order puts each policy's largest tile first, so within a policy a tie keeps the
  // larger tile (fewer passes over the KV).
  static const Policy preference[] = {Policy::A, Policy::B4, Policy::B3, Policy::B2, Policy::B1, Policy::B5};
  for (Policy p : preference) {
    if (!automatic && p != want) continue;
    for (size_t i = 0; i < scored.size(); ++i)
      if (scored[i].layout.policy == p && scored[i].estimate && objective_cost(*scored[i].estimate, objective) <= best * 1.001)
        return i;
  }
  if (!automatic) throw std::logic_error("choose: requested policy " + requested + " has no candidate that can run");
  throw std::logic_error("choose: no candidate can run");
}

std::vector<Candidate> candidates_for(const std::vector<Candidate>& candidates, const std::string& requested) {
  if (requested == "auto") return candidates;
  const Policy want = parse_policy(requested);
  std::vector<Candidate> out;
  for (const Candidate& c : candidates)
    if (c.layout.policy == want) out.push_back(c);
  return out;
}

Choice choose(const std::vector<AttentionJob>& a_jobs, const std::vector<Candidate>& candidates, const HwConfig& hw,
              const std::string& requested, CostModel& model, Objective objective) {
  Choice c;
  c.automatic = requested == "auto";
  c.objective = objective;
  const Policy want = c.automatic ? Policy::A : parse_policy(requested);
  // Lay out every candidate that can run; the estimates read layouts and shapes only, so lay
  // out tensor-free copies, not the tensors, and every candidate in one buffer of them
  // (relay_out: a step's token metadata is copied once, not once per candidate).
  std::vector<AttentionJob> shapes;
  for (const AttentionJob& j : a_jobs) shapes.push_back(timing_copy(j));
  std::vector<AttentionJob> laid = shapes;
  std::vector<size_t> of;  // candidate index of each candidate that can run
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& cand = candidates[i];
    std::string why = cand.unavailable;
    if (why.empty()) {
      try {
        relay_out(laid, shapes, hw, cand.layout);
        of.push_back(i);
        c.estimated.push_back(cand.layout);
        continue;
      } catch (const InputError& e) {
        why = e.what();
      }
    }
    if (!c.automatic && cand.layout.policy == want) throw InputError(why);
    // Once per policy: the tile search's smaller tiles of a policy that cannot run fail alike.
    const std::string line = policy_name(cand.layout.policy) + ": " + why;
    if (std::find(c.unavailable.begin(), c.unavailable.end(), line) == c.unavailable.end()) c.unavailable.push_back(line);
  }
  // The one entry into the cost model; each candidate is laid out again as it is estimated.
  c.estimates = model.estimate(c.estimated, [&](size_t k) -> const std::vector<AttentionJob>& {
    relay_out(laid, shapes, hw, c.estimated[k]);
    return laid;
  });
  std::vector<Scored> scored;
  std::vector<int> estimate_of;  // per candidate: index into c.estimates, -1 if it cannot run
  for (size_t i = 0, k = 0; i < candidates.size(); ++i) {
    const bool ran = k < of.size() && of[k] == i;
    scored.push_back({candidates[i].layout, ran ? &c.estimates[k] : nullptr});
    estimate_of.push_back(ran ? int(k++) : -1);
  }
  const size_t chosen = pick(scored, requested, objective);
  c.chosen = scored[chosen].layout;
  c.chosen_at = estimate_of[chosen];
  return c;
}

}  // namespace ahbm
