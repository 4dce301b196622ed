#include "hw/common/sim_context.h"

namespace ahbm {

SimContext::SimContext() : previous_(sc_core::sc_curr_simcontext), mine_(new sc_core::sc_simcontext) {
  sc_core::sc_curr_simcontext = mine_;
  sc_core::sc_default_global_context = mine_;
}

SimContext::~SimContext() {
  delete mine_;
  sc_core::sc_curr_simcontext = previous_;
  sc_core::sc_default_global_context = previous_;
}

}  // namespace ahbm
