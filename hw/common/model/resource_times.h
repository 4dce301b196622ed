#pragma once
// One closed form per resource a tile's data crosses: the HBM slice's burst, the CUBE's Q-buffer
// write and read ports, the reducer's bus, the inter-CUBE links and the host link. Each is
// templated on the time type, like KvBlockPipeline (engines.h): the SystemC modules wait it as an
// sc_time, the policy cost model (runtime/policy/cost_model.cpp) books it in ns as a double, so the
// two read one formula and cannot drift apart (docs/policies.md "Cost model"). A resource's
// bytes come from job.h (q_tile_bytes, kv_row_bytes) and attn_state.h (wire_bytes).
#include <cstdint>
#include <string>

#include "hw/common/config/hw_config.h"
#include "hw/common/base/timing.h"

namespace ahbm {

// How a time type counts the two units the closed forms are written in: clock cycles and bytes
// at a bandwidth. sc_time: the modules' Clock (cycles rounded as the clock rounds them); double
// ns: cycles at 1 / clock_ghz, and a transfer rounded through sc_time as the modules round it.
template <class Time>
class TimeUnits;

template <>
class TimeUnits<sc_time> {
 public:
  explicit TimeUnits(const Clock& clock) : clock_(clock) {}
  sc_time cycles(uint64_t n) const { return clock_.cycles(n); }
  static sc_time bytes_at(uint64_t bytes, double gbps) { return transfer_time(bytes, gbps); }
  static sc_time ns(double t) { return sc_time(t, sc_core::SC_NS); }

 private:
  const Clock& clock_;
};

template <>
class TimeUnits<double> {
 public:
  explicit TimeUnits(double clock_ghz) : cycle_ns_(1.0 / clock_ghz) {}
  double cycles(uint64_t n) const { return double(n) * cycle_ns_; }
  static double bytes_at(uint64_t bytes, double gbps) { return to_ns(transfer_time(bytes, gbps)); }
  static double ns(double t) { return t; }

 private:
  double cycle_ns_;
};

// HBM slice, simple model: the array streams a burst's bytes at bandwidth_gbps × efficiency after
// the bursts booked before it; a read's data is out latency_ns later (a write hides it).
template <class Time>
Time hbm_burst(const HbmSliceConfig& h, uint64_t bytes) {
  return TimeUnits<Time>::bytes_at(bytes, h.bandwidth_gbps * h.efficiency);
}
template <class Time>
Time hbm_read(const HbmSliceConfig& h, uint64_t bytes) {
  return TimeUnits<Time>::ns(h.latency_ns) + hbm_burst<Time>(h, bytes);
}

// The banked slice (pe.hbm.model = banked) has no closed form: the cost model times it as the
// simple slice with the calibration docs/hbm.md documents for KV tiles read in order (Policy A's
// pattern; within 6% of the banked model there, test_banked_hbm_slice.cpp), and says so in its
// estimate (PolicyEstimate::hbm_assumed). Its peak is its pseudo-channels' (bandwidth_gbps does
// not apply to it): 12 × 25.6 = 307.2 GB/s by default, the simple slice's default.
constexpr double kBankedInOrderLatencyNs = 15.0;
constexpr double kBankedInOrderEfficiency = 0.80;
// The slice as a closed form: itself when simple, the calibrated simple slice when banked.
inline HbmSliceConfig hbm_closed_form(const HbmSliceConfig& h) {
  if (!h.banked()) return h;
  HbmSliceConfig c = h;
  c.model = HbmModel::simple;
  c.bandwidth_gbps = double(h.pseudo_channels) * kHbm3PseudoChannelGbps;
  c.latency_ns = kBankedInOrderLatencyNs;
  c.efficiency = kBankedInOrderEfficiency;
  return c;
}
// What hbm_closed_form assumed of a banked slice, for the estimate (empty when simple).
inline std::string hbm_assumption(const HbmSliceConfig& h) {
  if (!h.banked()) return "";
  return "pe.hbm.model = banked costed as simple, bandwidth pseudo_channels x 25.6 GB/s, latency_ns 15, "
         "efficiency 0.80 (docs/hbm.md: KV tiles in order)";
}

// A CUBE's Q buffer: the write port takes a tile's bytes at write_bytes_per_cycle, each read port
// hands a PE its copy at port_bytes_per_cycle.
template <class Time>
Time q_buffer_write(const TimeUnits<Time>& u, const QBufferConfig& q, uint64_t bytes) {
  return u.cycles(ceil_div(bytes, uint64_t(q.write_bytes_per_cycle)));
}
template <class Time>
Time q_buffer_read(const TimeUnits<Time>& u, const QBufferConfig& q, uint64_t bytes) {
  return u.cycles(ceil_div(bytes, uint64_t(q.port_bytes_per_cycle)));
}

// The CUBE bus that carries a PE's (m, l, o) state to the reducer, bus_bytes_per_cycle.
template <class Time>
Time reducer_bus(const TimeUnits<Time>& u, const ReducerConfig& r, uint64_t state_bytes) {
  return u.cycles(ceil_div(state_bytes, uint64_t(r.bus_bytes_per_cycle)));
}

// An inter-CUBE reduction link: busy for the bytes at bandwidth_gbps; they arrive latency_ns after.
template <class Time>
Time link_transfer(const LinkConfig& l, uint64_t bytes) {
  return TimeUnits<Time>::bytes_at(bytes, l.bandwidth_gbps);
}
template <class Time>
Time link_latency(const LinkConfig& l) {
  return TimeUnits<Time>::ns(l.latency_ns);
}

// The host link, either direction (full duplex). A Q upload waits latency_ns and the bytes
// (hw/chip/q_source.cpp); an O tile holds the chip-to-host direction for its bytes and lands
// latency_ns after (hw/chip/host.cpp).
template <class Time>
Time host_transfer(const HostConfig& h, uint64_t bytes) {
  return TimeUnits<Time>::bytes_at(bytes, h.bandwidth_gbps);
}
template <class Time>
Time host_upload(const HostConfig& h, uint64_t bytes) {
  return TimeUnits<Time>::ns(h.latency_ns) + host_transfer<Time>(h, bytes);
}
template <class Time>
Time host_latency(const HostConfig& h) {
  return TimeUnits<Time>::ns(h.latency_ns);
}

}  // namespace ahbm
