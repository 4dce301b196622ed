#pragma once
// Sends each queued packet on the NoC when it is due: a NoC client whose packet leaves after a
// local delay (an HBM slice read that fills it) queues it here instead of waiting itself.
#include "hw/common/base/timing.h"
#include "hw/noc/noc.h"

namespace ahbm {

class DelayedSender : public sc_core::sc_module {
 public:
  DelayedSender(sc_core::sc_module_name name, Noc& noc);
  void send_after(NocPacket p, const sc_core::sc_time& delay) { queue_.push(std::move(p), delay); }

 private:
  void loop();
  Noc& noc_;
  TimedQueue<NocPacket> queue_;
};

}  // namespace ahbm
