#pragma once
// A SystemC simulation context of our own. SystemC keeps one elaboration per context and reaches
// the current one through process-wide pointers; a SimContext is made current only inside a
// Scope, so several simulations (with different configs) can live in one process, each with its
// own elaborated chip, and run in any order.
#include <systemc>

namespace ahbm {

class SimContext {
 public:
  SimContext();
  ~SimContext();  // deletes the context (inside a Scope of its own)
  SimContext(const SimContext&) = delete;
  SimContext& operator=(const SimContext&) = delete;

  // Makes the context current for its lifetime, then restores whichever was current before.
  class Scope {
   public:
    explicit Scope(SimContext& c);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    sc_core::sc_simcontext* previous_;
    sc_core::sc_simcontext* previous_default_;
  };

 private:
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
