#pragma once
// Owner-side KV movement of one KV-head group: the remap copies of Policy B1 (each replica's
// tokens read from the owner's HBM slice, multicast over the NoC to the PEs that keep a copy,
// written into their slices) and the block broadcast of Policy B5 (each owner reads a block of
// its shard once, it is multicast to every PE that works on a Q tile in this pass, and lands
// in an SRAM slot each receiver reserved beforehand: the receivers advance in lockstep, as
// THInfer's DSPs do). Reads book the owner's slice like its own DMA does, so they contend with
// it. Also the delayed sender the CUBEs use to answer remote reads.
#include <memory>
#include <vector>

#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>

#include "hw/chip/sim_shared.h"
#include "hw/common/stats.h"
#include "hw/common/tlm_checker.h"
#include "hw/cube/kv_traffic.h"
#include "hw/noc/noc.h"

namespace ahbm {

// Sends each queued packet on the NoC when it is due (after the slice read that fills it).
class DelayedSender : public sc_core::sc_module {
 public:
  DelayedSender(sc_core::sc_module_name name, Noc& noc);
  void send_after(NocPacket p, const sc_core::sc_time& delay) { queue_.push(std::move(p), delay); }

 private:
  void loop();
  Noc& noc_;
  TimedQueue<NocPacket> queue_;
};

// Reads `count` tokens (K rows, then V rows) of job `job` starting at held-token index `h` from
// PE `pe`'s slice through `slice` (a port bound to it); returns the data (null when timing only:
// the bursts are timing-only transfers into `scratch`) and sets `delay` to when it is out.
std::shared_ptr<const std::vector<unsigned char>> read_kv(SimShared& sh, GroupFabric& f, int job, int pe, uint64_t h,
                                                          int count, tlm::tlm_fw_transport_if<>& slice,
                                                          std::vector<unsigned char>& scratch, sc_core::sc_time& delay);

// Counters of a group's KV mover (KvMover::report_stats), reported into its group's node.
struct KvMoverStats {
  static constexpr stats::Sum<uint64_t> remap_bytes{"remap_bytes"};          // KV copied for remapped jobs (B1)
  static constexpr stats::Sum<uint64_t> broadcast_bytes{"broadcast_bytes"};  // KV broadcast blocks (B5)
};

class KvMover : public sc_core::sc_module, public StatsProvider {
 public:
  void report_stats(StatsNode& node) const override;
  // Ports to the group's HBM slices, one per PE in PE order.
  tlm_utils::multi_passthrough_initiator_socket<KvMover> slices;

  KvMover(sc_core::sc_module_name name, SimShared& sh, const std::string& path, int group, GroupFabric& fabric);
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
  GroupFabric& fabric_;
  DelayedSender sender_;
  TlmLinks links_;
  std::vector<unsigned char> scratch_;  // data buffer of timing-only reads
  int component_;
  uint64_t remap_bytes_ = 0, broadcast_bytes_ = 0;
  sc_core::sc_event remap_start_, broadcast_start_;  // begin_run
};

}  // namespace ahbm
