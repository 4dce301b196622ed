#include "hw/hbm/channel_array.h"

#include <algorithm>


namespace ahbm::hbm {

DramSpec dram_spec_of(const HbmSliceConfig& c) {
  DramSpec s = hbm3_6400();
  s.mapping = mapping_preset(choice_name(c.mapping), s.org);  // the DRAM spec's presets carry the same names
  s.refresh = c.refresh == HbmRefresh::all ? RefreshPolicy::all_bank
              : c.refresh == HbmRefresh::per_bank ? RefreshPolicy::per_bank
                                                  : RefreshPolicy::off;
  s.page = c.page_policy == HbmPagePolicy::closed ? PagePolicy::closed : PagePolicy::open;
  return s;
}

ChannelArray::ChannelArray(const DramSpec& spec, int channels)
    : spec_(spec), ctl_(size_t(std::max(1, channels)), DramController(spec)) {}

int64_t ChannelArray::transfer(int64_t arrival, uint64_t addr, uint64_t len, bool write) {
  const int n = channels(), burst_bytes = spec_.org.burst_bytes;
  const uint64_t first = addr / uint64_t(burst_bytes), last = (addr + len - 1) / uint64_t(burst_bytes);
  int64_t end = arrival;
  // The channels share nothing, so each one runs its share of the bursts on its own.
  for (uint64_t b0 = first; b0 <= last && b0 < first + uint64_t(n); ++b0) {
    DramController& c = ctl_[size_t(interleave_burst(b0, n, burst_bytes).channel)];
    if (c.now() < arrival) c.run_until(arrival, done_);  // idle until then: refreshes only
    for (uint64_t b = b0; b <= last; b += uint64_t(n)) {
      c.drain(done_, true);
      c.enqueue({next_id_++, interleave_burst(b, n, burst_bytes).addr, write, c.now()});
    }
    c.drain(done_);
  }
  for (const DramCompletion& d : done_) end = std::max(end, d.done);
  done_.clear();
  return end;
}

ChannelArrayStats ChannelArray::stats() const {
  ChannelArrayStats s;
  for (const DramController& c : ctl_) {
    const DramStats& d = c.stats();
    s.reads += d.reads;
    s.writes += d.writes;
    s.row_misses += d.acts;
    s.row_hits += d.reads + d.writes - std::min(d.reads + d.writes, d.acts);
    s.conflicts += d.conflicts;
    s.refreshes += d.refreshes;
  }
  return s;
}

}  // namespace ahbm::hbm
