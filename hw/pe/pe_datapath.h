#pragma once
// The PE's datapath: its GEMM engine and vector unit as waveforms (`activity`, and with
// pe.overlap = ping_pong `vector_busy`), spans, busy times and the PE's counters. Every program of
// the PE (attention, weight GEMMs, vector kernels) books its engine steps here, so the engines'
// signals and counters have one writer.
#include <array>
#include <cstdint>

#include "hw/common/model/engines.h"
#include "hw/pe/pe_context.h"

namespace ahbm {

class PeDatapath : public sc_core::sc_module {
 public:
  PeDatapath(sc_core::sc_module_name name, RunContext& run, const PeTiming& timing, const PeIds& ids);

  void begin_run() { counters_ = {}; }
  PeCounters& counters() { return counters_; }
  const PeCounters& counters() const { return counters_; }

  // The activity signal at `a` with no time passing (the Q read, the state send, their end).
  void show(PeActivity a) { run_.trace.set(ids_.sig_activity, uint64_t(a)); }
  // An attention step: waits `cycles`, records the span and moves the activity signal; the busy
  // time is added to `account` when given.
  void busy(PeActivity a, const char* name, uint64_t cycles, const TileRef& t, int64_t bytes, sc_core::sc_time* account);
  // One step of a KV block placed on the engine timelines (pe.overlap = ping_pong): its span,
  // signal changes at the placed times and busy time; nothing for a step of no work.
  void place(const KvBlockPipeline<sc_core::sc_time>::Placed& op, const TileRef& t);
  // The GEMM engine (or a Q-buffer read) busy `cycles` as activity `a`: a span `activity` of
  // phase `phase` and operator `op_id`. Returns the busy time.
  sc_core::sc_time gemm(PeActivity a, int activity, uint64_t cycles, int phase, int op_id, int64_t rows, int64_t bytes);
  // The vector unit busy `cycles` on an operator (fused or a kernel): span, signal, busy time and
  // element-ops. Returns the busy time.
  sc_core::sc_time vector_op(int activity, uint64_t cycles, int phase, int op_id, int rows, uint64_t element_ops);

 private:
  // The activity signal at `a` for `cycles`, then the span (the steps of gemm and vector_op).
  sc_core::sc_time step(PeActivity a, int activity, uint64_t cycles, int phase, int op_id, int64_t rows, int64_t bytes);
  // The span recorder's id of activity `a` named `name` (one name per activity), interned on
  // its first use as before, then kept: a long run records millions of spans, and a name lookup
  // per span was ~2% of a timing-only run.
  int activity_id(PeActivity a, const char* name) {
    int& id = activity_ids_[size_t(a)];
    if (id < 0) id = run_.spans.intern(name);
    return id;
  }
  // `t` as the trace's ns from the run's epoch (a placed op's times are in the future).
  uint64_t trace_ns(const sc_core::sc_time& t) const;

  RunContext& run_;
  const PeTiming& timing_;
  const PeIds& ids_;
  std::array<int, 8> activity_ids_{-1, -1, -1, -1, -1, -1, -1, -1};  // by PeActivity (activity_id)
  PeCounters counters_;
};

}  // namespace ahbm
