#pragma once
// The HBM slice one PE owns: holds its KV shards and serves DMA bursts over TLM-2.0 with
// first-byte latency plus transfer time at the slice bandwidth. Bursts are served one after
// another (a later burst starts when the earlier one has left the array), so two bursts
// issued together overlap their latencies but not their transfers.
//
// Contents are extents: fp32 placements are the caller's own arrays, mapped read-only like a
// DMI region (the job outlives the simulation), so a run holds K/V once; fp16/bf16 placements
// and remapped copies written during the run are owned, encoded bytes. The socket grants
// read-only TLM DMI over any extent, so an initiator can use stored bytes in place.
#include <cstdint>
#include <map>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "hw/common/hw_config.h"
#include "hw/common/storage_type.h"

namespace ahbm {

class HbmSlice : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<HbmSlice> socket;

  HbmSlice(sc_core::sc_module_name name, const HbmSliceConfig& cfg);
  // Places `count` values at byte address `addr` in storage type `t` (dtype_bytes(t) bytes
  // each): the runtime's placement, before the run. fp32 values are mapped in place (`words`
  // must outlive the slice); other types are encoded into bytes the slice owns. Extents may not
  // overlap, except a write of exactly the same range, which replaces it.
  void backdoor_write(uint64_t addr, const float* words, uint64_t count, DType t = DType::fp32);
  // A read of `len` bytes at `addr` into `dst` (null: timing only) requested now + `delay`,
  // from whichever initiator (the PE's DMA socket, or the CUBE serving a remote request): books
  // the slice and sets `delay` to when the data is out, relative to now. False: outside the
  // stored data.
  bool read(uint64_t addr, unsigned char* dst, uint64_t len, sc_core::sc_time& delay);
  // A write of `len` stored bytes arriving now (a remapped KV copy; null: timing only): books the
  // slice like a read of the same size and returns how long until it is stored.
  sc_core::sc_time write(uint64_t addr, const unsigned char* bytes, uint64_t len);
  // The socket's DMI request: read-only access to the extent holding the address.
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi);
  // Empties the slice (no stored data, idle, counters at zero) for the next run's placement: the
  // chip is reused (simulate.h). DMI pointers are not cached by any initiator, so none go stale.
  void begin_run();
  uint64_t bytes_read() const { return bytes_read_; }
  uint64_t bytes_written() const { return bytes_written_; }
  uint64_t bursts() const { return bursts_; }

 private:
  struct Extent {
    const unsigned char* bytes = nullptr;  // mapped, or owned.data()
    uint64_t len = 0;
    std::vector<unsigned char> owned;
  };
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  // The extent for [addr, addr + len) (a new one, or the one with exactly that range).
  Extent& place(uint64_t addr, uint64_t len);
  // The extent holding byte `addr`, or end().
  std::map<uint64_t, Extent>::const_iterator extent_at(uint64_t addr) const;
  // Copies [addr, addr + len) out of the extents; false where any byte is not stored.
  bool copy_out(uint64_t addr, unsigned char* dst, uint64_t len) const;
  HbmSliceConfig cfg_;
  std::map<uint64_t, Extent> extents_;  // by start address
  sc_core::sc_time free_at_ = sc_core::SC_ZERO_TIME;
  uint64_t bytes_read_ = 0;
  uint64_t bursts_ = 0;
  uint64_t bytes_written_ = 0;
};

}  // namespace ahbm
