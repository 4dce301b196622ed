#pragma once
// Closed-form cost model of one attention step under each policy (AHBM note §4.5):
//   T_A = T_Q_multicast + T_local_GEMM + T_hierarchical_reduce
//   T_B = T_Q_partition + T_remote_or_replicated_KV + T_local_GEMM + T_group_reduce + T_remap
// computed from the same HwConfig the simulator uses: the engine cycle counts of
// hw/common/engines.h, transfer_time's bandwidth rule, the reduction tree of hw/link, and the NoC's
// zero-load latency. Each stage is a closed form per tile; tiles, PEs and CUBEs are combined
// with max-plus recurrences (a stage starts when its input is ready and its resource is free),
// which is what makes the pipelining of Q tiles, the Q-buffer read ports, the shared intra-CUBE
// bus and the merge units visible without running the event simulation. docs/policies.md.
#include <string>
#include <vector>

#include "hw/chip/simulate.h"
#include "hw/common/hw_config.h"
#include "hw/common/job.h"
#include "hw/common/json_reader.h"
#include "runtime/policy/apply_policy.h"

namespace ahbm {

struct PolicyEstimate {
  Policy policy = Policy::A;
  // The terms of §4.5, attributed along the critical path (the PE and tile that finish last).
  double q_ns = 0;        // T_Q_multicast (A, B4) / T_Q_partition (B1-B3, B5): until that PE holds its first Q tile
  double remap_ns = 0;    // T_remap: KV regroup copies + page-table rebuild before streaming (B1)
  double gemm_ns = 0;     // T_local_GEMM: GEMM + softmax cycles of that PE over all its tiles
  double kv_ns = 0;       // T_remote_or_replicated_KV: KV transfer (and waits between tiles) not hidden behind compute
  double reduce_ns = 0;   // T_hierarchical_reduce / T_group_reduce: last local result to O at the host
  double other_ns = 0;    // rest of the critical path (0 unless a term above had to be clipped)
  double total_ns = 0;    // = sum of the above
  Json to_json() const;
};

// The NoC as the cost model sees it (zero-load latency, per-port bandwidth): the estimate of the
// model hw.noc.model names, asked of its registry entry (NocModelInfo::estimate_for; a model that
// gives none gets default_noc_estimate). `nocs` null: the built-in models. An unknown model or a
// bad parameter is an InputError naming `hw_file`, as when the chip is built.
NocEstimate noc_estimate(const HwConfig& hw, const NocRegistry* nocs = nullptr, const std::string& hw_file = "hw config");

// Estimate for jobs already laid out for `p` (apply_policy); several jobs = several KV heads
// running at once on their groups (the step ends with the last). Without `noc`: noc_estimate(hw).
PolicyEstimate estimate_policy(const std::vector<AttentionJob>& jobs, const HwConfig& hw, Policy p,
                               const NocEstimate& noc);
PolicyEstimate estimate_policy(const std::vector<AttentionJob>& jobs, const HwConfig& hw, Policy p);

struct PolicyDecision {
  Policy chosen = Policy::A;
  bool automatic = false;
  std::vector<PolicyEstimate> estimates;  // every policy that can run, in all_policies() order
  std::vector<std::string> unavailable;   // "B3: <reason>" for policies that cannot run
  Json to_json() const;
};

// Estimates every policy for the Policy-A jobs and picks the lowest (`requested` = "auto") or
// records the requested one. Throws InputError for an unknown name or a requested policy that
// cannot run. Without `noc`: noc_estimate(hw).
PolicyDecision decide_policy(const std::vector<AttentionJob>& policy_a_jobs, const HwConfig& hw,
                             const std::string& requested, const NocEstimate& noc);
PolicyDecision decide_policy(const std::vector<AttentionJob>& policy_a_jobs, const HwConfig& hw,
                             const std::string& requested);

// The jobs laid out for the decision.
std::vector<AttentionJob> apply_decision(std::vector<AttentionJob> policy_a_jobs, const HwConfig& hw,
                                         const PolicyDecision& d);

}  // namespace ahbm
