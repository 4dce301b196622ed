#pragma once
// Closed-form cost model of one attention step under each policy (AHBM note §4.5):
//   T_A = T_Q_multicast + T_local_GEMM + T_hierarchical_reduce
//   T_B = T_Q_partition + T_remote_or_replicated_KV + T_local_GEMM + T_group_reduce + T_remap
// computed from the same HwConfig the simulator uses: the engine cycle counts of
// hw/common/model/engines.h, transfer_time's bandwidth rule, the reduction tree of hw/link, and the NoC's
// zero-load latency. Each stage is a closed form per tile; tiles, PEs and CUBEs are combined
// with max-plus recurrences (a stage starts when its input is ready and its resource is free),
// which is what makes the pipelining of Q tiles, the Q-buffer read ports, the shared intra-CUBE
// bus and the merge units visible without running the event simulation. docs/policies.md.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hw/chip/energy.h"
#include "hw/chip/simulate.h"
#include "hw/common/config/hw_config.h"
#include "hw/common/contract/job.h"
#include "hw/common/base/json_reader.h"
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
  // Energy: the activity the layout implies (its counters as the modules keep them: KV bytes read
  // and written, MACs, element-ops, SRAM, Q-buffer and state bytes, NoC deliveries and flit-hops,
  // link and host bytes) priced by energy.* (hw/chip/energy.h dynamic_energy), plus the chip's
  // static power over total_ns (NoC routers' leakage left out: the same per ns for every layout).
  Activity activity;
  double dynamic_j = 0, energy_j = 0;
  // What the estimate assumed of a slice without a closed form (pe.hbm.model = banked:
  // resource_times.h hbm_assumption); empty when the slice is simple.
  std::string hbm_assumed;
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

// The cost model as a step's choose stage enters it: once per job set, estimating every
// candidate layout of it in that one call (one NoC estimate, one set of closed forms), and
// counting its entries (test_step_pipeline.cpp holds a step to one). The NoC estimate is asked
// of the model (noc_estimate with `nocs` and `hw_file`) at the first entry.
class CostModel {
 public:
  explicit CostModel(const HwConfig& hw, const NocRegistry* nocs = nullptr, std::string hw_file = "hw config")
      : hw_(hw), nocs_(nocs), hw_file_(std::move(hw_file)) {}
  // With a given NoC estimate (tests, tools comparing NoCs).
  CostModel(const HwConfig& hw, const NocEstimate& noc) : hw_(hw), nocs_(nullptr), noc_(noc) {}
  // One estimate per layout, in order; `laid_out(i)` gives the job set laid out for layouts[i]
  // (it may lay the candidates out one after another in one buffer: each is read before the
  // next is asked for).
  std::vector<PolicyEstimate> estimate(const std::vector<Layout>& layouts,
                                       const std::function<const std::vector<AttentionJob>&(size_t)>& laid_out);
  int calls() const { return calls_; }

 private:
  const HwConfig& hw_;
  const NocRegistry* nocs_;
  std::string hw_file_;
  std::optional<NocEstimate> noc_;
  int calls_ = 0;
};

}  // namespace ahbm
