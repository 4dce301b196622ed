#pragma once
// One KV-head group: its CUBEs (each with 8 PEs and their HBM slices), the inter-CUBE
// reduction network and the KV mover. The group is where the KV of a step lives: it places each
// job's KV in its PEs' HBM slices (begin_run) and serves the KvFabric its PEs, CUBEs and KV
// mover use to find and move KV (interfaces.h). It binds its parts: each CUBE's reducer to its
// node of the reduction network, each CUBE's and the KV mover's `kv` port to itself, the KV mover's `slices` socket to every
// PE's HBM slice.
#include <memory>
#include <vector>

#include "hw/common/contract/interfaces.h"
#include "hw/common/sim/sim_shared.h"
#include "hw/common/observe/stats.h"
#include "hw/common/observe/tlm_checker.h"
#include "hw/cube/cube.h"
#include "hw/group/kv_mover.h"
#include "hw/link/reduction_network.h"
#include "hw/noc/noc.h"

namespace ahbm {

// The layout of a group's element of the chip's statistics tree (Group::report_stats): its
// label, the KV mover's counters, the list `cubes` (elements cube<c>) and the list `links`.
struct GroupStats {
  static constexpr stats::Label<int64_t> group{"group", "", "the group's index"};
  static constexpr const char* cubes = "cubes";           // list, elements cube<c>
};

class Group : public sc_core::sc_module, public KvFabric, public StatsProvider {
 public:
  void report_stats(StatsNode& node) const override;
  // KV-head group `group`, whose CUBEs are the NoC endpoints `cube_endpoints` (attached here);
  // the roots return O to `host_endpoint`.
  Group(sc_core::sc_module_name name, SimShared& sh, int group, Noc& noc, std::vector<int> cube_endpoints,
        int host_endpoint);
  // Back to the state of a new group and starts the run (SimShared::begin_run has been called):
  // places the jobs' KV in the HBM slices.
  void begin_run();
  int index() const { return group_; }

  ReductionNetwork network;
  std::vector<std::unique_ptr<Cube>> cubes;
  std::unique_ptr<KvMover> mover;

  // KvFabric
  int endpoint_of(int pe) const override { return cube_endpoints_[size_t(cube_of(pe))]; }
  int cube_of(int pe) const override { return pe / sh_.cfg.cube.pes; }
  uint64_t kv_base(int pe, int job) const override { return base_[size_t(pe)][size_t(job)]; }
  KvEndpoint& pe(int pe) override { return *cubes[size_t(cube_of(pe))]->pes[size_t(pe % sh_.cfg.cube.pes)]; }

 private:
  HbmSlice& slice(int pe) { return *cubes[size_t(cube_of(pe))]->slices[size_t(pe % sh_.cfg.cube.pes)]; }

  SimShared& sh_;
  TlmLinks links_;
  int group_;
  std::vector<int> cube_endpoints_;
  std::vector<std::vector<uint64_t>> base_;  // [pe][job] byte address of the job's K rows
  // The run's W shards as the slices store them (gemm_job.h GemmPePlan), kept for the run: the
  // slices map fp32 placements in place.
  std::vector<std::vector<float>> gemm_w_;
  void place_gemm_weights();
};

}  // namespace ahbm
