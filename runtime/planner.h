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
// The unbatched baseline plans one agent at a time (`only`): each branch attends on its own.
#include <vector>

#include "hw/common/hw_config.h"
#include "hw/common/job.h"
#include "runtime/kv/page_manager.h"
#include "runtime/scenario.h"
#include "runtime/session.h"
#include "runtime/tensor_gen.h"

namespace ahbm {

// What the runtime knows about each job beyond what the hardware needs.
struct JobMeta {
  int kv_head = 0;
  std::vector<int> step_agents;       // indices into Step::agents, in job agent order
  std::vector<int> row_origin, row_q_head;  // tensor owner and query head of every row
  std::vector<std::vector<int>> shard_origin;  // per PE, per token: tensor owner of its K/V
};

struct Plan {
  std::vector<AttentionJob> jobs;
  std::vector<JobMeta> meta;
  int rows_per_kv_head = 0;  // rows of one KV head over all agents of the step
};

// Largest Q tile (a multiple of the GEMM tile_m, or all rows) that fits the Q buffer and SRAM
// at `elem_bytes` per Q/K/V element. Returns 0 when not even one GEMM tile of rows fits.
int auto_q_tile_rows(const HwConfig& hw, int rows, int head_dim, uint64_t elem_bytes);
std::vector<QTile> cut_q_tiles(int rows, int tile_rows);
// As few tiles of at most `max_rows` as cover `rows`, sized evenly (multiples of `align`).
std::vector<QTile> even_q_tiles(int rows, int max_rows, int align);

// `values` null: timing only (no tensors). `only` >= 0: just that agent of the step (index
// into Step::agents) instead of all of them batched.
Plan plan_step(const Scenario& sc, const HwConfig& hw, const KvPageManager& kv, const Step& step, uint64_t seed,
               KvValues* values, int only = -1);

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
