#pragma once
// A serving workload (JSON, docs/serving.md): the model and KV paging of a scenario, workflow
// templates (a prompt, rounds of fan-out / decode / tool call / join, an answer), a weighted mix
// of them, an arrival process (Poisson, explicit timestamps, or an Azure LLM inference trace
// CSV whose rows become plain requests), the scheduler and its limits, and SLO targets.
// expand() turns it into the concrete workflows of one run: arrival time, template, and every
// token count drawn from the workload's seed.
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "hw/common/base/json_reader.h"
#include "runtime/scenario/scenario.h"
#include "runtime/serve/azure_csv.h"
#include "runtime/serve/sampling.h"

namespace ahbm::serve {

// A token count: fixed (lo == hi) or drawn uniformly from [lo, hi] with the workload's seed.
struct TokenCount {
  int lo = 0, hi = 0;
  int draw(std::mt19937_64& rng) const;
};

struct WorkflowTemplate {
  std::string name;
  double weight = 1;       // share of arrivals in the mix
  int prompt_tokens = 0;   // the context the workflow arrives with
  int cached_tokens = 0;   // of the prompt, already in the KV cache (no prefill step for them)
  int rounds = 0;          // 0: a plain request (prompt prefill, then the answer)
  int branches = 0;        // sub-agents per round
  TokenCount branch_new_tokens;     // instruction tokens each branch prefills at the fan-out
  TokenCount branch_decode_tokens;  // tokens each branch decodes
  double tool_ns = 0;      // after its decode a branch waits this long on a tool, off the chip
  std::string join = "all";  // all | first: the join waits for every branch or the first `join_first`
  int join_first = 0;
  int join_tokens = 0;     // continuation the parent prefills after each join (the branches' results)
  TokenCount answer_tokens;  // tokens the parent decodes after the last round
};

struct ArrivalSpec {
  std::string process = "poisson";  // poisson | timestamps | azure_csv
  double rate_per_s = 1;             // poisson
  int count = 1;                     // poisson: workflows; azure_csv: rows read at most
  std::vector<double> times_ns;      // timestamps (non-decreasing)
  std::string file;                  // azure_csv, resolved against the workload's folder
};

// P-B-D mode (docs/serving.md, "P-B-D"): the chip's KV-head groups split into a prefill pool and
// a decode pool with a bounded buffer of prefilled sequences between them (THInfer's
// prefill-buffer-decode pipeline). Present only when the workload has a scheduler.pbd block.
struct PbdSpec {
  int prefill_groups = 1;   // groups of each prefill pool
  int prefill_pools = 1;    // DP_P: prefill pools of prefill_groups groups each, sharing the buffer
  int decode_groups = 0;    // groups of each decode pool; 0 = the chip's groups less the prefill pools', split evenly
  int decode_pools = 1;     // DP_D: decode pools of decode_groups groups each, pulling from the one buffer
  int buffer_max = 4;       // Buf_max: prefilled sequences the buffer holds (in transfer included)
  int micro_batch = 1;      // sequences per prefill step and per pull of the decode pool
  std::string kv_path = "noc";  // noc | host: how the decode pool pulls a sequence's KV
  // whole: a pulled sequence's KV moves in one transfer; layer: each layer's KV is sent as that
  // layer's prefill ends, overlapping the next layers (THInfer's asynchronous per-layer migration).
  std::string kv_migration = "whole";
};

struct SchedulerSpec {
  std::string policy = "fcfs";    // a name of builtin_schedulers() (runtime/serve/scheduler.h)
  int max_batch_tokens = 4096;    // new tokens per step over every workflow (one part may exceed it alone)
  int max_workflows = 0;          // admitted at once; 0: no limit beyond the KV capacity
  bool step_cache = true;         // reuse the simulated time of a step whose jobs were simulated before
  // Baselines: share_prefix = false forks every branch as a copy of its parent's pages (no
  // sharing); batch_branches = false plans every branch as its own part of the step (branches as
  // independent requests: each streams the prefix for itself).
  bool share_prefix = true;
  bool batch_branches = true;
  std::optional<PbdSpec> pbd;  // unset: prefill and decode co-located on every group
  // How every step's attention runs (docs/policies.md): a policy, A..B5, or "auto" (the cost
  // model's pick for each workflow's part of the step), each at the tile the cost model picks;
  // and the kernel launches, "unified" (one per step) or "per-head" (one per KV head).
  std::string attention_policy = "A";
  std::string launch = "unified";
  // What auto and the tile choice minimise: "time", "energy" or "edp" (runtime/plan/choose.h).
  std::string objective = "time";
  // reserve: admit a workflow when its upper-bound KV reservation fits (the pool never runs out).
  // on_demand: admit when the pages it needs now fit; a step that cannot get its pages preempts
  // the lowest-priority workflows, which restore their KV by `preemption` when readmitted:
  // recompute (a timed prefill of their sequence) or swap (out to host memory and back over the
  // host link). docs/serving.md, "Admission on demand and preemption".
  std::string admission = "reserve";
  std::string preemption = "recompute";
  bool on_demand() const { return admission == "on_demand"; }
  // Which groups a workflow's KV heads go to (docs/serving.md, "Placement"). spread: every
  // workflow on every group (KV head h on group h mod groups; the chip is one pool). prefix_affinity:
  // the chip is cut into slices of num_kv_heads groups (one slice when groups < 2 x num_kv_heads),
  // each with its own KV pages and steps; a workflow, whose rounds and branches share its prefix
  // pages, is pinned at admission to the least-loaded slice, and the slices step at once.
  std::string placement = "spread";
  bool sliced() const { return placement == "prefix_affinity"; }
};

struct Slo {
  std::optional<double> ttft_ns, tpot_ns;
};

struct Workload {
  std::string name, file;
  Scenario scenario;  // model, kv paging and seed (its agents and phases are not used)
  std::string scenario_file;
  std::vector<WorkflowTemplate> templates;
  ArrivalSpec arrival;
  SchedulerSpec scheduler;
  Slo slo;
  uint64_t seed = 1;  // arrivals, the mix and every drawn token count
  // Sampled serving (docs/serving.md, "Sampled serving"): absent, exact mode (every step simulated).
  std::optional<SamplingSpec> sampling;
};

// One branch of one round of a concrete workflow.
struct BranchSpec {
  int new_tokens = 0, decode_tokens = 0;
};

// A concrete workflow of a run.
struct WorkflowSpec {
  int id = 0;
  double arrival_ns = 0;
  int tmpl = 0;  // index into Workload::templates
  int prompt_tokens = 0, cached_tokens = 0;
  std::vector<std::vector<BranchSpec>> rounds;
  double tool_ns = 0;
  int join_first = 0;  // branches the join waits for (all of them unless the template says first)
  int join_tokens = 0;
  int answer_tokens = 0;
  int64_t requested_tokens() const;  // decode tokens over its branches and answer
};

// `rec` (optional) records every field the parser reads (hw/common/base/json_reader.h SchemaRecorder).
Workload parse_workload(const Json& j, const std::string& file, SchemaRecorder* rec = nullptr);
Workload load_workload(const std::string& path);
// The workload format's JSON Schema, generated from parse_workload's reads over `probes`.
Json workload_schema(const std::vector<std::string>& probes);

// Rows of an Azure LLM inference trace CSV: read_azure_csv, runtime/serve/azure_csv.h.

// The run's workflows in arrival order (ids 0, 1, ...); the same workload gives the same list.
std::vector<WorkflowSpec> expand(const Workload& w);

Json to_json(const Workload& w);

// What a caller may change in a loaded workload (`ahbm-sim serve`'s --seed, --rate-per-s and
// --scheduler, the Python module's serve()): each is checked as the file's field is, naming
// `source` (the option or argument) in the message.
struct WorkloadOverrides {
  std::optional<uint64_t> seed;
  std::optional<double> rate_per_s;  // only for Poisson arrivals
  std::string scheduler;             // "" = keep scheduler.policy
  bool sampling = false;             // sampled serving: the workload's sampling block, or its defaults
};
void apply_overrides(Workload& w, const WorkloadOverrides& o, const std::string& source);

}  // namespace ahbm::serve
