#pragma once
// Plans, simulates and checks one step of a scenario: the batched jobs (and, if asked, the
// unbatched baseline of the same step), the numeric checks against the float64 reference,
// the per-agent completion times, and the bookkeeping the summary reports.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hw/chip/simulate.h"
#include "runtime/kv/page_manager.h"
#include "runtime/planner.h"
#include "runtime/reference.h"
#include "runtime/session.h"
#include "runtime/timeline.h"

namespace ahbm {

struct StepSettings {
  uint64_t seed = 1;
  KvValues* values = nullptr;  // null: timing only
  bool compare_unbatched = false;
  std::string policy = "A";  // A, B1..B5, auto (runtime/policy/)
  SimOptions sim;
  // Keeps elaborated chips across steps (hw/chip/simulate.h); null: a new chip per simulation.
  SimulatorPool* sims = nullptr;
};

// simulate(), through the settings' simulator pool when there is one.
SimResult simulate_step(const HwConfig& hw, const std::vector<AttentionJob>& jobs, const SimOptions& opt,
                        const StepSettings& set);

struct KvSnapshot {
  int64_t in_use = 0, shared = 0, priv = 0, saved = 0;
};
KvSnapshot kv_snapshot(const KvPageManager& kv);

struct StepRecord {
  std::string phase, label;
  int index = 0;
  double start_ns = 0, ns = 0;
  int rows_per_kv_head = 0;
  int jobs = 0;
  std::vector<std::string> agents;            // in step order
  std::vector<int> agent_tokens;              // new tokens per agent
  std::vector<double> agent_done_ns;          // relative to the step start
  std::vector<int64_t> kv_tokens_per_job;     // KV tokens each job reads
  int max_shard_tokens = 0;                   // busiest PE of the first job
  uint64_t macs_expected = 0, macs_simulated = 0, hbm_bytes = 0;
  double dma_busy_max_ns = 0;
  bool checked = false;
  NumericCheck datapath;                      // vs float64 on the stored (rounded) tensors
  std::optional<NumericCheck> storage;        // vs float64 on the tensors before rounding
  std::optional<double> unbatched_ns;
  double unbatched_max_abs_diff = 0;
  bool unbatched_identical = true;
  KvSnapshot kv;
  Json policy;  // runtime/policy/policy_report.h: decision, every estimate, roofline, launch
};

struct StepRun {
  StepRecord record;
  Plan plan;
  SimResult sim;  // of the batched jobs (its spans were appended to the timeline)
};

// A step's record before anything ran: phase, label, index, and the KV pages at its start.
StepRecord begin_record(const Step& step, const KvPageManager& kv);

StepRun run_step(const Scenario& sc, const HwConfig& hw, const KvPageManager& kv, const Step& step,
                 const StepSettings& set, Timeline& timeline);

}  // namespace ahbm
