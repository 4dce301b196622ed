#pragma once
// Example of a NoC model written outside hw/: a shared bus with a fixed latency and a bandwidth
// cap. It is registered by the program that uses it (register_bus_noc), not in
// hw/noc/builtin_models.cpp; see docs/noc.md, "Adding a model".
#include "hw/noc/noc.h"

namespace ahbm::examples {

// One transfer at a time, first come first served, at `bandwidth_gbps`; a transfer reaches all
// of its destinations (a bus broadcasts, so a multicast costs one transfer) `latency_ns` after
// it ends.
class BusNoc : public Noc {
 public:
  BusNoc(sc_core::sc_module_name name, const NocContext& ctx);
  // What the cost model uses (optional: without it a model gets default_noc_estimate): a
  // transfer of B bytes takes latency_ns + B / bandwidth_gbps when the bus is free.
  static NocEstimate estimate(const NocEstimateInput& in);
  void report_stats(StatsNode& node) const override;
  uint64_t flit_bytes() const override { return flit_bytes_; }
  std::vector<NocLink> links() const override { return {{"bus", "link", busy_flits_, {}}}; }

 protected:
  void inject(NocPacket packet) override;

 private:
  void transfer_loop();
  void deliver_loop();
  double bandwidth_gbps_;
  sc_core::sc_time latency_;
  uint64_t flit_bytes_;
  TimedQueue<NocPacket> waiting_;
  TimedQueue<NocPacket> arriving_;
  sc_core::sc_time busy_ = sc_core::SC_ZERO_TIME;
  uint64_t busy_flits_ = 0;  // bus occupancy in flit times, for utilisation
};

// Adds "bus" to `registry`.
void register_bus_noc(NocRegistry& registry);

}  // namespace ahbm::examples
