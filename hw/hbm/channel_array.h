#pragma once
// Several HBM pseudo-channels side by side, one DramController each, with consecutive bursts
// interleaved over them (burst b of the address space goes to channel b mod N, at burst b / N of
// that channel). This is the bank-level timing behind a PE's HBM slice (hw/pe/hbm_slice.h,
// pe.hbm.model = "banked": 12 channels = the ×3 internal factor made structural) and the
// interleave hbm-bench uses for --pseudo-channels.
//
// Transfers are booked in call order. A transfer's bursts are queued on their channels and each
// channel is run until they have all issued, so a channel is idle between transfers; one that is
// still busy past a later transfer's arrival starts it when it is done (the way the closed-form
// slice serialises bursts). Time advances only to where a request or a refresh needs it: an idle
// gap costs one controller step per refresh, not one per cycle.
#include <cstdint>
#include <vector>

#include "hw/common/config/hw_config.h"
#include "hw/hbm/dram_controller.h"
#include "hw/hbm/dram_spec.h"

namespace ahbm::hbm {

// Where burst number `burst` (byte address / burst bytes) of an interleaved address space lives.
struct ChannelBurst {
  int channel;
  uint64_t addr;  // byte address of the burst in its channel
};
inline ChannelBurst interleave_burst(uint64_t burst, int channels, int burst_bytes) {
  return {int(burst % uint64_t(channels)), (burst / uint64_t(channels)) * uint64_t(burst_bytes)};
}

// Counters summed over the channels.
struct ChannelArrayStats {
  uint64_t reads = 0, writes = 0;  // bursts (RD, WR commands)
  uint64_t row_hits = 0;           // bursts served by a row already open
  uint64_t row_misses = 0;         // bursts that needed an ACT (bank closed, or a conflict closed it)
  uint64_t conflicts = 0;          // PREs closing an open row another request's row displaced
  uint64_t refreshes = 0;          // REFab / REFpb commands
};

// The HBM3-6400 pseudo-channel of a PE slice configured `c` (pe.hbm: mapping, refresh and page
// policy; the rest is the preset).
DramSpec dram_spec_of(const HbmSliceConfig& c);

class ChannelArray {
 public:
  ChannelArray(const DramSpec& spec, int channels);
  // Books a transfer of `len` > 0 bytes at byte address `addr` (over the interleaved space)
  // arriving at cycle `arrival` (tCK). Returns the cycle its last data beat has moved: a read's
  // data is out, a write's data is in. Bursts touched only in part move whole.
  int64_t transfer(int64_t arrival, uint64_t addr, uint64_t len, bool write);
  ChannelArrayStats stats() const;
  const DramSpec& spec() const { return spec_; }
  int channels() const { return int(ctl_.size()); }
  uint64_t bytes() const { return spec_.org.bytes() * uint64_t(ctl_.size()); }

 private:
  DramSpec spec_;
  std::vector<DramController> ctl_;
  std::vector<DramCompletion> done_;
  uint64_t next_id_ = 0;
};

}  // namespace ahbm::hbm
