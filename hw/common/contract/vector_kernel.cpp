#include "hw/common/contract/vector_kernel.h"

#include <algorithm>

#include "hw/common/base/error.h"
#include "hw/common/model/vector_ops.h"

namespace ahbm {

namespace {
// Columns of a PE's shard the kernel moves and computes.
int moved_columns(const VectorKernelJob& j, const GemmShard& s) {
  if (s.n_count <= 0) return 0;
  if (j.rms_norm()) return s.n_count;
  return int(std::count_if(j.fused.rope_col.begin() + s.n_begin, j.fused.rope_col.begin() + s.n_begin + s.n_count,
                           [](int c) { return c >= 0; }));
}
}  // namespace

std::vector<std::vector<VectorKernelPlan>> vector_kernel_plans(const HwConfig& cfg, const std::vector<VectorKernelJob>& jobs) {
  std::vector<std::vector<VectorKernelPlan>> out;
  const size_t pes = size_t(cfg.groups) * size_t(cfg.pes_per_group());
  std::vector<uint64_t> used(pes, 0);
  for (const VectorKernelJob& j : jobs) {
    std::vector<VectorKernelPlan> per(pes);
    const uint64_t row_bytes_per_col = dtype_bytes(j.in_dtype) + dtype_bytes(j.out_dtype);
    for (size_t p = 0; p < pes && p < j.shards.size(); ++p) {
      VectorKernelPlan& pl = per[p];
      pl.shard = j.shards[p];
      pl.cols = moved_columns(j, pl.shard);
      if (!pl.active()) continue;
      const uint64_t fit = cfg.pe.sram_bytes / (uint64_t(pl.cols) * row_bytes_per_col);
      pl.rb = int(std::min<uint64_t>(uint64_t(j.m), fit));
      // The input rows, then the output rows (timing-only bursts: addresses in the slice).
      pl.in_base = used[p];
      pl.out_base = pl.in_base + uint64_t(j.m) * uint64_t(pl.cols) * dtype_bytes(j.in_dtype);
      used[p] = pl.out_base + uint64_t(j.m) * uint64_t(pl.cols) * dtype_bytes(j.out_dtype);
    }
    out.push_back(std::move(per));
  }
  return out;
}

uint64_t vector_kernel_cycles(const VectorConfig& v, const VectorKernelJob& j, uint64_t rows, uint64_t cols) {
  if (j.rms_norm()) return add_sat(rms_prologue_cycles(v, rows, cols), rms_scale_cycles(v, rows, cols));
  return rope_cycles(v, rows, cols);
}

uint64_t vector_kernel_ops(const VectorKernelJob& j, uint64_t rows, uint64_t cols) {
  if (j.rms_norm())
    return rows * cols * uint64_t(VectorOpCost::rms_prologue + VectorOpCost::rms_scale) + rows * VectorOpCost::rms_row;
  return rows * cols * VectorOpCost::rope;
}

void vector_kernel_apply(const VectorKernelJob& j, Eigen::Ref<MatrixRM> block, int r0, int c0,
                         const Eigen::Ref<const Eigen::VectorXf>& row_sumsq) {
  const GemmFusion& f = j.fused;
  if (j.rms_norm()) {
    // x ⊙ g, then the row scale: the fused prologue's and epilogue's arithmetic on X itself.
    for (Eigen::Index c = 0; c < block.cols(); ++c) block.col(c) *= f.norm_weight[size_t(c0 + c)];
    rms_scale_apply(block, row_sumsq, j.n, f.rms_eps);
  } else {
    rope_apply(block, f.rope_col.data() + c0, f.positions.data() + r0, f.head_dim, f.rope_theta);
  }
  if (j.out_dtype != DType::fp32)
    for (Eigen::Index r = 0; r < block.rows(); ++r)
      for (Eigen::Index c = 0; c < block.cols(); ++c) block(r, c) = round_to(j.out_dtype, block(r, c));
}

void check_vector_kernels(const HwConfig& cfg, const std::vector<VectorKernelJob>& jobs, const std::string& where) {
  const int pes = cfg.groups * cfg.pes_per_group();
  for (size_t i = 0; i < jobs.size(); ++i) {
    const VectorKernelJob& j = jobs[i];
    const std::string at = where + ": vector kernel " + std::to_string(i) + " (" + j.op + ")";
    if (j.m < 1 || j.n < 1)
      throw InputError(at + ": " + std::to_string(j.m) + " x " + std::to_string(j.n) + " rows (allowed: at least 1 x 1)");
    if (j.rms_norm() == j.fused.rope())
      throw InputError(at + ": names " + (j.rms_norm() ? "both RMSNorm and RoPE" : "no operator") +
                       " (allowed: exactly one of fused.rms_norm, fused.rope_col)");
    if (int(j.shards.size()) != pes)
      throw InputError(at + ": " + std::to_string(j.shards.size()) + " shards for " + std::to_string(pes) +
                       " PEs (groups x pes per group)");
    auto size = [&](const char* what, size_t got, size_t want) {
      if (got != want)
        throw InputError(at + ": " + what + " has " + std::to_string(got) + " values (allowed: " + std::to_string(want) + ")");
    };
    if (j.values()) size("X", j.x.size(), size_t(j.m) * size_t(j.n));
    if (j.rms_norm() && j.values()) size("the norm weight", j.fused.norm_weight.size(), size_t(j.n));
    if (j.fused.rope()) {
      size("rope_col", j.fused.rope_col.size(), size_t(j.n));
      size("positions", j.fused.positions.size(), size_t(j.m));
    }
    int next = 0;
    for (int p = 0; p < pes; ++p) {
      const GemmShard& s = j.shards[size_t(p)];
      if (s.n_count == 0) continue;
      if (s.n_begin != next || s.n_count < 0 || s.n_begin + s.n_count > j.n)
        throw InputError(at + ": PE " + std::to_string(p) + "'s columns [" + std::to_string(s.n_begin) + ", " +
                         std::to_string(s.n_begin + s.n_count) + ") do not follow column " + std::to_string(next) +
                         " (allowed: the N columns split over the PEs in order)");
      next += s.n_count;
      if (j.fused.rope()) {
        const int* rc = j.fused.rope_col.data();
        const int last = s.n_begin + s.n_count - 1;
        if ((rc[s.n_begin] >= 0 && rc[s.n_begin] % 2 == 1) || (rc[last] >= 0 && rc[last] % 2 == 0))
          throw InputError(at + ": PE " + std::to_string(p) + " splits a RoPE pair (allowed: both columns of a pair on one PE)");
      }
    }
    if (next != j.n)
      throw InputError(at + ": the shards hold " + std::to_string(next) + " of " + std::to_string(j.n) + " columns");
  }
  const auto plans = vector_kernel_plans(cfg, jobs);
  for (int p = 0; p < pes; ++p) {
    uint64_t end = 0;
    for (size_t i = 0; i < jobs.size(); ++i) {
      const VectorKernelPlan& pl = plans[i][size_t(p)];
      if (!pl.active()) continue;
      if (pl.rb < 1)
        throw InputError(where + ": pe.sram_bytes = " + std::to_string(cfg.pe.sram_bytes) + " cannot hold one row of " +
                         jobs[i].op + " (" + std::to_string(pl.cols) + " columns in and out)");
      end = pl.out_base + uint64_t(jobs[i].m) * uint64_t(pl.cols) * dtype_bytes(jobs[i].out_dtype);
    }
    if (end > cfg.pe.hbm.capacity_bytes)
      throw InputError(where + ": pe.hbm.capacity_bytes = " + std::to_string(cfg.pe.hbm.capacity_bytes) +
                       " is exceeded on chip PE " + std::to_string(p) + " (the vector kernels' rows need " +
                       std::to_string(end) + " bytes)");
  }
}

}  // namespace ahbm
