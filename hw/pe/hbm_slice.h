#pragma once
// The HBM slice one PE owns: holds its KV shards and serves bursts over TLM-2.0 (blocking
// transport, loosely timed). Its timing is one of two models (pe.hbm.model, docs/hbm.md):
//   - "simple": first-byte latency plus transfer time at bandwidth_gbps × efficiency. Bursts are
//     served one after another (a later burst starts when the earlier one has left the array),
//     so two bursts issued together overlap their latencies but not their transfers.
//   - "banked": the burst is split into 32 B DRAM bursts interleaved over pseudo_channels
//     HBM3-6400 pseudo-channels (hw/hbm/channel_array.h), each run through its own FR-FCFS
//     controller with banks, rows and refresh; the TLM delay ends when the last DRAM burst's
//     data has moved. latency_ns, bandwidth_gbps and efficiency do not apply.
//
// The slice is reached only through `socket` (a multi-target socket: the PE's DMA, its CUBE's
// remote-read server and the group's KV mover each bind one initiator to it), plus one backdoor,
// backdoor_write(), used only for the runtime's KV placement before a run (Chip::begin_run).
//
// Address map: bytes [0, capacity_bytes) of the slice. Contents are extents: fp32 placements are
// the caller's own arrays, mapped read-only like a DMI region (the job outlives the simulation),
// so a run holds K/V once; fp16/bf16 placements and remapped copies written during the run are
// owned, encoded bytes. A READ of bytes nobody stored is an address error (the DMA reports a
// burst outside its shard).
//
// Byte enables: none (every byte moves) or a pattern of all-disabled bytes (the timing-only
// transfers of runs without values: the burst is timed, no byte is read or written); any other
// pattern gets TLM_BYTE_ENABLE_ERROR_RESPONSE. Streaming is not supported (BURST_ERROR).
//
// DMI: read-only over the extent holding the address. Initiators cache grants; the slice
// invalidates (invalidate_direct_mem_ptr, every bound initiator) whatever range it re-maps: all of
// it in begin_run(), an extent's range when a write or a placement replaces its bytes.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "hw/common/config/hw_config.h"
#include "hw/common/observe/stats.h"
#include "hw/common/sim/tlm_payload.h"
#include "hw/common/base/storage_type.h"
#include "hw/common/observe/trace_sink.h"
#include "hw/hbm/channel_array.h"

namespace ahbm {

// Counters of an HBM slice (HbmSlice::report_stats), reported into its PE's node.
struct HbmSliceStats {
  static constexpr stats::Sum<uint64_t> bytes_read{"hbm_bytes_read", "bytes", "bytes read from the HBM slice"};
  static constexpr stats::Sum<uint64_t> bytes_written{"hbm_bytes_written", "bytes", "bytes written to the HBM slice"};
  static constexpr stats::Sum<uint64_t> bursts{"hbm_bursts", "bursts", "HBM bursts (transactions) served"};
  // The banked model only (hbm::ChannelArrayStats, summed over the slice's pseudo-channels).
  static constexpr stats::Sum<uint64_t> row_hits{"hbm_row_hits", "accesses", "row-buffer hits (banked model)"};
  static constexpr stats::Sum<uint64_t> row_misses{"hbm_row_misses", "accesses", "row-buffer misses (banked model)"};
  static constexpr stats::Sum<uint64_t> bank_conflicts{"hbm_bank_conflicts", "accesses", "accesses that found their bank busy (banked model)"};
  static constexpr stats::Sum<uint64_t> refreshes{"hbm_refreshes", "refreshes", "refresh commands issued (banked model)"};
};

class HbmSlice : public sc_core::sc_module, public StatsProvider {
 public:
  void report_stats(StatsNode& node) const override;
  tlm_utils::multi_passthrough_target_socket<HbmSlice> socket;

  HbmSlice(sc_core::sc_module_name name, const HbmSliceConfig& cfg);
  // BACKDOOR, for the runtime's KV placement before a run only: places `count` values at byte
  // address `addr` in storage type `t` (dtype_bytes(t) bytes each). fp32 values are mapped in
  // place (`words` must outlive the run); other types are encoded into bytes the slice owns.
  // Extents may not overlap, except a write of exactly the same range, which replaces it.
  void backdoor_write(uint64_t addr, const float* words, uint64_t count, DType t = DType::fp32);
  // Empties the slice (no stored data, idle, counters at zero) for the next run's placement and
  // invalidates every DMI grant: the chip is reused (simulate.h).
  void begin_run();
  // Waveform signals of the banked model, `prefix` + ".row_hits" / ".row_misses" / ".refreshes"
  // (running counts, recorded when a transfer is booked: state changes only). The simple model
  // has none.
  void add_signals(TraceSink& trace, const std::string& prefix);
  // The banked model's counters (all zero for the simple model).
  hbm::ChannelArrayStats dram_stats() const { return banked_ ? banked_->stats() : hbm::ChannelArrayStats{}; }
  // The slice's address range [0, last()].
  uint64_t last() const { return cfg_.capacity_bytes - 1; }
  uint64_t bytes_read() const { return bytes_read_; }
  uint64_t bytes_written() const { return bytes_written_; }
  uint64_t bursts() const { return bursts_; }

 private:
  struct Extent {
    const unsigned char* bytes = nullptr;  // mapped, or owned.data()
    uint64_t len = 0;
    std::vector<unsigned char> owned;
  };
  void b_transport(int id, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  bool get_direct_mem_ptr(int id, tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi);
  // The extent for [addr, addr + len) (a new one, or the one with exactly that range, whose DMI
  // grants are invalidated: its bytes are about to be replaced). Null when it overlaps another.
  Extent* place(uint64_t addr, uint64_t len);
  // The extent holding byte `addr`, or end().
  std::map<uint64_t, Extent>::const_iterator extent_at(uint64_t addr) const;
  // Copies [addr, addr + len) out of the extents; false where any byte is not stored.
  bool copy_out(uint64_t addr, unsigned char* dst, uint64_t len) const;
  void invalidate(uint64_t first, uint64_t last);
  // When the transfer of `len` bytes at `addr` arriving at `at` has moved its last byte.
  sc_core::sc_time book(const sc_core::sc_time& at, uint64_t addr, uint64_t len, bool write);
  HbmSliceConfig cfg_;
  std::unique_ptr<hbm::ChannelArray> banked_;  // the banked model; null for the simple one
  sc_core::sc_time epoch_ = sc_core::SC_ZERO_TIME;  // banked: cycle 0 of the controllers (begin_run)
  TraceSink* trace_ = nullptr;
  int sig_row_hits_ = -1, sig_row_misses_ = -1, sig_refreshes_ = -1;
  std::map<uint64_t, Extent> extents_;  // by start address
  sc_core::sc_time free_at_ = sc_core::SC_ZERO_TIME;
  uint64_t bytes_read_ = 0;
  uint64_t bursts_ = 0;
  uint64_t bytes_written_ = 0;
};

}  // namespace ahbm
