#pragma once
#include <utility>

#include "hw/noc/noc.h"

namespace ahbm {

class IdealNoc : public Noc {
 public:
  IdealNoc(sc_core::sc_module_name name, const NocContext& ctx);
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
