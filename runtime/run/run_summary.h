#pragma once
// summary.json of `ahbm-sim run` (docs/outputs.md; its schema docs/schema/summary.schema.json) as
// a typed value, RunSummary: build_summary computes it from the records of every step, one
// function per section; the driver adds what only it knows (a whole model's memory map and
// operators, the join); the power cap adds its report; to_json(const RunSummary&) is the one
// place it becomes JSON. Sections whose JSON is owned elsewhere stay Json: the policy report
// (runtime/plan/policy_report.h), the roofline (runtime/policy/roofline.h), the statistics tree
// (runtime/report/stats_tree.h), the echoed config, provenance, a step's layers, the memory map,
// a whole model's operators and the join summary.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hw/common/base/json_reader.h"
#include "hw/common/config/hw_config.h"
#include "runtime/report/energy_json.h"
#include "runtime/report/latency.h"
#include "runtime/report/power.h"
#include "runtime/scenario/scenario.h"
#include "runtime/step/step_record.h"

namespace ahbm {

struct RunOptions;
struct RunOutput;

// "model": the model's shape, how its KV heads map onto the groups, and its attention time over
// every layer.
struct RunModelSummary {
  int num_q_heads = 0, num_kv_heads = 0, q_heads_per_kv_head = 0, head_dim = 0, layers = 0;
  int kv_head_groups = 0, groups_used = 0, time_multiplexed_rounds = 0;
  double attention_ns_all_layers = 0;
  std::string note;  // how attention_ns_all_layers was obtained
};

// "precision": the storage type (accumulation, softmax state and output are fp32).
struct PrecisionSummary {
  std::string dtype;
  uint64_t bytes_per_element = 0;
};

// "phases"."<phase>"."agents"."<agent>": its tokens and steps in the phase, and when it was done.
struct PhaseAgentSummary {
  int tokens = 0, steps = 0;
  double done_ns = 0, latency_ns = 0;  // its last step's end; from the phase's start
};

// "phases"."<phase>": the extent of its steps and their sums.
struct PhaseSummary {
  double start_ns = 0, end_ns = 0, ns = 0;
  int steps = 0, rows_per_kv_head = 0, jobs = 0;
  uint64_t hbm_bytes_read = 0;
  int64_t kv_pages_in_use = 0;  // at its last step's start
  std::optional<double> unbatched_ns;  // with --compare-unbatched
  std::map<std::string, PhaseAgentSummary> agents;
};

// "steps"[i]: one simulated step.
struct StepSummary {
  std::string label, phase;
  double start_ns = 0, ns = 0, dma_busy_max_pe_ns = 0, energy_j = 0;
  int rows_per_kv_head = 0, jobs = 0, max_shard_tokens = 0;
  size_t agents = 0;
  int64_t kv_tokens_per_kv_head = 0, kv_pages_in_use = 0;  // the first job's KV tokens; pages at its start
  uint64_t hbm_bytes_read = 0;
  std::optional<double> max_abs_err, max_abs_err_vs_unrounded;  // with values (the latter: fp16, bf16)
  std::optional<double> unbatched_ns;                           // with --compare-unbatched
  Json layers;                                                  // a whole model: the step's operators; null: none
};

// "agents"."<agent>": its fan-out rows and latency, and its decode progress.
struct AgentSummary {
  int rows = 0, new_tokens = 0;
  std::optional<double> latency_ns;  // in the fan-out step
  std::optional<int> decoded_tokens;
  std::optional<double> decode_done_ns;
};

// "kv": page statistics of the run and of the no-sharing baseline, bytes over every layer and
// KV head of the model.
struct KvAtPeakSummary {
  int64_t pages = 0, shared_pages = 0, private_pages = 0;
  uint64_t shared_bytes = 0, private_bytes = 0, bytes_saved_by_sharing = 0;
};
struct KvNoSharingSummary {
  int64_t peak_pages = 0, peak_pages_on_one_pe = 0;
  uint64_t peak_bytes = 0;
  bool fits = true;  // on every PE
};
struct KvSummary {
  int page_tokens = 0;
  std::string prefix_placement, private_placement;
  int64_t pages_per_pe_capacity = 0, pages_allocated = 0, pages_freed = 0, cow_copies = 0, pages_in_use_end = 0;
  int64_t peak_pages = 0, peak_pages_on_one_pe = 0;
  std::vector<int64_t> peak_pages_per_pe;
  uint64_t page_slot_bytes = 0, page_bytes_model = 0, peak_bytes = 0, bytes_saved_by_sharing = 0;
  KvAtPeakSummary at_peak;
  KvNoSharingSummary no_sharing_baseline;
};

// "arithmetic": the MACs of every job, simulated and skipped (fully masked KV tiles).
struct ArithmeticSummary {
  uint64_t macs_expected = 0, macs_simulated = 0, macs_skipped = 0;
  bool unchanged = true;  // expected = simulated + skipped
};

// "baselines"."unbatched" (--compare-unbatched): every step re-run one agent at a time.
struct UnbatchedSummary {
  double total_ns = 0, batched_total_ns = 0, speedup = 0;
  uint64_t hbm_bytes_read = 0, batched_hbm_bytes_read = 0;
  std::optional<double> max_abs_diff_vs_batched;  // with values
  bool identical_o = true;                        // with values
};
// "baselines"."no_sharing" (--compare-unbatched): the same steps with every branch reading its
// own copy of the prefix, beside the shared run, per phase and in total.
struct NoSharingPhaseSummary {
  double ns = 0, shared_ns = 0, speedup_of_sharing = 0;
  uint64_t hbm_bytes_read = 0, shared_hbm_bytes_read = 0;
  int steps = 0;
};
struct NoSharingSummary {
  std::string unavailable;  // why it could not run; then nothing else is written
  double total_ns = 0, shared_total_ns = 0, speedup_of_sharing = 0, hbm_bytes_ratio = 0;
  uint64_t hbm_bytes_read = 0, shared_hbm_bytes_read = 0;
  std::map<std::string, NoSharingPhaseSummary> phases;
  std::optional<double> max_abs_err, fanout_max_abs_diff_vs_shared;  // with values
};
struct BaselinesSummary {
  std::optional<UnbatchedSummary> unbatched;
  std::optional<NoSharingSummary> no_sharing;
};

// "gemm_batching": GEMM engine use of the fan-out batch on one PE vs one run per agent.
struct GemmUseSummary {
  uint64_t cycles_per_pe = 0, tiles = 0;
  double utilization = 0;
};
struct GemmBatchingSummary {
  int tile_m = 0, tile_n = 0, tile_k = 0;
  int kv_tokens_per_pe = 0;
  uint64_t rows = 0;  // batched
  GemmUseSummary batched;
  size_t runs = 0;    // per agent
  GemmUseSummary per_agent_runs;
  double speedup = 0;
};

// "numerics": the outputs against the float64 reference (with values).
struct StorageCheckSummary {
  double max_abs_err = 0, max_rel_err = 0, tolerance_abs = 0;
  bool pass = true;
};
// How evenly the attention's work spread over the PEs and groups the run simulated, from each
// PE's MACs over the whole run (THInfer's load imbalance: a short sequence cut into many shards
// leaves some PEs a token fewer, or none, while every PE pays the same per-tile overheads).
struct WorkBalanceSummary {
  int pes = 0, groups = 0;  // in the simulated groups
  int idle_pes = 0;         // of them, PEs that computed no MAC
  double pe_macs_mean = 0, pe_macs_max = 0;
  double pe_imbalance = 0;     // pe_macs_max / pe_macs_mean - 1 (0: even; 0 when nothing ran)
  double group_imbalance = 0;  // the same over the groups' sums
};

struct NumericsSummary {
  bool checked = false;  // false: nothing else is written
  double max_abs_err = 0, max_rel_err = 0, ref_max_abs = 0, tolerance_abs = 0;
  std::string dtype;
  std::optional<StorageCheckSummary> storage;  // fp16, bf16: against the tensors before rounding
  bool pass = true;
};

// "noc": the NoC model by name and its traffic totals (its statistics-tree node).
struct NocSummary {
  std::string model;
  Json stats;
};

// "operators" (a whole dense model): the operators' totals (ModelSteps::json) and the latencies
// a user asks of a model.
struct ModelOperatorsSummary {
  Json totals;
  double ttft_ns = 0;     // the run's start to the end of the first decode step (or of the fan-out without one)
  std::string ttft_step;  // that step's label
  double tpot_ns = 0;     // the mean decode step
  int decode_steps = 0;
};

// "config": what ran, as resolved.
struct RunConfigSummary {
  Json hw, scenario;
  std::string hw_file, scenario_file;
};

struct RunSummary {
  std::string scenario;
  uint64_t seed = 0;
  Json policy;  // the fan-out step's (runtime/plan/policy_report.h); null without one
  double total_ns = 0;
  int rows = 0;  // Q rows per KV head at the fan-out
  size_t q_tiles = 0;
  int q_tile_rows = 0;
  RunModelSummary model;
  PrecisionSummary precision;
  std::map<std::string, PhaseSummary> phases;
  std::vector<StepSummary> steps;
  std::map<std::string, AgentSummary> agents;
  KvSummary kv;
  ArithmeticSummary arithmetic;
  BaselinesSummary baselines;
  report::RunEnergy energy;
  Json system_energy;  // a model split over chips: energy.system (ModelSteps::system_energy); null: one chip
  report::PowerSummary power;
  std::map<std::string, double> busy_ns_by_activity;                           // hardware spans
  std::map<std::string, std::map<std::string, double>> busy_ns_by_component;  // by activity
  GemmBatchingSummary gemm_batching;
  NumericsSummary numerics;
  Json roofline;  // runtime/policy/roofline.h roofline_by_step_kind
  WorkBalanceSummary balance;
  Json stats;     // the run's statistics tree
  RunConfigSummary config;
  Json simulator;  // provenance (runtime/io/provenance.h)
  NocSummary noc;
  report::LatencySummary latency;
  Json memory_map;  // a whole model (runtime/model/memory_map.h); null: none
  std::optional<ModelOperatorsSummary> operators;  // a whole dense model
  Json join;  // a join strategy (runtime/run/join_phase.h JoinOutcome::summary); null: none
};

// summary.json, keys in alphabetical order (nlohmann's objects).
Json to_json(const RunSummary& s);

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

// Every section but those the driver adds (memory_map, operators, join); `run` gives the
// timeline (spans, statistics, end), the fan-out plan and the power trace.
RunSummary build_summary(const Scenario& sc, const HwConfig& hw, const RunOptions& opt, uint64_t seed,
                         const std::vector<StepRecord>& steps, const KvReport& kv, const RunOutput& run);

// A whole model (runtime/step/model_steps.h): summary "operators" from `operators` (ModelSteps::json)
// plus the latencies a user asks of a model: TTFT (the run's start to the end of the first decode
// step, or of the fan-out without decode steps) and TPOT (the mean decode step); the model block's
// all-layer attention estimate becomes the attention actually placed on the timeline.
void add_model_latency(RunSummary& summary, Json operators, const std::vector<StepRecord>& steps, int layers);

}  // namespace ahbm
