#include "runtime/serve/step_timer.h"

#include "hw/chip/energy.h"
#include "runtime/serve/engine.h"

namespace ahbm::serve {

// A whole model's step: every layer's operators around the step's attention (the cached or
// simulated cost above, one layer's), then the LM head (ModelSteps::step_ns). Its time, the HBM
// bytes (the attention's in every layer and the weights the operators read) and energy (every
// layer's attention and operators, dynamic; static power over the whole step) follow.
StepCost StepTimer::time(Pool& pool, const std::vector<Step>& parts, bool& reused) {
  StepCost c = attention(pool, parts, reused);
  if (!pool.model) return c;
  ModelSteps& operators = *pool.model->steps;
  Step all;  // the step's rows, every part's (selective batching: one GEMM for every workflow)
  all.phase = parts.front().phase;
  for (const Step& part : parts) all.agents.insert(all.agents.end(), part.agents.begin(), part.agents.end());
  const int layers = operators.layers();
  const ModelSteps::Accounted ops = operators.account(all, c.ns);
  const double static_w = c.ns > 0 ? c.static_j / c.ns : 0.0;  // J per ns
  StepCost out;
  out.ns = ops.ns;
  out.hbm_bytes = c.hbm_bytes * uint64_t(layers) + ops.w_bytes_read;
  out.static_j = static_w * ops.ns;
  out.energy_j = (c.energy_j - c.static_j) * layers + operators.operators_energy(all).dynamic_j() + out.static_j;
  return out;
}

StepCost StepTimer::attention(Pool& pool, const std::vector<Step>& parts, bool& reused) {
  std::vector<Layout> layouts;
  const std::vector<AttentionJob> jobs = pool.runner->batch_jobs(*pool.kv, parts, &layouts);
  for (const Layout& l : layouts) ++parts_by_policy_[policy_name(l.policy)];
  const auto simulate = [&] {
    ++simulated_;
    const SimResult sim = pool.runner->simulate_quiet(jobs);
    const EnergyReading e = read_energy(sim.stats, pool.hw, dtype_, sim.end_ns);
    return StepCost{sim.end_ns, hbm_bytes_read(sim), e.total_j(), e.static_j()};
  };
  reused = false;
  if (!use_cache_) return simulate();
  std::string key = step_key(jobs, pool.hw_key);
  if (const StepCost* hit = cache_.find(key)) {
    reused = true;
    ++reused_;
    return *hit;
  }
  const StepCost c = simulate();
  cache_.insert(std::move(key), c);
  return c;
}

}  // namespace ahbm::serve
