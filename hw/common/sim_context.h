#pragma once
// A fresh SystemC simulation context for the lifetime of this object. SystemC keeps one
// elaboration per context in process-wide pointers; swapping in a new context lets several
// simulations (with different configs) run one after another in one process.
#include <systemc>

namespace ahbm {

class SimContext {
 public:
  SimContext();
  ~SimContext();
  SimContext(const SimContext&) = delete;
  SimContext& operator=(const SimContext&) = delete;

 private:
  sc_core::sc_simcontext* previous_;
  sc_core::sc_simcontext* mine_;
};

}  // namespace ahbm
