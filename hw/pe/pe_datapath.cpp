#include "hw/pe/pe_datapath.h"

#include <cmath>

namespace ahbm {

PeDatapath::PeDatapath(sc_core::sc_module_name name, RunContext& run, const PeTiming& timing, const PeIds& ids)
    : sc_core::sc_module(name), run_(run), timing_(timing), ids_(ids) {}

void PeDatapath::busy(PeActivity a, const char* name, uint64_t cycles, const TileRef& t, int64_t bytes,
                      sc_core::sc_time* account) {
  if (cycles == 0) return;
  const sc_core::sc_time start = sc_core::sc_time_stamp();
  run_.trace.set(ids_.sig_activity, uint64_t(a));
  sc_core::wait(timing_.cycles(cycles));
  run_.trace.set(ids_.sig_activity, uint64_t(PeActivity::idle));
  run_.span(start, sc_core::sc_time_stamp(), ids_.component, activity_id(a, name), t, t.rows(), bytes);
  if (account) *account += sc_core::sc_time_stamp() - start;
}

void PeDatapath::place(const KvBlockPipeline<sc_core::sc_time>::Placed& op, const TileRef& t) {
  if (op.end == op.start) return;  // no work (as busy() records none)
  const bool gemm = op.op != EngineOp::softmax;
  const PeActivity a = op.op == EngineOp::gemm_qk ? PeActivity::gemm_qk
                       : op.op == EngineOp::gemm_pv ? PeActivity::gemm_pv : PeActivity::softmax;
  const int sig = gemm ? ids_.sig_activity : ids_.sig_vector;
  run_.trace.set_at_ns(sig, gemm ? uint64_t(a) : 1, trace_ns(op.start));
  run_.trace.set_at_ns(sig, 0, trace_ns(op.end));
  run_.span(op.start, op.end, ids_.component,
            activity_id(a, gemm ? (a == PeActivity::gemm_qk ? "gemm_qk" : "gemm_pv") : "softmax"), t, t.rows(), 0);
  (gemm ? counters_.gemm_busy : counters_.vector_busy) += op.end - op.start;
}

sc_core::sc_time PeDatapath::step(PeActivity a, int activity, uint64_t cycles, int phase, int op_id, int64_t rows,
                                  int64_t bytes) {
  const sc_core::sc_time start = sc_core::sc_time_stamp();
  run_.trace.set(ids_.sig_activity, uint64_t(a));
  sc_core::wait(timing_.cycles(cycles));
  run_.trace.set(ids_.sig_activity, uint64_t(PeActivity::idle));
  run_.spans.record(start, sc_core::sc_time_stamp(), ids_.component, activity, phase, op_id, rows, bytes);
  return sc_core::sc_time_stamp() - start;
}

sc_core::sc_time PeDatapath::gemm(PeActivity a, int activity, uint64_t cycles, int phase, int op_id, int64_t rows,
                                  int64_t bytes) {
  return step(a, activity, cycles, phase, op_id, rows, bytes);
}

sc_core::sc_time PeDatapath::vector_op(int activity, uint64_t cycles, int phase, int op_id, int rows,
                                       uint64_t element_ops) {
  const sc_core::sc_time busy = step(PeActivity::vector_op, activity, cycles, phase, op_id, rows, 0);
  counters_.vector_busy += busy;
  counters_.vector_ops += element_ops;
  return busy;
}

uint64_t PeDatapath::trace_ns(const sc_core::sc_time& t) const { return uint64_t(std::llround(to_ns(t - run_.epoch))); }

}  // namespace ahbm
