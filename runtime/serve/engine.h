#pragma once
// The serving engine (docs/serving.md): drives many workflows over one chip in simulated time.
// An event loop at step granularity: admit arrived workflows under the KV capacity in the
// scheduler's order, build the next step from every admitted workflow that has work (one part
// per workflow: its parent's prefill or decode, or its branches' fan-out prefills and decodes),
// time the step on the chip (StepRunner::batch_jobs + simulate_quiet, through the step cache), and
// advance the clock by it. A branch in a tool call or finished leaves the batch; a workflow's
// parent keeps its KV pages across rounds (prefix caching); the branches of a round share them.
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hw/chip/simulate.h"
#include "hw/common/contract/gemm_job.h"
#include "hw/common/config/hw_config.h"
#include "runtime/serve/admission.h"
#include "runtime/serve/sampling.h"
#include "runtime/serve/workload.h"

namespace ahbm::serve {

struct ModelPlans;
class PreemptionRule;
class Topology;
using PreemptionRegistry = Registry<PolicyEntry<PreemptionRule>>;
using TopologyRegistry = Registry<PolicyEntry<Topology>>;

// Where a run is, at a step boundary.
struct ServeProgress {
  size_t workflows_done = 0, workflows = 0;
  size_t requests_done = 0;
  size_t steps = 0;
  double now_ns = 0;  // simulated time
  int replay = 0, replays = 0;  // sampled serving: the replay under way (1..replays + 1), 0 in the sampled run
};

struct ServeOptions {
  std::string hw_file = "(built-in defaults)";
  std::string scheduler;  // overrides the workload's scheduler.policy ("" = keep)
  const NocRegistry* nocs = nullptr;
  const NocRegistry* system_networks = nullptr;  // hw/system/system_network.h; nullptr: the built-in ones
  // The admission rules scheduler.admission names (admission.h); null: builtin_admission_rules().
  const AdmissionRegistry* admissions = nullptr;
  // The preemption rules scheduler.preemption names (preemption.h); null: builtin_preemption_rules().
  const PreemptionRegistry* preemptions = nullptr;
  // The topologies scheduler.placement (or a scheduler.pbd block: pbd) names (topology.h); null:
  // builtin_topologies().
  const TopologyRegistry* topologies = nullptr;
  SimulatorPool* sims = nullptr;  // null: a pool of the run's own
  // A whole model's weight GEMMs (gemm_job.h; ahbm-sim serve --gemm-mapping, as run's). An
  // attention-only workload refuses x_stationary: it has no weight GEMM.
  GemmMapping gemm_mapping = GemmMapping::w_stationary;
  // Called before every step boundary's work (the Python module checks for Ctrl-C there); what it
  // throws ends the run. Results are the same with or without it.
  std::function<void()> poll;
  // Called at every step boundary (ahbm-sim serve's progress line). Results are the same with
  // or without it.
  std::function<void(const ServeProgress&)> progress;
  // Checked at every step boundary: true ends the run there (ahbm-sim serve on SIGINT); the
  // result is what was simulated, marked partial (ServeResult::partial), and has no replays.
  std::function<bool()> stop_requested;
  // Simulated ns: the run ends at the first step boundary at or after it (ahbm-sim serve
  // --stop-at-s), marked partial; sampled serving's replays stop there too, so the intervals are
  // those of the window. Infinity: the run goes on until every workflow has finished.
  double stop_at_ns = std::numeric_limits<double>::infinity();
};

// One request: a branch of a round, or the parent's answer ("main").
struct RequestRecord {
  int workflow = 0;
  int round = -1, branch = -1;  // -1, -1: the parent's answer
  int prefill_tokens = 0;       // branch: its instruction tokens; main: the uncached prompt and every join's tokens
  int requested_tokens = 0;     // tokens it decodes (main: the answer)
  int generated_tokens = 0;
  double ready_ns = 0;            // main: the workflow's arrival; branch: its round's fan-out
  double scheduled_ns = -1;       // start of its first step
  double first_token_ns = -1;     // end of its first decode step
  double last_token_ns = -1;
  double tool_ns = 0;             // off the chip in a tool call after its decode
  double done_ns = -1;
  bool cancelled = false;         // a "first" join went on without it
  int finished = 0;               // times it finished (conservation: exactly once)
  int preemptions = 0;            // on_demand admission: times its workflow was preempted while it was live
  // Its share of the energy of every step it was in: each step's energy split among the step's
  // requests by the new tokens each brought (prefill tokens, or 1 per decode), J.
  double energy_j = 0;
};

struct WorkflowRecord {
  int id = 0;
  std::string tmpl;
  double arrival_ns = 0, admitted_ns = -1, first_token_ns = -1, done_ns = -1;
  double tool_wait_ns = 0;  // per round: from the round's last on-chip token to its join, summed
  int64_t requested_tokens = 0, generated_tokens = 0;
  int64_t reserved_pages = 0;
  int slice = 0;                    // prefix_affinity: the slice it was pinned to (else 0)
  int preemptions = 0;              // on_demand admission: times it was preempted
  int64_t recomputed_tokens = 0;    // preemption = recompute: tokens of its KV prefilled again
  uint64_t swapped_bytes = 0;       // preemption = swap: bytes it sent to host memory (and got back)
};

// One step of the run.
struct StepSample {
  int pool = 0;  // the pool that ran it (P-B-D: 0 .. DP_P - 1 the prefill pools, then the DP_D decode pools; prefix_affinity: its slice; else 0, the whole chip)
  double start_ns = 0, ns = 0;
  int workflows = 0;  // parts
  int agents = 0;
  int tokens = 0;     // new tokens over every part
  int64_t kv_pages = 0;  // pages in use during the step (P-B-D: in both pools)
  int waiting = 0;       // arrived, not admitted
  int active = 0;        // admitted, not finished
  bool reused = false;   // timed from the step cache
  bool predicted = false;  // sampled serving: timed by the predictor (sampling.h), not simulated
  uint64_t hbm_bytes = 0;  // read from every PE's HBM slice
  double energy_j = 0;     // the step's energy (hw/chip/energy.h read_energy over its time), J
  double static_j = 0;     // of which the static power of its pool's groups over its simulated time
  // preemption = swap: KV swaps over the host link at the step's boundary, run before its jobs
  // (part of `ns`; a step with no workflows is swaps alone).
  double swap_ns = 0;
  uint64_t swap_bytes = 0;
  // Before its swaps, the wait for the host link while another pool's swaps or a P-B-D KV
  // transfer over the host hold it (part of `ns`).
  double host_wait_ns = 0;
};

// One preemption or restore of a workflow (at a step boundary).
struct PreemptionEvent {
  double at_ns = 0;
  int workflow = 0;
  bool restore = false;  // false: preempted; true: admitted again
  int64_t pages = 0;     // pages it freed (preempt) or took back (swap restore)
  int64_t tokens = 0;    // recompute, preempt: tokens of its dropped KV, added to its prefill
  uint64_t bytes = 0;    // swap: bytes over the host link
  double ns = 0;         // swap: the transfer's time
};

// on_demand admission (docs/serving.md, "Admission on demand and preemption"): what preemption did.
struct PreemptionResult {
  std::string mode;  // recompute | swap
  int64_t preemptions = 0, workflows_preempted = 0;
  int64_t recomputed_tokens = 0;       // recompute: tokens prefilled again
  uint64_t swap_out_bytes = 0, swap_in_bytes = 0;
  int64_t swap_outs = 0, swap_ins = 0;  // transfers (one per preemption and per readmission)
  uint64_t page_bytes = 0;              // a page's K and V over every KV head and layer (what a swap moves per page)
  std::vector<PreemptionEvent> events;
};

// P-B-D mode (docs/serving.md, "P-B-D"): what the pools, the buffer and the KV transfers did.
// Placement prefix_affinity: what each slice did.
struct PoolStats {
  std::string name;  // prefill | decode | slice0, slice1, ...
  int groups = 0;
  int64_t pages_total = 0, peak_pages = 0;
  int steps = 0;
  double busy_ns = 0;  // its steps' time
  int workflows = 0;   // slices: workflows pinned to it
  // P-B-D with a whole model: the pool's copy of the weights (memory map) and its operators'
  // totals (as ServeResult's; null otherwise).
  Json operators, memory_map;
};

struct KvTransfer {
  double start_ns = 0, ns = 0;  // start: when it got its path (kv_path host: once the host link was free)
  int sequences = 0;
  uint64_t bytes = 0;
  double wait_ns = 0;  // kv_path host: from the pull to the start, the host link busy with swaps
  // kv_migration layer: how long it ran before the pull, alongside the prefill steps of the
  // sequences it carries (0 for a whole transfer).
  double overlap_ns = 0;
};

struct PbdResult {
  int buffer_max = 0, micro_batch = 0;
  std::string kv_path;
  std::string kv_migration = "whole";  // scheduler.pbd.kv_migration
  double path_latency_ns = 0, path_gbps = 0;  // the transfer path's latency and bandwidth (0 = unbounded)
  std::string path_note;                      // where the bandwidth comes from
  // prefill, decode: the stages, each its pools' totals (groups, pages, steps and busy time
  // summed); prefill_pools, decode_pools: each pool's own, when a stage has several (DP_P, DP_D >
  // 1; empty for one).
  PoolStats prefill, decode;
  std::vector<PoolStats> prefill_pools, decode_pools;
  std::vector<std::pair<double, int>> buffer;  // (time, sequences in the buffer) at every change
  // Each prefill pool's time idle with prompts waiting that the buffer bound stopped, summed over
  // the pools.
  double backpressure_ns = 0;
  std::vector<KvTransfer> transfers;
  int64_t sequences = 0;  // sequences that went through the buffer
};

struct ServeResult {
  std::string scheduler;
  std::vector<RequestRecord> requests;
  std::vector<WorkflowRecord> workflows;
  std::vector<StepSample> steps;
  int steps_simulated = 0, steps_reused = 0;
  // Workflow parts of the steps by the attention policy they ran with (policy A unless the
  // workload's scheduler.attention_policy names another or auto).
  std::map<std::string, int64_t> parts_by_policy;
  int64_t pages_per_pe = 0, pages_total = 0, peak_pages = 0, in_use_end = 0, allocations = 0, frees = 0;
  int pes = 0;
  int kv_copies = 1;  // copies of each page in HBM: cubes under attention_policy B3 or auto (B3's), else 1
  // Static power of one KV-head group (its PEs, CUBEs and routers), W, as the steps' simulations
  // read it (a pool's static energy over a step / its time / its groups); 0 when no step ran.
  double static_w_per_group = 0;
  double end_ns = 0;  // the last workflow's end
  std::optional<PbdResult> pbd;  // set in P-B-D mode
  std::optional<PreemptionResult> preemption;  // set under on_demand admission
  std::string placement = "spread";  // scheduler.placement
  std::vector<PoolStats> slices;     // prefix_affinity: one per slice (one slice = the whole chip)
  // model.parallel.dp above 1: each replica's totals (its pools': groups, pages, steps and workflows
  // summed, busy_ns the groups-weighted mean of its pools'), and the chips each replica takes.
  std::vector<PoolStats> replicas;
  int chips_per_replica = 1;
  // A whole model (model.config): the operators' totals over every step and layer (ModelSteps::json
  // without by_step) and the HBM memory map (weights and the KV pool's peak); null otherwise.
  // Sampled serving: the operators of the detailed steps only.
  Json operators, memory_map;
  std::optional<SamplingResult> sampling;  // sampled serving (workload "sampling" block)
  // Stopped by ServeOptions::stop_requested or stop_at_ns before every workflow finished: the
  // records hold what was simulated (unfinished requests have done_ns = -1); partial_reason says which.
  bool partial = false;
  bool interrupted = false;  // by stop_requested (else, when partial, at stop_at_ns)
  std::string partial_reason;
};

// Throws InputError (bad workload, a workflow larger than the KV pool) or what a step's
// simulation throws (SimStall, InputError from the hardware checks). Exact mode: one engine run;
// a workload with a "sampling" block: sampled serving (runtime/serve/sampled_serve.cpp, where
// this is defined).
ServeResult serve(const Workload& w, const HwConfig& hw, const ServeOptions& opt);
// One run of the engine; `sampler` null: exact mode, every step simulated. `plans` (pools.h): the
// whole model's plans of an earlier run of the same workload and hardware to reuse (null: its own).
ServeResult run_engine(const Workload& w, const HwConfig& hw, const ServeOptions& opt, StepSampler* sampler,
                       ModelPlans* plans = nullptr);

// The step cache's key of a set of jobs: every job's rows, tiles, shards (tokens, owner and
// position of each), segments, replicas and flags, as bytes, after `prefix`. The engine's prefix
// is the whole hardware config, the policy and the launch schedule, so the key holds everything
// the simulated time depends on.
std::string step_key(const std::vector<AttentionJob>& jobs, const std::string& prefix = "");

}  // namespace ahbm::serve
