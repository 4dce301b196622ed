#pragma once
// Runs sets of attention jobs on an elaborated chip in a SystemC context of its own and returns
// the outputs, the latency spans, the waveform changes and per-module statistics. Simulator is
// the entry point the runtime uses; simulate() is a one-run Simulator.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hw/common/model/attn_state.h"
#include "hw/common/config/hw_config.h"
#include "hw/common/contract/gemm_job.h"
#include "hw/common/contract/job.h"
#include "hw/common/observe/span_recorder.h"
#include "hw/common/observe/stats.h"
#include "hw/common/observe/tlm_checker.h"
#include "hw/common/observe/trace_sink.h"
#include "hw/common/contract/vector_kernel.h"
#include "hw/noc/noc.h"

namespace ahbm {

// Progress of a running simulation: the phase of the oldest Q tile not yet back at the host,
// the simulated time, and the fraction of the planned PE work (MACs) done. `done` on the last call.
struct SimProgress {
  std::string phase;
  double sim_ns = 0;
  double fraction = 0;
  bool done = false;
  // Filled by the runtime (runtime/step/step_runner.h) for a run of many steps: this simulation's step
  // (1-based), the steps planned before the join (0 = not known; a join strategy's own steps
  // are decided as it goes and come on top) and the step's label ("decode[3]").
  int step = 0;
  int steps = 0;
  std::string step_label;
};

struct SimOptions {
  bool vcd = false;
  std::string hw_file = "hw config";  // named in error messages
  const NocRegistry* nocs = nullptr;  // nullptr: the built-in models
  // Called every few simulated microseconds (steps sized to ~50 ms of wall time) when set;
  // results are the same with or without it.
  std::function<void(const SimProgress&)> progress;
  // Stall watchdog window (hw/chip/watchdog.h): simulated ns without progress that count as a
  // livelock; 0 = detect deadlocks only.
  double watchdog_ns = 1e6;
  // Tests: every TLM link goes through a base-protocol checker (hw/common/observe/tlm_checker.h); the
  // violations come back in SimResult::tlm_checks. Results are the same with or without it.
  bool check_tlm = false;
  // Whether SimResult::spans gets the run's latency spans. false (a run timed for its end,
  // outputs and statistics only): an empty recorder, and the chip keeps its span buffer for the
  // next run. The spans are recorded either way (the watchdog reads them), so nothing else changes.
  bool keep_spans = true;
};

struct SimResult {
  std::vector<MatrixRM> outputs;      // per job (empty matrices in timing-only runs)
  double end_ns = 0;                  // when the last O tile reached the host
  std::vector<double> tile_done_ns;   // per global tile, in send order
  std::vector<std::pair<int, int>> tile_of;  // global tile -> (job, index in job)
  std::unique_ptr<TraceSink> trace;
  std::unique_ptr<SpanRecorder> spans;
  StatsNode stats;  // the chip's statistics tree (layout: hw/chip/chip_stats.h)
  TlmCheckLog tlm_checks;  // this run's (SimOptions::check_tlm)
  // A run of weight GEMMs: per GEMM job its counters and (values) Y, M × N fp32.
  std::vector<GemmOpStats> gemms;
  std::vector<MatrixRM> gemm_outputs;
  // A run of unfused vector kernels: per kernel its counters and (values) its output rows, M × N.
  std::vector<GemmOpStats> kernels;
  std::vector<MatrixRM> kernel_outputs;
};

// Throws InputError when the jobs do not fit the hardware (shard count, SRAM, HBM capacity).
void check_jobs(const HwConfig& cfg, const std::vector<AttentionJob>& jobs, const std::string& hw_file);
// Part of check_jobs: throws InputError, naming the PE and the slow parameters, when a closed-form
// lower bound of the run's simulated time (a PE's GEMM and vector cycles, its KV bytes from HBM)
// is beyond what simulated time can represent (max_run_ns(), hw/common/base/timing.h). Runs that
// pass it and still run too long stop with the watchdog's InputError (hw/chip/watchdog.h).
void check_run_length(const HwConfig& cfg, const std::vector<AttentionJob>& jobs, const std::string& hw_file);

// One hardware configuration, simulated run after run. Elaborating a chip (SystemC objects,
// coroutine stacks for its threads) costs more than a timing-only run of the default scenario,
// so the chip is kept: each run starts where the previous one went idle, at the next clock edge
// (its epoch), every module first goes back to its built state, and every time reported counts
// from the epoch. A run's results are therefore byte-identical to those of a new chip (tested).
// A new chip is elaborated when a run's jobs use other KV-head groups than the chip was built
// for, after a run that failed (stall, numeric fault), and for every run with a NoC model that
// cannot restart (Noc::restartable). Not thread-safe; several Simulators may live in one process.
class Simulator {
 public:
  explicit Simulator(HwConfig cfg, SimOptions opt = {});
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // Throws InputError when the jobs do not fit the hardware, SimStall on a deadlock or livelock
  // (with which modules wait on what) and NumericFault when a NaN or Inf appears in the datapath.
  // The jobs are read in place during the call.
  SimResult run(const std::vector<AttentionJob>& jobs);
  // A run of weight GEMMs (hw/common/contract/gemm_job.h): the jobs run one after another on each PE, X
  // of all of them streamed from the run's start; a GEMM that needs another's Y is a later run.
  // end_ns is when the last Y block was written back (or gathered). Same errors as run().
  SimResult run_gemms(const std::vector<GemmJob>& gemms);
  // A run of unfused vector kernels (hw/common/contract/vector_kernel.h), one after another on each PE.
  // end_ns is when the last PE wrote its last rows back. Same errors as run().
  SimResult run_vector_kernels(const std::vector<VectorKernelJob>& kernels);
  // Chips elaborated so far (tests and benchmarks check reuse with it).
  int elaborations() const { return elaborations_; }
  // Replaces the progress callback for the following runs (results do not depend on it).
  void set_progress(std::function<void(const SimProgress&)> progress) { opt_.progress = std::move(progress); }
  // Replaces SimOptions::keep_spans for the following runs (it changes what a run returns, not the chip).
  void set_keep_spans(bool keep) { opt_.keep_spans = keep; }

 private:
  struct Elaborated;
  SimResult run_any(const std::vector<AttentionJob>& jobs, const std::vector<GemmJob>& gemms,
                    const std::vector<VectorKernelJob>& kernels = {});
  HwConfig cfg_;
  SimOptions opt_;
  std::unique_ptr<Elaborated> chip_;
  int elaborations_ = 0;
};

// A one-run Simulator: elaborates a chip for `jobs`, runs them, and tears it down.
SimResult simulate(const HwConfig& cfg, const std::vector<AttentionJob>& jobs, const SimOptions& opt = {});

// Simulators kept by everything that makes their chips differ (the hardware config, the VCD
// switch, the NoC registry, the watchdog window), so a program that simulates many steps, some
// with other configs (a join's Q-tile probes), elaborates each distinct chip once. run() is
// simulate() with reuse.
class SimulatorPool {
 public:
  SimResult run(const HwConfig& cfg, const std::vector<AttentionJob>& jobs, const SimOptions& opt = {});
  SimResult run_gemms(const HwConfig& cfg, const std::vector<GemmJob>& gemms, const SimOptions& opt = {});
  SimResult run_vector_kernels(const HwConfig& cfg, const std::vector<VectorKernelJob>& kernels, const SimOptions& opt = {});
  int elaborations() const;

 private:
  Simulator& simulator(const HwConfig& cfg, const SimOptions& opt);
  std::map<std::string, std::unique_ptr<Simulator>> sims_;
};

}  // namespace ahbm
