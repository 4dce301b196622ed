#pragma once
// Example of a NoC model written outside hw/: a shared bus with a fixed latency and a bandwidth
// cap. It is registered by the program that uses it (register_bus_noc), not in
// hw/noc/builtin_models.cpp; see docs/noc.md, "Adding a model".
#include "hw/common/config/param_table.h"
#include "hw/noc/noc.h"

namespace ahbm::examples {

// The bus's parameters (noc.params), one table line each: the members below, the reader's ranges
// and messages, and the rows its registry entry declares all come from these lines.
#define AHBM_PARAMS_NOC_BUS(X)                                                                                  \
  X(double, bandwidth_gbps, 32.0, between(0.001, 1e6).slower_when_smaller(), "GB/s", "bus bandwidth, shared by every transfer", \
    "a 32-byte bus at 1 GHz")                                                                                   \
  X(double, latency_ns, 20.0, between(0.0, 1e9).slower_when_larger(), "ns", "from a transfer's end to its delivery", \
    "a long on-chip wire")                                                                                      \
  X(int, flit_bytes, 64, between(1, 4096), "bytes", "unit of bus occupancy (utilisation counts)", "as the flit-level models")
struct BusParams {
  AHBM_PARAMS_NOC_BUS(AHBM_HW_MEMBER)
};

// One transfer at a time, first come first served, at `bandwidth_gbps`; a transfer reaches all
// of its destinations (a bus broadcasts, so a multicast costs one transfer) `latency_ns` after
// it ends.
class BusNoc : public Noc {
 public:
  BusNoc(sc_core::sc_module_name name, const NocContext& ctx);
  // What the cost model uses (optional: without it a model gets default_noc_estimate): a
  // transfer of B bytes takes latency_ns + B / bandwidth_gbps when the bus is free.
  static NocEstimate estimate(const NocEstimateInput& in);
  // Its parameter table's rows (optional: documents and schema-checks noc.params).
  static std::vector<HwParam> params();
  void report_stats(StatsNode& node) const override;
  uint64_t flit_bytes() const override { return uint64_t(p_.flit_bytes); }
  std::vector<NocLink> links() const override { return {{"bus", "link", busy_flits_, {}}}; }

 protected:
  void inject(NocPacket packet) override;

 private:
  void transfer_loop();
  void deliver_loop();
  BusParams p_;
  sc_core::sc_time latency_;
  TimedQueue<NocPacket> waiting_;
  TimedQueue<NocPacket> arriving_;
  sc_core::sc_time busy_ = sc_core::SC_ZERO_TIME;
  uint64_t busy_flits_ = 0;  // bus occupancy in flit times, for utilisation
};

// Adds "bus" to `registry`.
void register_bus_noc(NocRegistry& registry);

}  // namespace ahbm::examples
