#pragma once
// The PE's DMA: per Q tile the PE takes part in, streams its KV segments (by default its own
// shard) tile by tile into the SRAM slots; a slot is refilled as soon as compute releases it, so
// with 2+ slots transfer overlaps compute (double/triple buffering). A local segment is a pair of
// TLM-2.0 bursts from the PE's HBM slice (its shard or a replica it holds), read in place through
// cached DMI grants when the job carries values; a remote one is a request over the NoC answered
// by the owner's slice (Policy B2). Before a remapped job (B1) it waits for the incoming copies
// and rebuilds its page table. In a KV-broadcast job (B5) it is idle: the group's KV mover fills
// the slots. It also does a job's KV writes (AttentionJob::kv_writes) and the single bursts the
// other programs ask for (slice_burst): it owns the PE's port to its slice.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <tlm>

#include "hw/common/contract/interfaces.h"
#include "hw/common/contract/kv_traffic.h"
#include "hw/noc/noc.h"
#include "hw/pe/pe_context.h"

namespace ahbm {

class KvDma : public sc_core::sc_module {
 public:
  // A KV block in a slot: `n` tokens from `first` of PE `src_pe`'s held tokens.
  struct Block {
    int slot, src_pe, first, n;
  };
  // Each slot: K tile then V tile, kv_tile_tokens x d, in the job's storage type (raw bytes as
  // DMA, a remote read or a broadcast delivered them); compute widens a tile to fp32 when it uses
  // it. A local burst whose K and V each lie in one stored extent of the slice is read through
  // TLM DMI (the burst's timing still goes over b_transport), so `k` and `v` point into the
  // slice; otherwise the bytes are copied into `owned` (K then V), sized on first use. Null:
  // timing only.
  struct Slot {
    const unsigned char* k = nullptr;
    const unsigned char* v = nullptr;
    std::vector<unsigned char> owned;
  };

  // `hbm`: the PE's socket to its slice; `kv`: its group's KV layout; remote reads go out on `noc`.
  KvDma(sc_core::sc_module_name name, const PeContext& pe, tlm::tlm_initiator_socket<>& hbm,
        sc_core::sc_port<KvFabric>& kv, Noc& noc);

  // Back to a new DMA (every slot free, in slot order) and starts its process for the run.
  void begin_run();
  // The PE's KvEndpoint work: KV delivered by the CUBE's NoC handler (never waits); a slot
  // reserved for a broadcast block (blocks until one is free).
  void remote_response(KvMessagePtr m) { responses_.push(std::move(m)); }
  void remap_arrived(const KvMessage& m);
  void broadcast_arrived(const KvMessage& m, int slot);
  int reserve_slot() { return free_slots_.pop(); }
  // The slice re-mapped [first, last]: drops the cached grants that overlap it.
  void invalidate_dmi(sc_dt::uint64 first, sc_dt::uint64 last);

  // Compute's side of the slots: the next full one (waiting for it, or only until `deadline`),
  // its bytes, and giving it back (free again after `delay`).
  Block take() { return full_slots_.pop(); }
  std::optional<Block> take_by(const sc_core::sc_time& deadline) { return full_slots_.pop_by(deadline); }
  const Slot& slot(int s) const { return slots_[size_t(s)]; }
  void release(int s, const sc_core::sc_time& delay = sc_core::SC_ZERO_TIME) { free_slots_.push(s, delay); }

  // One burst between SRAM and the slice for a program (a W tile in, a Y block out, a kernel's
  // rows, unfused scores; timing only without values): its span `activity` (phase, operator),
  // the DMA signal for reads and the busy time, which it returns.
  sc_core::sc_time slice_burst(tlm::tlm_command cmd, uint64_t addr, unsigned char* slot, uint64_t bytes, bool values,
                               int phase, int op_id, int rows, int activity);
  // What the DMA waits for (the stall watchdog's report).
  const WaitNote& waiting() const { return wait_; }

 private:
  void dma_loop();
  // One run: streams the KV tiles of its Q tiles into the SRAM slots.
  void dma_tiles();
  // One local KV block of tile t (global gt) into `slot`: the K and V bursts from the slice.
  void read_local(const TileRef& t, const KvBlock& seg, int slot);
  void wait_for_remap(const TileRef& t);
  // A remote read (Policy B2, or a copy-on-write source on another PE): a request for `count`
  // tokens from `first` of PE `src_pe`'s held tokens of job j over the NoC to its CUBE, whose
  // server reads them from its slice; returns the response (data null when `timing_only`).
  KvMessagePtr remote_read(int j, int src_pe, int first, int count, bool timing_only);
  // Job j's KV writes (AttentionJob::kv_writes) for this PE, after its kernel launch: each copy
  // read (from this slice, or over the NoC from another PE's) and every run written, as
  // timing-only bursts (the values were placed before the run). Once per job per run.
  void write_kv(int j);
  // Two timing-only bursts (the K rows and the V rows of `bytes` each) issued together at
  // `k_addr` and `v_addr`; waits until both are done.
  void kv_burst_pair(tlm::tlm_command cmd, uint64_t k_addr, uint64_t v_addr, uint64_t bytes);
  void fill_slot(int slot, const std::vector<unsigned char>* data, int n, const AttentionJob& job);
  // Points the slot at its own buffer (allocated on first use) and returns it for filling.
  unsigned char* own_slot(int slot, const AttentionJob& job);
  // A read-only pointer to the `len` bytes at `addr` of the slice, when a DMI grant (cached, or
  // asked for now) covers all of them; else null.
  const unsigned char* direct_read(uint64_t addr, uint64_t len);
  // A buffer of at least `bytes` for timing-only transfers (never read).
  unsigned char* scratch(uint64_t bytes);

  const PeContext& pe_;
  tlm::tlm_initiator_socket<>& hbm_;
  sc_core::sc_port<KvFabric>& kv_;
  Noc& noc_;
  std::vector<Slot> slots_;
  std::vector<tlm::tlm_dmi> dmi_;          // DMI grants of the slice, until invalidated
  std::vector<unsigned char> scratch_;     // data buffer of timing-only transfers
  TimedQueue<int> free_slots_;
  TimedQueue<Block> full_slots_;
  TimedQueue<KvMessagePtr> responses_;
  std::map<int, uint64_t> remap_expected_, remap_received_;  // per job, bytes
  sc_core::sc_time remap_done_at_;
  sc_core::sc_event remap_progress_;
  std::vector<bool> kv_written_;  // per job of the run: its KV writes are done (write_kv)
  WaitNote wait_;
  sc_core::sc_event start_;  // begin_run
};

}  // namespace ahbm
