#pragma once
// Attention execution policies of the AHBM note §4 plus THInfer's Q/O-stationary dataflow, as
// job transformers: each takes the Policy-A job the planner produces (replicated Q, stationary
// sequence-sharded KV, Q rows cut into tiles that fit) and returns the same attention step laid
// out for the variant. Same Q, K, V, rows and mask: only the tiling, the PEs each tile runs on,
// where KV is read from and what moves differ, so every variant computes the same O.
//
//   A   every tile on all PEs; each PE streams its own shard; 8-PE then 4-CUBE reduction.
//   B1  Q split into one group per CUBE; before the step the KV is regrouped (PE (c,l) receives
//       copies of the shards of PEs (c',l), c' != c, over the NoC; then rebuilds its page
//       table); each CUBE then streams the whole sequence locally and reduces over its 8 PEs.
//   B2  same Q groups; PE (c,l) reads the shards of PEs (c',l) remotely over the NoC.
//   B3  same Q groups; the copies were placed at KV write time (capacity x cubes), no transfer.
//   B4  Q groups one after another on all 32 PEs (Policy A with Q cut into `cubes` groups).
//   B5  Q rows split across the 32 PEs, KV blocks read once by their owners and broadcast to
//       every PE; each PE runs the full softmax of its rows, no cross-PE merge.
#include <string>
#include <vector>

#include "hw/common/config/hw_config.h"
#include "hw/common/contract/job.h"

namespace ahbm {

enum class Policy { A, B1, B2, B3, B4, B5 };

const std::vector<Policy>& all_policies();
std::string policy_name(Policy p);
// "A", "B1" .. "B5"; throws InputError naming `field` and the allowed names otherwise.
Policy parse_policy(const std::string& name, const std::string& field = "--policy");

// One way to run a job set: a policy and the Q tile rows its layout cuts the rows into (per
// tile for A, per CUBE group for B1..B4, per PE for B5). The planner proposes one per policy
// (runtime/plan/planner.h: candidates), the choose stage picks one (runtime/plan/choose.h).
struct Layout {
  Policy policy = Policy::A;
  int tile_rows = 0;  // > 0 whenever the job has rows
};

// The apply stage: the step laid out for `layout`. Throws InputError when it cannot run on `hw`
// (B3's replicas exceed pe.hbm.capacity_bytes). Takes the tile rows as given: fitting them to
// the SRAM and Q buffer is the planner's job.
AttentionJob apply_policy(const AttentionJob& policy_a, const HwConfig& hw, const Layout& layout);
// Every job of a step (one per KV head) laid out for `layout`; the tensors are moved, not copied.
std::vector<AttentionJob> apply_layout(std::vector<AttentionJob> policy_a_jobs, const HwConfig& hw,
                                       const Layout& layout);
// The same in place on `jobs`, copies of `policy_a_jobs` laid out before (for this or another
// layout): only the dataflow fields (tiles, segments, replicas, remap, kv_broadcast, kernel) are
// restored from `policy_a_jobs` and laid out again; the token metadata and tensors are not
// copied. The choose stage lays out every candidate of a step this way in one buffer.
void relay_out(std::vector<AttentionJob>& jobs, const std::vector<AttentionJob>& policy_a_jobs, const HwConfig& hw,
               const Layout& layout);

}  // namespace ahbm
