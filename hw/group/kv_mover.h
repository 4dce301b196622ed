#pragma once
// Owner-side KV movement of one KV-head group: the remap copies of Policy B1 (each replica's
// tokens read from the owner's HBM slice, multicast over the NoC to the PEs that keep a copy,
// written into their slices) and the block broadcast of Policy B5 (each owner reads a block of
// its shard once, it is multicast to every PE that works on a Q tile in this pass, and lands
// in an SRAM slot each receiver reserved beforehand: the receivers advance in lockstep, as
// THInfer's DSPs do). Reads book the owner's slice like its own DMA does, so they contend with
// it.
#include <memory>
#include <vector>

#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>

#include "hw/common/contract/interfaces.h"
#include "hw/common/contract/kv_traffic.h"
#include "hw/common/sim/sim_shared.h"
#include "hw/common/observe/stats.h"
#include "hw/common/observe/tlm_checker.h"
#include "hw/noc/delayed_sender.h"
#include "hw/noc/noc.h"

namespace ahbm {

// Counters of a group's KV mover (KvMover::report_stats), reported into its group's node.
struct KvMoverStats {
  static constexpr stats::Sum<uint64_t> remap_bytes{"remap_bytes", "bytes", "KV copied for remapped jobs (B1)"};
  static constexpr stats::Sum<uint64_t> broadcast_bytes{"broadcast_bytes", "bytes", "KV broadcast blocks (B5)"};
};

class KvMover : public sc_core::sc_module, public StatsProvider {
 public:
  void report_stats(StatsNode& node) const override;
  sc_core::sc_port<KvFabric> kv;  // its group's KV layout and PEs
  // Ports to the group's HBM slices, one per PE in PE order (bound by the group).
  tlm_utils::multi_passthrough_initiator_socket<KvMover> slices;

  // The KV mover of KV-head group `group`; its copies go out on `noc`.
  KvMover(sc_core::sc_module_name name, SimShared& sh, Noc& noc, int group);
  uint64_t remap_bytes() const { return remap_bytes_; }
  uint64_t broadcast_bytes() const { return broadcast_bytes_; }

  // Starts the run's KV moves (the chip is reused: simulate.h).
  void begin_run();

 private:
  void remap_loop();
  // One run: copies the replicas of its remapped jobs (Policy B1).
  void remap_jobs();
  void broadcast_loop();
  // One run: broadcasts the KV of its KV-broadcast jobs (Policy B5), pass by pass.
  void broadcast_jobs();
  void wait_kernel(int job);
  std::vector<int> endpoints_of(const std::vector<int>& pes) const;

  SimShared& sh_;
  int group_;
  DelayedSender sender_;
  std::vector<unsigned char> scratch_;  // data buffer of timing-only reads
  int component_;
  uint64_t remap_bytes_ = 0, broadcast_bytes_ = 0;
  sc_core::sc_event remap_start_, broadcast_start_;  // begin_run
};

}  // namespace ahbm
