#pragma once
// The HBM slice one PE owns: holds its KV shards and serves DMA bursts over TLM-2.0 with
// first-byte latency plus transfer time at the slice bandwidth. Bursts are served one after
// another (a later burst starts when the earlier one has left the array), so two bursts
// issued together overlap their latencies but not their transfers.
#include <cstdint>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "hw/common/hw_config.h"
#include "hw/pe/storage_type.h"

namespace ahbm {

class HbmSlice : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<HbmSlice> socket;

  HbmSlice(sc_core::sc_module_name name, const HbmSliceConfig& cfg);
  // The runtime's placement, before the run: `count` values live at byte address `addr`, stored
  // in type `t` (dtype_bytes(t) bytes each). Like a DMI region, the slice references `words`
  // (already rounded to `t`) instead of copying them, so they must outlive the simulation; a
  // burst encodes the bytes it reads from them. Regions must not overlap.
  void map_region(uint64_t addr, const float* words, uint64_t count, DType t = DType::fp32);
  uint64_t bytes_read() const { return bytes_read_; }
  uint64_t bursts() const { return bursts_; }

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  struct Region {
    uint64_t addr, bytes;
    const float* words;
    DType type;
  };
  HbmSliceConfig cfg_;
  std::vector<Region> regions_;  // sorted by address
  sc_core::sc_time free_at_ = sc_core::SC_ZERO_TIME;
  uint64_t bytes_read_ = 0;
  uint64_t bursts_ = 0;
};

}  // namespace ahbm
