#pragma once
// What a run is asked (RunOptions) and what it gives back (RunOutput, StepOutput): the types
// shared by the driver and the code it calls (preflight, power cap, summary, report files), kept
// apart from driver.h so that those callees need not include the driver.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hw/chip/simulate.h"
#include "runtime/plan/planner.h"
#include "runtime/report/power.h"
#include "runtime/report/trace_level.h"
#include "runtime/run/run_summary.h"
#include "runtime/scenario/session.h"
#include "runtime/step/step_runner.h"

namespace ahbm {

struct RunOptions {
  std::optional<uint64_t> seed;  // overrides the scenario's seed
  std::string policy = "A";      // A, B1..B5, auto (runtime/policy/, docs/policies.md)
  Objective objective = Objective::time;  // what auto and the tile choice minimise (runtime/plan/choose.h)
  std::string launch = "unified";  // kernel launches per step: unified | per-head (docs/policies.md)
  bool vcd = true;
  bool dump_tensors = false;
  report::TraceLevel trace = report::TraceLevel::automatic;  // what latency.csv and trace.json hold
  bool trace_gz = false;         // trace.json.gz (gzip) instead of trace.json
  // Window of the power trace (summary.json power, power.csv, waves.vcd chip.power_w, trace.json
  // counters), ns; 0: report::auto_power_window_ns of the run's time.
  double power_window_ns = 0;
  bool values = true;            // false: timing only (no tensors, no numeric check)
  double tolerance = 1e-4;       // max_abs_err allowed against the float64 reference on the stored tensors
  bool compare_unbatched = false;  // also simulate every step unbatched (one job per agent) and compare
  bool keep_steps = false;       // keep every step's plan and outputs in RunOutput::steps
  bool join_compare = false;     // run every join strategy side by side (as the scenario's join.compare)
  // A whole dense model: simulate the operators of every layer, not once per distinct layer
  // (runtime/step/model_steps.h; the results are the same, tested).
  bool every_layer = false;
  // A whole model: the weight GEMMs' mapping (hw/common/contract/gemm_job.h; summary operators.mapping).
  GemmMapping gemm_mapping = GemmMapping::w_stationary;
  std::string hw_file = "(built-in defaults)";
  std::string scenario_file = "(scenario)";
  const NocRegistry* nocs = nullptr;
  // The system networks by name (hw/system/system_network.h); nullptr: the built-in ones.
  const NocRegistry* system_networks = nullptr;
  std::function<void(const SimProgress&)> progress;  // see SimOptions::progress
  double watchdog_ns = 1e6;      // stall watchdog window (SimOptions::watchdog_ns)
  // Elaborated chips to simulate on, kept by the caller across runs (the Python module's
  // in-process sweeps); nullptr: a pool of the run's own. Results are the same either way.
  SimulatorPool* sims = nullptr;
};

struct StepOutput {
  Step step;
  Plan plan;
  std::vector<MatrixRM> outputs;  // per job
  StatsNode stats;                // per-module statistics of this step alone
};

struct RunOutput {
  Plan plan;      // the fan-out step (what tensors/ holds)
  SimResult sim;  // every step on one timeline: spans, waveform, tile completion times, end_ns,
                  // statistics summed over the steps; outputs of the fan-out step
  RunSummary summary;  // summary.json (to_json)
  report::PowerTrace power;  // the run's power over time (runtime/report/power.h)
  std::vector<StepOutput> steps;  // only with RunOptions::keep_steps
  std::string join_table, join_csv;  // with a join strategy: side-by-side table (CLI) and join.csv
  StageCalls stage_calls;  // how often the run's steps entered each stage (join strategies compared aside excluded)
};

}  // namespace ahbm
