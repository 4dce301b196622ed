#pragma once
// The report stage of a step (runtime/step/step_runner.h: plan -> choose -> apply -> simulate ->
// report): the step's record, one part per stage that produced it, and the functions that fill
// each part from that stage's output alone. run_summary.cpp turns the records into summary.json.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hw/chip/energy.h"
#include "hw/chip/simulate.h"
#include "runtime/kv/page_manager.h"
#include "runtime/plan/planner.h"
#include "runtime/numerics/reference.h"
#include "runtime/scenario/session.h"
#include "runtime/step/timeline.h"

namespace ahbm {

struct KvSnapshot {
  int64_t in_use = 0, shared = 0, priv = 0, saved = 0;
};
KvSnapshot kv_snapshot(const KvPageManager& kv);

// Which step, before anything ran: its place in the run, its agents, the KV pages at its start.
struct StepId {
  std::string phase, label;
  int index = 0;
  std::vector<std::string> agents;  // in step order
  std::vector<int> agent_tokens;    // new tokens per agent
  KvSnapshot kv;
};
StepId identify(const Step& step, const KvPageManager& kv);

// What the plan holds (plan stage; a layout moves tiles, not rows or KV).
struct StepShape {
  int rows_per_kv_head = 0;
  int jobs = 0;
  std::vector<int64_t> kv_tokens_per_job;  // KV tokens each job reads
  int max_shard_tokens = 0;                // busiest PE of the first job
  uint64_t macs_expected = 0;              // 2 x rows x KV tokens x head_dim over the jobs
};
StepShape shape_of(const Plan& plan);

// What the simulation measured (simulate stage), and where the step sits on the run's timeline.
struct StepTiming {
  double start_ns = 0, ns = 0;
  std::vector<double> agent_done_ns;  // per step agent, relative to the step start
  uint64_t macs_simulated = 0, macs_skipped = 0, hbm_bytes = 0;  // skipped: fully masked KV tiles
  double dma_busy_max_ns = 0;
};
// Everything but start_ns (set when the step is placed on the timeline).
StepTiming timing_of(const Step& step, const Plan& plan, const SimResult& sim);

// Bytes the simulation read from every PE's HBM slice.
uint64_t hbm_bytes_read(const SimResult& sim);

// The step's O against float64 (with values).
struct StepCheck {
  NumericCheck datapath;               // on the stored (rounded) tensors
  std::optional<NumericCheck> storage;  // on the tensors before rounding (fp16, bf16)
};
StepCheck check_outputs(const Plan& plan, const std::vector<MatrixRM>& outputs, KvValues& values, uint64_t seed);

// The unbatched baseline of the step: every agent alone, agents in turn.
struct UnbatchedRun {
  double ns = 0;
  uint64_t hbm_bytes = 0;  // read from the HBM slices over every agent's run
  double max_abs_diff = 0;  // of each agent's O rows against the batched step's (with values)
  bool identical = true;
};

// The no-sharing baseline in time (with --compare-unbatched): the run's steps batched as the
// run batches them, on page tables where every fork copied the parent's pages, so each branch
// streams its own copy of the prefix (runtime/run/driver.cpp, timed_no_sharing).
struct NoSharingRun {
  struct Phase {
    double ns = 0;
    uint64_t hbm_bytes = 0;
    int steps = 0;
  };
  std::map<std::string, Phase> phases;  // by phase name; a join strategy's steps are not run
  double max_abs_diff_fanout = -1;      // O of the fan-out step vs the shared run's (values; -1: none)
  double max_abs_err = -1;              // worst O vs float64 over its steps (values; -1: none)
  std::string unavailable;              // why it could not run (e.g. the copies exceed a PE's HBM)
};

struct StepRecord {
  StepId id;
  StepShape shape;
  Json policy;  // runtime/plan/policy_report.h: choice, every estimate, roofline, launch
  StepTiming timing;
  std::optional<StepCheck> check;         // with values
  std::optional<UnbatchedRun> unbatched;  // with --compare-unbatched
  Json layers;                            // a whole model: the step's operators (StepLayers)
  // The step's energy (hw/chip/energy.h): its simulated activity (a whole model: the attention
  // once per layer plus every layer's operators) and static power over timing.ns.
  EnergyReading energy;
  // What the whole step computed and read from HBM, for the roofline over its time: the attention
  // (once per layer with a whole model) plus every operator (their W, Y, residual and kernel bytes).
  double work_macs = 0, work_hbm_bytes = 0;
};

// Appends the step's simulation to the timeline and records the runtime's spans of it: the step,
// each agent's part, and (GQA) which KV head each group served when. Sets timing.start_ns.
void place_on_timeline(Timeline& tl, const SimResult& sim, const Step& step, const Plan& plan, const ModelSpec& model,
                       int groups, StepRecord& rec);

}  // namespace ahbm
