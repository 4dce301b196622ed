#pragma once
// The HBM slice one PE owns: holds its KV shards and serves bursts over TLM-2.0 (blocking
// transport, loosely timed) with first-byte latency plus transfer time at the slice bandwidth.
// Bursts are served one after another (a later burst starts when the earlier one has left the
// array), so two bursts issued together overlap their latencies but not their transfers.
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
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "hw/common/hw_config.h"
#include "hw/common/stats.h"
#include "hw/common/tlm_payload.h"
#include "hw/common/storage_type.h"

namespace ahbm {

// Counters of an HBM slice (HbmSlice::report_stats), reported into its PE's node.
struct HbmSliceStats {
  static constexpr stats::Sum<uint64_t> bytes_read{"hbm_bytes_read"};
  static constexpr stats::Sum<uint64_t> bytes_written{"hbm_bytes_written"};
  static constexpr stats::Sum<uint64_t> bursts{"hbm_bursts"};
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
  HbmSliceConfig cfg_;
  std::map<uint64_t, Extent> extents_;  // by start address
  sc_core::sc_time free_at_ = sc_core::SC_ZERO_TIME;
  uint64_t bytes_read_ = 0;
  uint64_t bursts_ = 0;
  uint64_t bytes_written_ = 0;
};

}  // namespace ahbm
