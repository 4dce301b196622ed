#pragma once
// The serve engine's pools (runtime/serve/engine.cpp): groups of the chip that run steps one after
// another, each with its own KV pages and step runner, and the whole model's copy it holds.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hw/chip/simulate.h"
#include "hw/common/config/hw_config.h"
#include "runtime/kv/page_manager.h"
#include "runtime/model/memory_map.h"
#include "runtime/step/model_steps.h"
#include "runtime/step/system_collectives.h"
#include "runtime/serve/flow.h"
#include "runtime/step/step_runner.h"

namespace ahbm::serve {

// Groups that run steps one after another: the whole chip (co-located), the prefill or the
// decode pool of P-B-D, or a slice of placement prefix_affinity. A pool is simulated as a chip of
// its own groups (its KV heads spread over them), with its own KV pages; pools run at once on one
// clock, so while two pools step the chip's time is the longer step, not their sum.
// A whole model (model.config) on a pool's groups: its weights planned into the pool's HBM slices
// as `run` plans them on a chip of those groups, and the operators every step runs around its
// attention in every layer (runtime/step/model_steps.h), on chips of their own. Each P-B-D pool
// holds a copy of the weights (data parallel, as THInfer's prefill and decode instances); the
// prefix_affinity slices, all the same chip, hold a copy each and share one plan and one count.
struct PoolModel {
  HwConfig hw;
  MemoryMap weights;
  SimulatorPool sims;
  // Tensor parallelism: the collectives between the ranks (declared before `steps`, which calls them).
  std::optional<SystemCollectives> collectives;
  std::optional<ModelSteps> steps;
};

// The whole model's plans of a serve, by copy and groups ("chip|8", "prefill|2"): sampled
// serving's replays (sampled_serve.cpp) run the engine again on the plans of its first run.
struct ModelPlans {
  std::map<std::string, std::unique_ptr<PoolModel>> by_copy;
};

struct Pool {
  std::string name;
  int index = 0;  // in Engine::pools_ (Flow::pool, StepSample::pool)
  int replica = 0;  // model.parallel.dp: the data-parallel replica whose chips it is on
  HwConfig hw;  // the chip with `groups` = the pool's groups
  PoolModel* model = nullptr;  // a whole model: its weights and operators on the pool's groups
  std::string capacity_note;
  std::unique_ptr<KvPageManager> kv;
  std::optional<StepRunner> runner;
  std::string hw_key;  // the step cache's prefix: the pool's hardware, policy and launch
  int64_t reserved = 0;
  // The step in flight.
  bool stepping = false;
  double step_end = 0;
  std::vector<std::pair<Flow*, std::vector<Agent*>>> members;
  bool blocked = false;  // idle with prefills the buffer bound stopped (back-pressure)
  int steps = 0;
  double busy_ns = 0;
  int workflows = 0;  // admitted into it (prefix_affinity: pinned to the slice)
  // preemption = swap: KV swaps of its workflows at this step boundary, run before its next step's jobs
  double swap_pending_ns = 0;
  uint64_t swap_pending_bytes = 0;
};

}  // namespace ahbm::serve
