#pragma once
// An unfused vector operator of a decoder layer as a kernel of its own (docs/models.md "Fusion
// choices"): when a study turns a fusion off (the scenario's model.fusion), the RMSNorm or the
// RoPE that the weight GEMMs otherwise run as their prologue or epilogue (GemmFusion,
// vector_ops.h) runs on the PEs between two GEMM runs instead. Each PE reads its part of the
// rows from its HBM slice, applies the operator on its vector unit, and writes the result back,
// which the next operator then reads: the HBM round trip and the kernel launch that fusion saves
// (THInfer's Linear+RoPE fusion).
//
// A kernel job is column-parallel, like the residual stream and the GEMMs' Y it rewrites: chip PE
// p owns columns [n_begin, n_begin + n_count) of every row (`shards`, the memory map's layout of
// the tensor that produced them), so no row moves between PEs. The operator is one of
//   rms_norm  (fused.rms_norm): each row times rsqrt(Σ x² / N + eps) ⊙ g. Input: the residual
//             stream (fp32); output: the next GEMM's X in the storage type. The row sums need every
//             PE's columns: the exchange of the M partial sums (M × 4 bytes per PE) is not modelled,
//             the values use the whole row's sum.
//   rope      (fused.rope()): the Q and K columns of the QKV GEMM's Y (fp32 in, fp32 out), only the
//             rotated columns move.
// Per PE the rows go in blocks of Rb rows that fit the SRAM with their result
// (Rb = ⌊pe.sram_bytes / (cols · (b_in + b_out))⌋, at most M), each block read, computed and
// written one after another:
//   time_p = launch + Σ_blocks (read(rows·cols·b_in) + vector cycles + write(rows·cols·b_out))
// with the slice's burst timing (hbm_slice.h) and the operator's vector closed form
// (vector_ops.h: rms_prologue_cycles + rms_scale_cycles, or rope_cycles); cols = the PE's columns
// (rms_norm) or its rotated columns (rope). The kernels of one run are launched one after another
// on the host (host.kernel_launch_ns each, as attention kernels are, job.h kernel_start_ns): kernel
// j starts at (j + 1) · launch.
#include <cstdint>
#include <string>
#include <vector>

#include "hw/common/contract/gemm_job.h"

namespace ahbm {

struct VectorKernelJob {
  std::string op = "input_norm";  // operator name (spans, summary): input_norm, rope, post_attention_norm, final_norm
  std::string phase = "decode";   // the step's phase (spans)
  int m = 1, n = 1;               // the M × N rows it rewrites
  DType in_dtype = DType::fp32, out_dtype = DType::fp32;  // stored in the slice before and after
  // The operator and its parameters: exactly one of fused.rms_norm, fused.rope() (the same
  // fields the fused prologue and epilogue read; norm_weight has N values with values).
  GemmFusion fused;
  std::vector<GemmShard> shards;  // per chip PE, its columns (k fields unused)
  std::vector<float> x;           // values: M × N row-major fp32; empty: timing only
  bool values() const { return !x.empty(); }
  bool rms_norm() const { return fused.rms_norm; }
};

// One PE's part of a kernel job: the columns it moves per row (rms_norm: its columns; rope: its
// rotated ones), its row block, and where its input and output rows sit in its slice.
struct VectorKernelPlan {
  GemmShard shard;
  int cols = 0;  // columns moved and computed per row
  int rb = 0;    // rows per block
  uint64_t in_base = 0, out_base = 0;
  bool active() const { return cols > 0; }
  int blocks(int m) const { return active() ? (m + rb - 1) / rb : 0; }
};

// Per job, per chip PE (jobs checked by check_vector_kernels).
std::vector<std::vector<VectorKernelPlan>> vector_kernel_plans(const HwConfig& cfg, const std::vector<VectorKernelJob>& jobs);
// Vector-unit cycles of the kernel's operator on a block of rows × cols (the fused operator's
// closed form, vector_ops.h), and the element-ops issued.
uint64_t vector_kernel_cycles(const VectorConfig& v, const VectorKernelJob& j, uint64_t rows, uint64_t cols);
uint64_t vector_kernel_ops(const VectorKernelJob& j, uint64_t rows, uint64_t cols);
// Applies the operator to `block` (rows r0.., columns c0.. of the job; fp32 in place), then rounds
// it to out_dtype. rms_norm uses `row_sumsq` (Σ x² of each whole row).
void vector_kernel_apply(const VectorKernelJob& j, Eigen::Ref<MatrixRM> block, int r0, int c0,
                         const Eigen::Ref<const Eigen::VectorXf>& row_sumsq);
// Shapes, shards, operator, values' sizes, slice capacity. Throws InputError naming `where`.
void check_vector_kernels(const HwConfig& cfg, const std::vector<VectorKernelJob>& jobs, const std::string& where);

}  // namespace ahbm
