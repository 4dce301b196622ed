// The PE's unfused vector kernels (hw/common/contract/vector_kernel.h): per kernel, after its launch on
// the host, every row block of the PE's columns read from the HBM slice, the operator on the
// vector unit, the result written back. Closed form: vector_kernel.h.
#include <algorithm>

#include "hw/common/sim/tlm_payload.h"
#include "hw/pe/pe.h"

namespace ahbm {

void Pe::vector_kernels() {
  VectorKernelRun& k = sh_.kernels;
  const int in_id = sh_.spans.intern("kernel_in"), out_id = sh_.spans.intern("kernel_out");
  for (size_t j = 0; j < k.jobs.size(); ++j) {
    const VectorKernelJob& job = k.jobs[j];
    const VectorKernelPlan& pl = k.plans[j][size_t(chip_pe_)];
    if (!pl.active()) continue;
    GemmOpStats& st = k.stats[j];
    const int phase = sh_.spans.intern(job.phase), op = k.op_ids[j];
    // Nothing of the kernel starts before the host has launched it (launched one after another).
    const sc_core::sc_time launched = sh_.epoch + sc_core::sc_time(st.launch_ns, sc_core::SC_NS);
    if (launched > sc_core::sc_time_stamp()) sc_core::wait(launched - sc_core::sc_time_stamp());
    const uint64_t cols = uint64_t(pl.cols), b_in = dtype_bytes(job.in_dtype), b_out = dtype_bytes(job.out_dtype);
    for (int r0 = 0; r0 < job.m; r0 += pl.rb) {
      const int rows = std::min(pl.rb, job.m - r0);
      // Timing-only bursts: the values come with the job (as the fused residual's do).
      const uint64_t in_bytes = uint64_t(rows) * cols * b_in, out_bytes = uint64_t(rows) * cols * b_out;
      st.dma_busy_ns += to_ns(slice_burst(tlm::TLM_READ_COMMAND, pl.in_base + uint64_t(r0) * cols * b_in, nullptr, in_bytes,
                                          false, phase, op, rows, in_id));
      st.kernel_bytes_read += in_bytes;
      const uint64_t ops = vector_kernel_ops(job, uint64_t(rows), cols);
      const sc_core::sc_time busy = vector_busy_span(op, vector_kernel_cycles(sh_.cfg.pe.vector, job, uint64_t(rows), cols),
                                                     phase, op, rows, ops);
      (job.rms_norm() ? st.norm_busy_ns : st.rope_busy_ns) += to_ns(busy);
      st.vector_ops += ops;
      sram_bytes_ += in_bytes + out_bytes;
      if (job.values()) {
        // No wait from here to the write: the block is this PE's meanwhile.
        const ConstMapRM x(job.x.data(), job.m, job.n);
        kernel_block_ = x.block(r0, pl.shard.n_begin, rows, pl.shard.n_count);
        const Eigen::VectorXf sumsq =
            job.rms_norm() ? Eigen::VectorXf(x.middleRows(r0, rows).rowwise().squaredNorm()) : Eigen::VectorXf();
        vector_kernel_apply(job, kernel_block_, r0, pl.shard.n_begin, sumsq);
        sh_.guard.check(kernel_block_, component_, -1);
        k.y[j].block(r0, pl.shard.n_begin, rows, pl.shard.n_count) = kernel_block_;
      }
      st.dma_busy_ns += to_ns(slice_burst(tlm::TLM_WRITE_COMMAND, pl.out_base + uint64_t(r0) * cols * b_out, nullptr,
                                          out_bytes, false, phase, op, rows, out_id));
      st.y_bytes_written += out_bytes;
      const double now = to_ns(sc_core::sc_time_stamp() - sh_.epoch);
      st.pe_end_ns[size_t(chip_pe_)] = now;
      st.end_ns = std::max(st.end_ns, now);
      --k.blocks_left;
    }
  }
}

}  // namespace ahbm
