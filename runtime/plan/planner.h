#pragma once
// Turns one step of a scenario into hardware jobs (Policy A: replicated Q, stationary
// sequence-sharded KV), one per KV head (GQA), each on KV-head group head % groups; when there
// are more KV heads than groups, a group runs its heads one after another.
//  - rows: per agent, per query head of the KV head, per new token: (agent, position);
//    rows per KV head = sum over agents of new tokens x query heads per KV head.
//  - KV: every page in the page tables of the job's agents, once, on the PE that owns it (the
//    shard is that PE's pages in table order). A page referenced by every agent of the job is
//    shared (visible to all rows); one referenced by a single agent is that agent's (visible to
//    its rows only); causality by position either way. Pages no job agent references are not
//    read.
//  - Q tiles: as few as fit the CUBE Q buffer and the PE SRAM, rows spread evenly in multiples
//    of the GEMM tile_m; tiling changes the schedule, not the arithmetic.
//  - candidates: the layouts (policy, Q tile rows) the job set can run with, fitted by the same
//    rule once here, for the choose stage (runtime/plan/choose.h).
// The first stage of a step (runtime/step/step_runner.h: plan -> choose -> apply -> simulate ->
// report). The unbatched baseline plans one agent at a time: each branch attends on its own.
#include <vector>

#include "hw/common/config/hw_config.h"
#include "hw/common/contract/job.h"
#include "runtime/kv/page_manager.h"
#include "runtime/policy/apply_policy.h"
#include "runtime/scenario/scenario.h"
#include "runtime/scenario/session.h"
#include "runtime/numerics/tensor_gen.h"

namespace ahbm {

// What the runtime knows about each job beyond what the hardware needs.
struct JobMeta {
  int kv_head = 0;
  std::vector<int> step_agents;       // indices into Step::agents, in job agent order
  std::vector<int> row_origin, row_q_head;  // tensor owner and query head of every row
  std::vector<std::vector<int>> shard_origin;  // per PE, per token: tensor owner of its K/V
};

// A layout the job set can run with, or why it cannot (`unavailable` names the limit).
struct Candidate {
  Layout layout;
  std::string unavailable;  // empty: it can run
};

struct Plan {
  std::vector<AttentionJob> jobs;  // in the Policy-A layout
  std::vector<JobMeta> meta;
  int rows_per_kv_head = 0;  // rows of one KV head over all agents of the step
  std::vector<Candidate> candidates;  // one per policy, all_policies() order
};

// Q tile rows of the Policy-A layout of `rows` rows of `head_dim` at `elem_bytes` per element:
// `fixed_rows` > 0 (hw.q_tile_rows or a join prefill's tile) caps the tile at it; otherwise the
// largest tile (all rows, or a multiple of pe.gemm.tile_m) that fits the Q buffer and the PE
// SRAM, the rows spread evenly over as few tiles as that needs. 0 when not even one GEMM tile
// of rows fits.
int q_tile_rows(const HwConfig& hw, int fixed_rows, int64_t rows, int head_dim, uint64_t elem_bytes);

// The candidates of a job set like `policy_a` (its rows, head dim and storage type: every job
// of a step has the same): A at its own tiling, B1..B4 one Q group per CUBE, B5 one per PE,
// each cut to fit the PE SRAM and the Q buffer, or to `fixed_rows` when > 0.
// Tile search (hw.q_tile_search = "cost_model", fixed_rows = 0): each policy's largest tile is
// followed by its smaller_tiles(), so the cost model can pick a tile per policy: a smaller Q
// tile pipelines the tiles' GEMMs behind the previous tile's merge (A), or gives B4 more
// groups, at the price of streaming the KV once per tile. The largest comes first, so a tie
// keeps it. "largest" proposes the largest tile only.
std::vector<Candidate> layout_candidates(const HwConfig& hw, const AttentionJob& policy_a, int fixed_rows);
// The smaller tiles the search tries below `largest` rows: `largest` cut evenly into n = 2, 3,
// ... tiles (n growing by at least a quarter each time), rounded up to multiples of `align`
// (pe.gemm.tile_m), distinct and decreasing, down to `align`. Empty when largest <= align.
std::vector<int> smaller_tiles(int largest, int align);
// The candidate of `p` for a job like `policy_a` at hw.q_tile_rows (tools and tests lay out one
// policy without choosing); throws InputError when it cannot run.
Layout layout_of(const HwConfig& hw, const AttentionJob& policy_a, Policy p);
// `policy_a` laid out at that candidate.
AttentionJob policy_job(const AttentionJob& policy_a, const HwConfig& hw, Policy p);

// The plan stage of a run: knows the scenario, the hardware, the seed and the run's KV values
// (null: timing only), and counts the job sets it planned (one per step, plus one per agent for
// the unbatched baseline and one per join probe; test_step_pipeline.cpp holds it to that).
class Planner {
 public:
  Planner(const Scenario& sc, const HwConfig& hw, uint64_t seed, KvValues* values);

  // Which job set of a step: every agent batched or one (`only`, index into Step::agents);
  // `q_tile_rows` > 0 fixes the Q tile rows (a join prefill's); `timing_only` plans no tensors.
  struct JobSet {
    int only = -1;
    int q_tile_rows = 0;
    bool timing_only = false;
  };
  Plan plan(const KvPageManager& kv, const Step& step, const JobSet& set);
  Plan plan(const KvPageManager& kv, const Step& step) { return plan(kv, step, JobSet{}); }

  // The Q tile rows a job set of `rows` rows of this scenario gets (a join prefill sizes its
  // simulated part with it); 0 when none fits.
  int tile_rows(int64_t rows) const;

  int calls() const { return calls_; }

 private:
  const Scenario& sc_;
  const HwConfig& hw_;
  uint64_t seed_;
  KvValues* values_;
  int calls_ = 0;
};

// The fan-out step's plan alone (benchmarks, tools): replays the scenario's KV operations up to
// the fork (page pools unbounded; simulate() still checks HBM capacity).
Plan plan_fanout(const Scenario& sc, const HwConfig& hw, uint64_t seed, bool values);

// The job's KV in shard order (for the reference and the tensor dump); `exact` = the values
// before rounding to the storage type (needs the KvValues the plan was made with).
struct FlatKv {
  std::vector<float> k, v;
  std::vector<KvInfo> info;
};
FlatKv flatten_kv(const AttentionJob& job);
FlatKv flatten_kv_exact(const AttentionJob& job, const JobMeta& meta, KvValues& values);
// The job's Q as generated, before rounding to the storage type.
std::vector<float> q_exact(const AttentionJob& job, const JobMeta& meta, uint64_t seed);

}  // namespace ahbm
