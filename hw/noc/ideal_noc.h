#pragma once
#include <utility>

#include "hw/common/config/param_table.h"
#include "hw/noc/noc.h"

namespace ahbm {

#define AHBM_PARAMS_NOC_IDEAL(X)                                                                                \
  X(double, latency_ns, 10.0, between(0.0, 1e9).slower_when_larger(), "ns",                                     \
    "fixed latency of every delivery (unlimited bandwidth, no contention)",                                     \
    "a few router hops at 1 GHz: the reference point the other models are compared to")
struct IdealParams {
  AHBM_PARAMS_NOC_IDEAL(AHBM_HW_MEMBER)
};

class IdealNoc : public Noc {
 public:
  IdealNoc(sc_core::sc_module_name name, const NocContext& ctx);
  static std::vector<HwParam> params();
  // latency_ns, unlimited bandwidth.
  static NocEstimate estimate(const NocEstimateInput& in);
  void report_stats(StatsNode& node) const override;
  bool restartable() const override { return true; }

 protected:
  void inject(NocPacket packet) override;
  void restart() override { in_flight_.clear(); }

 private:
  void deliver_loop();
  sc_core::sc_time latency_;
  TimedQueue<std::pair<int, NocPacket>> in_flight_;
};

}  // namespace ahbm
