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

// AddressSanitizer builds: SystemC's coroutines tell ASan about each stack switch but announce
// the main coroutine's stack as empty when they switch back to it, after which a throw on the
// main stack trips a false stack-buffer-overflow (google/sanitizers#189). Call this after each
// sc_start that may be followed by a throw; it announces the main thread's real stack again.
// Compiles to nothing without ASan.
void resync_sanitizer_stack();

// Kills every thread process of the current context that has not finished, so the locals on
// its stack are destroyed: SystemC deletes a context without unwinding suspended threads, and
// what they hold (payloads, buffers) would leak. Call it after the last sc_start while the
// modules still exist (killing threads of destroyed modules crashes the kernel).
void unwind_threads();

}  // namespace ahbm
