#include "hw/pe/vector_kernel_program.h"

#include <algorithm>

namespace ahbm {

VectorKernelProgram::VectorKernelProgram(sc_core::sc_module_name name, const PeContext& pe, PeDatapath& datapath,
                                         KvDma& dma)
    : sc_core::sc_module(name), pe_(pe), datapath_(datapath), dma_(dma) {}

void VectorKernelProgram::run() {
  VectorKernelRun& k = pe_.table.kernels;
  RunContext& ctx = pe_.run;
  const int in_id = ctx.spans.intern("kernel_in"), out_id = ctx.spans.intern("kernel_out");
  for (size_t j = 0; j < k.jobs.size(); ++j) {
    const VectorKernelJob& job = k.jobs[j];
    const VectorKernelPlan& pl = k.plans[j][size_t(pe_.chip_pe)];
    if (!pl.active()) continue;
    GemmOpStats& st = k.stats[j];
    const int phase = ctx.spans.intern(job.phase), op = k.op_ids[j];
    // Nothing of the kernel starts before the host has launched it (launched one after another).
    ctx.wait_launched(st.launch_ns);
    const uint64_t cols = uint64_t(pl.cols), b_in = dtype_bytes(job.in_dtype), b_out = dtype_bytes(job.out_dtype);
    for (int r0 = 0; r0 < job.m; r0 += pl.rb) {
      const int rows = std::min(pl.rb, job.m - r0);
      // Timing-only bursts: the values come with the job (as the fused residual's do).
      const uint64_t in_bytes = uint64_t(rows) * cols * b_in, out_bytes = uint64_t(rows) * cols * b_out;
      st.dma_busy_ns += to_ns(dma_.slice_burst(tlm::TLM_READ_COMMAND, pl.in_base + uint64_t(r0) * cols * b_in, nullptr,
                                               in_bytes, false, phase, op, rows, in_id));
      st.kernel_bytes_read += in_bytes;
      const uint64_t ops = vector_kernel_ops(job, uint64_t(rows), cols);
      const sc_core::sc_time busy =
          datapath_.vector_op(op, vector_kernel_cycles(pe_.timing.vector, job, uint64_t(rows), cols), phase, op, rows, ops);
      (job.rms_norm() ? st.norm_busy_ns : st.rope_busy_ns) += to_ns(busy);
      st.vector_ops += ops;
      pe_.counters.sram_bytes += in_bytes + out_bytes;
      if (job.values()) {
        // No wait from here to the write: the block is this PE's meanwhile.
        const ConstMapRM x(job.x.data(), job.m, job.n);
        block_ = x.block(r0, pl.shard.n_begin, rows, pl.shard.n_count);
        const Eigen::VectorXf sumsq =
            job.rms_norm() ? Eigen::VectorXf(x.middleRows(r0, rows).rowwise().squaredNorm()) : Eigen::VectorXf();
        vector_kernel_apply(job, block_, r0, pl.shard.n_begin, sumsq);
        ctx.guard.check(block_, pe_.ids.component, -1);
        k.y[j].block(r0, pl.shard.n_begin, rows, pl.shard.n_count) = block_;
      }
      st.dma_busy_ns += to_ns(dma_.slice_burst(tlm::TLM_WRITE_COMMAND, pl.out_base + uint64_t(r0) * cols * b_out, nullptr,
                                               out_bytes, false, phase, op, rows, out_id));
      st.y_bytes_written += out_bytes;
      const double now = to_ns(sc_core::sc_time_stamp() - ctx.epoch);
      st.pe_end_ns[size_t(pe_.chip_pe)] = now;
      st.end_ns = std::max(st.end_ns, now);
      --k.blocks_left;
    }
  }
}

}  // namespace ahbm
