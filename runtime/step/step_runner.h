#pragma once
// One step of a scenario as a straight line of stages, each taking the typed output of the one
// before and only the settings it needs:
//   plan      Planner::plan            runtime/plan/planner.h              Plan: the Policy-A jobs (rows,
//                                                                      pages, masks) and the candidate
//                                                                      layouts (policy, Q tile rows)
//   choose    choose                   runtime/plan/choose.h        Choice: the requested policy or the
//                                                                      cost model's pick (one entry)
//   apply     apply_layout             runtime/policy/apply_policy.h  the jobs laid out for the choice
//   simulate  StepRunner::simulate     hw/chip/simulate.h             SimResult
//   report    step_record.h, policy_report.h                          StepRecord, placed on the timeline
// and, when asked, the unbatched baseline (every agent planned and simulated alone, Policy A,
// with the run's launch schedule and attention kernels).
// The planner and the cost model are each entered once per job set (the cost model not for a
// serve part whose policy leaves one candidate: batch_jobs); StepRunner::calls() counts the
// entries (testbench: test_step_pipeline.cpp).
#include <string>
#include <vector>

#include "hw/chip/simulate.h"
#include "runtime/kv/page_manager.h"
#include "runtime/plan/choose.h"
#include "runtime/plan/planner.h"
#include "runtime/policy/cost_model.h"
#include "runtime/numerics/reference.h"
#include "runtime/scenario/session.h"
#include "runtime/step/step_record.h"
#include "runtime/step/timeline.h"

namespace ahbm {

// Work a whole model adds around each step's attention (runtime/step/model_steps.h): the
// operators before the attention of layer 0, then the rest of layer 0 and every other layer.
class StepLayers {
 public:
  virtual ~StepLayers() = default;
  virtual void before_attention(const Step& step, Timeline& tl) = 0;
  // Returns the step's breakdown (summary steps[].layers); the attention took `attention_ns`.
  virtual Json after_attention(const Step& step, Timeline& tl, double attention_ns) = 0;
  // The step's time off the timeline with its attention taking `attention_ns` (probes).
  virtual double step_ns(const Step& step, double attention_ns) = 0;
  // Layers per step: the step's attention runs once in each.
  virtual int layers() const = 0;
  // The dynamic energy of the step's operators over every layer (components "layer.<op>").
  virtual EnergyReading operators_energy(const Step& step) = 0;
  // The activity of the step's operators over every layer (their MACs and HBM bytes: the roofline).
  virtual Activity operators_activity(const Step& step) = 0;
};

// What a run's steps share (the driver fills it from RunOptions).
struct StepSettings {
  uint64_t seed = 1;
  KvValues* values = nullptr;  // null: timing only
  bool compare_unbatched = false;
  std::string policy = "A";  // A, B1..B5, auto (runtime/policy/)
  Objective objective = Objective::time;  // what auto and the tile choice minimise (runtime/plan/choose.h)
  std::string launch = "unified";  // unified | per-head: one kernel launch per step or per KV head
  // Phased attention fusion (a whole model's model.fusion.attention): false sends each KV block's
  // scores through HBM (AttentionJob::scores_in_hbm).
  bool attention_fused = true;
  SimOptions sim;
  // Keeps elaborated chips across steps (hw/chip/simulate.h); null: a new chip per simulation.
  SimulatorPool* sims = nullptr;
  // Steps the run plans before its join (SimProgress::steps of sim.progress reports).
  int planned_steps = 0;
  // A whole model's layers around each step's attention; null: the attention core alone.
  StepLayers* layers = nullptr;
};

// How often each stage was entered.
struct StageCalls {
  int plan = 0;        // job sets planned
  int cost_model = 0;  // entries into the cost model
  int simulate = 0;    // job sets simulated
};

struct StepRun {
  StepRecord record;
  Plan plan;      // jobs laid out for the choice
  SimResult sim;  // of the batched jobs (its spans were appended to the timeline)
};

class StepRunner {
 public:
  StepRunner(const Scenario& sc, const HwConfig& hw, const StepSettings& set);

  // The step on the run's timeline. `q_tile_rows` > 0 fixes its Q tile rows (a join prefill's).
  StepRun run(const KvPageManager& kv, const Step& step, Timeline& tl, int q_tile_rows = 0);
  // The step's simulated time off the timeline: planned timing only, Policy A, no VCD, with the
  // run's launch schedule and attention kernels (a join prefill's extrapolation probe).
  double probe(const KvPageManager& kv, const Step& step, int q_tile_rows);
  // A step's time when its attention takes `attention_ns`: with a whole model's layers, the
  // layers' operators around it (StepLayers::step_ns); else the attention alone. Baselines use
  // it so they compare whole steps with whole steps.
  double step_ns(const Step& step, double attention_ns) const;
  // Q tile rows the planner gives `rows` rows (a join prefill sizes its simulated part by it).
  int tile_rows(int64_t rows) const { return planner_.tile_rows(rows); }
  // The same stages for a join strategy run beside the run: no unbatched baseline, VCD or progress.
  StepRunner quiet() const;

  // A serving step (runtime/serve/): several steps that share one launch on the chip, each a
  // different workflow's agents. Each part is planned on its own, timing only (its agents'
  // pages shared by all of them or private to one, as in run()), laid out by the run's policy
  // setting and launch schedule; the parts' jobs are concatenated, so rows of different parts
  // never meet in one job (job boundaries keep workflows apart, the masks keep branches apart).
  // `chosen`, when given, receives each part's layout (the policy and tile it runs with).
  std::vector<AttentionJob> batch_jobs(const KvPageManager& kv, const std::vector<Step>& parts,
                                       std::vector<Layout>* chosen = nullptr);
  // `jobs` simulated off any timeline (no VCD, no progress, no latency spans: SimOptions::keep_spans).
  SimResult simulate_quiet(const std::vector<AttentionJob>& jobs);

  StageCalls calls() const { return {planner_.calls(), cost_model_.calls(), simulations_}; }

 private:
  SimResult simulate(const std::vector<AttentionJob>& jobs, const SimOptions& opt);
  // The planner's jobs for `set` with the step's kernels: the launch schedule (set_.launch) and,
  // with attention fusion off, the scores through HBM. Every job set the runner simulates or
  // estimates (the run's step, a baseline's agent, a probe, a serve part) is planned here, so
  // none runs with other kernels than the run's; before choose, so the estimates count the
  // launches.
  Plan plan(const KvPageManager& kv, const Step& step, const Planner::JobSet& set);
  UnbatchedRun unbatched(const KvPageManager& kv, const Step& step, int q_tile_rows, const Plan& batched_plan,
                         const SimResult& batched, const SimOptions& step_sim);

  const Scenario& sc_;
  const HwConfig& hw_;
  StepSettings set_;
  Planner planner_;
  CostModel cost_model_;
  int simulations_ = 0;
  int steps_run_ = 0;  // run() calls so far: the step number progress reports carry
};

}  // namespace ahbm
