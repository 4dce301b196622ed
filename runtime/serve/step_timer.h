#pragma once
// The serve engine's step timer (docs/serving.md, "The step cache"): a pool's step timed on the
// chip (its attention simulated, or found in the step cache under its exact key; a whole
// model's operators around it in every layer).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/serve/pools.h"
#include "runtime/serve/sampling.h"
#include "runtime/serve/step_cache.h"

namespace ahbm::serve {

// The step cache's bound on its keys' bytes (step_cache.h): 256 MiB, a few hundred keys of
// LLaMA-8B-sized steps under load, thousands of small ones.
constexpr size_t kStepCacheKeyBytes = size_t(256) << 20;

// What the step cache keeps of a simulated step.
struct StepCost {
  double ns = 0;
  uint64_t hbm_bytes = 0;  // read from every PE's HBM slice
  double energy_j = 0;     // the step's energy reading (hw/chip/energy.h): dynamic + static over ns
  double static_j = 0;     // of which static
  bool predicted = false;  // sampled serving: from the sampler's predictor, not simulated
};

class StepTimer {
 public:
  // `use_cache`: scheduler.step_cache; `dtype`: the model's (the energy reading's); `sampler`:
  // sampled serving (sampling.h), null in exact mode.
  StepTimer(bool use_cache, DType dtype, StepSampler* sampler = nullptr)
      : use_cache_(use_cache), dtype_(dtype), sampler_(sampler) {}

  // The step of `parts` on `pool`'s groups; `reused`: found in the step cache. Sampled serving:
  // simulated in detail or predicted, as the sampler decides.
  // `now_ns`: the step's start.
  StepCost time(Pool& pool, const std::vector<Step>& parts, double now_ns, bool& reused);

  int simulated() const { return simulated_; }
  int reused() const { return reused_; }
  // Workflow parts of the steps by the attention policy they ran with.
  const std::map<std::string, int64_t>& parts_by_policy() const { return parts_by_policy_; }

 private:
  // The whole step around one layer's `attention`; `count`: in the operators' totals.
  StepCost with_operators(Pool& pool, const std::vector<Step>& parts, const StepCost& attention, bool count = true);
  StepCost sampled(Pool& pool, const std::vector<Step>& parts, double now_ns, bool& reused);
  StepCost attention(Pool& pool, const std::vector<Step>& parts, bool& reused);

  bool use_cache_;
  DType dtype_;
  StepSampler* sampler_;
  StepCache<StepCost> cache_{kStepCacheKeyBytes};
  int simulated_ = 0, reused_ = 0;
  std::map<std::string, int64_t> parts_by_policy_;
};

}  // namespace ahbm::serve
