#include "hw/noc/delayed_sender.h"

namespace ahbm {

DelayedSender::DelayedSender(sc_core::sc_module_name name, Noc& noc) : sc_core::sc_module(name), noc_(noc) {
  SC_HAS_PROCESS(DelayedSender);
  SC_THREAD(loop);
}

void DelayedSender::loop() {
  for (;;) noc_.send(queue_.pop());
}

}  // namespace ahbm
