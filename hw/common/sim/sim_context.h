#pragma once
// A SystemC simulation context of our own. SystemC keeps one elaboration per context and reaches
// the current one through process-wide pointers; a SimContext is made current only inside a
// Scope, so several simulations (with different configs) can live in one process, each with its
// own elaborated chip, and run in any order.
//
// Error reports: SystemC aborts the process on a fatal report (exit 134, outside the exit codes
// of error.h). Every SimContext makes SC_ERROR and SC_FATAL reports throw their sc_report
// instead (SystemC's report actions are process-wide; the setting is the same for every
// context). A report thrown inside a process leaves sc_start as that sc_report; where the model
// is run (hw/chip/simulate.cpp) it becomes an InternalError (exit 1) via internal_error().
#include <string>
#include <utility>

#include <systemc>

#include "hw/common/base/error.h"

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

// The InternalError for a SystemC error report: its severity, message type and text, the
// process that raised it and when ("SystemC fatal ahbm/hbm: overlapping placement ... (in
// chip.group0.cube0.pe3.dma_loop at 12 ns)").
InternalError internal_error(const sc_core::sc_report& report);

// Runs `f` (something that elaborates or calls sc_start) and throws internal_error(r) for a
// SystemC error report r it raises.
template <class F>
decltype(auto) with_internal_errors(F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (const sc_core::sc_report& r) {
    throw internal_error(r);
  }
}

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
