#include "runtime/serve/step_timer.h"

#include <cmath>

#include "hw/chip/energy.h"
#include "runtime/serve/engine.h"

namespace ahbm::serve {

StepCost StepTimer::time(Pool& pool, const std::vector<Step>& parts, double now_ns, bool& reused) {
  reused = false;
  return sampler_ ? sampled(pool, parts, now_ns, reused) : with_operators(pool, parts, attention(pool, parts, reused));
}

// Sampled serving (sampling.h): one layer's attention simulated in detail or predicted; a whole
// model's operators around it stay exact (with_operators: simulated once per row count and
// reused), so only the attention, whose cost follows the KV it reads, is ever predicted. A
// held-back step's error is measured on its whole cost.
StepCost StepTimer::sampled(Pool& pool, const std::vector<Step>& parts, double now_ns, bool& reused) {
  const StepFeatures x = step_features(parts, *pool.kv);
  SamplingClass& c = sampler_->klass(pool.hw_key, pool.name, x[1] > x[2]);  // prefill: an agent brings > 1 token
  const StepSampler::Use use = sampler_->decide(c, x);
  const auto vec = [](const StepCost& s) { return CostVector{s.ns, s.energy_j, s.static_j, double(s.hbm_bytes)}; };
  const auto cost = [](const CostVector& v) {
    return StepCost{v.ns, uint64_t(std::llround(v.hbm_bytes)), v.energy_j, v.static_j, true};
  };
  if (use == StepSampler::Use::predicted)
    return cost(sampler_->perturb(c, vec(with_operators(pool, parts, cost(sampler_->predict(c, x)))), now_ns));
  const StepCost exact = attention(pool, parts, reused);
  const StepCost whole = with_operators(pool, parts, exact);
  if (use == StepSampler::Use::held_back)  // predicted by the fit before it learns the step
    sampler_->held_back(c, vec(with_operators(pool, parts, cost(sampler_->predict(c, x)), false)), vec(whole), now_ns);
  sampler_->learn(c, x, vec(exact), use);
  return whole;
}

// A whole model's step: every layer's operators around the step's attention (the cached or
// simulated cost above, one layer's), then the LM head (ModelSteps::step_ns). Its time, the HBM
// bytes (the attention's in every layer and the weights the operators read) and energy (every
// layer's attention and operators, dynamic; static power over the whole step) follow.
StepCost StepTimer::with_operators(Pool& pool, const std::vector<Step>& parts, const StepCost& c, bool count) {
  if (!pool.model) return c;
  ModelSteps& operators = *pool.model->steps;
  Step all;  // the step's rows, every part's (selective batching: one GEMM for every workflow)
  all.phase = parts.front().phase;
  for (const Step& part : parts) all.agents.insert(all.agents.end(), part.agents.begin(), part.agents.end());
  const int layers = operators.layers();
  // Not counted (a held-back step's prediction): its time alone (its weight bytes are not needed).
  const ModelSteps::Accounted ops = count ? operators.account(all, c.ns) : ModelSteps::Accounted{operators.step_ns(all, c.ns), 0};
  const double static_w = c.ns > 0 ? c.static_j / c.ns : 0.0;  // J per ns
  StepCost out;
  out.ns = ops.ns;
  out.hbm_bytes = c.hbm_bytes * uint64_t(layers) + ops.w_bytes_read;
  out.static_j = static_w * ops.ns;
  out.energy_j = (c.energy_j - c.static_j) * layers + operators.operators_energy(all).dynamic_j() + out.static_j;
  out.predicted = c.predicted;
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
