#pragma once
// Assembles summary.json from the records of every step (docs/scenarios.md lists the fields).
#include <optional>
#include <vector>

#include "runtime/run/run_types.h"
#include "runtime/step/step_runner.h"

namespace ahbm {

// Page statistics of the run and of the no-sharing baseline (prefix copied per branch).
struct KvReport {
  uint64_t slot_bytes = 0;     // one page slot on one PE: all layers, the group's KV heads
  uint64_t model_page_bytes = 0;  // one page of the model: all layers, all KV heads
  int64_t pages_per_pe = 0;
  int64_t allocations = 0, frees = 0, cow_copies = 0, peak = 0, in_use_end = 0;
  std::vector<int64_t> peak_per_pe;
  KvSnapshot at_peak;          // the step boundary with the most pages in use
  int64_t no_sharing_peak = 0;
  int64_t no_sharing_peak_pe_max = 0;
  std::optional<NoSharingRun> no_sharing_timed;  // with --compare-unbatched
};

Json build_summary(const Scenario& sc, const HwConfig& hw, const RunOptions& opt, uint64_t seed,
                   const std::vector<StepRecord>& steps, const KvReport& kv, const RunOutput& run);

// A whole model (runtime/step/model_steps.h): summary "operators" from `operators` (ModelSteps::json)
// plus the latencies a user asks of a model: TTFT (the run's start to the end of the first decode
// step, or of the fan-out without decode steps) and TPOT (the mean decode step); the model block's
// all-layer attention estimate becomes the attention actually placed on the timeline.
void add_model_latency(Json& summary, Json operators, const std::vector<StepRecord>& steps, int layers);

}  // namespace ahbm
