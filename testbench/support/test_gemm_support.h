#pragma once
// Closed forms of the weight GEMMs on a PE (docs/model.md "Weight GEMMs") shared by the tests.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "hw/common/model/attn_state.h"
#include "hw/common/model/engines.h"
#include "hw/common/contract/gemm_job.h"
#include "hw/common/model/vector_ops.h"
#include "hw/noc/ideal_noc.h"
#include "runtime/numerics/tensor_gen.h"

namespace ahbm::test {

// A chip of one group: `cubes` CUBEs of `pes` PEs, otherwise the default (1 GHz: 1 cycle = 1 ns).
inline HwConfig gemm_chip(int cubes = 1, int pes = 2) {
  HwConfig c;
  c.group.cubes = cubes;
  c.cube.pes = pes;
  return c;
}

// A weight GEMM "proj" of M × K × N, timing only.
inline GemmJob gemm_of(int m, int k, int n, DType t = DType::fp16, GemmMapping mapping = GemmMapping::w_stationary) {
  GemmJob j;
  j.op = "proj";
  j.m = m;
  j.k = k;
  j.n = n;
  j.dtype = t;
  j.mapping = mapping;
  return j;
}

// Simulated times are kept in ps (SystemC's resolution); a closed form in ns matches to a few.
constexpr double kTimeTolNs = 0.01;

inline double ns_of_bytes(uint64_t bytes, double gbps) { return double(bytes) / gbps; }

// The ideal NoC's latency of a config (noc.params.latency_ns): x_ready_ns's λ.
inline double ideal_noc_latency_ns(const HwConfig& c) {
  NocEstimateInput in;
  in.params = c.noc.params;
  in.clock_ghz = c.clock_ghz;
  return IdealNoc::estimate(in).latency_ns;
}

// When the last row of a one-job run's X is in every CUBE's Q buffer (ideal NoC).
inline double x_in_ns(const HwConfig& c, const GemmJob& j) { return x_ready_ns(c, {j}, 0, j.m - 1, ideal_noc_latency_ns(c)); }

// The per-PE time when the GEMM engine is the bottleneck (every W tile loaded before compute
// needs it) and the M, N edges are one block: the engine starts when X is in and the first W
// tile has arrived (read once the host has launched the kernel, host.kernel_launch_ns), then per W tile reads its X block (Q-buffer port), runs the RMSNorm
// prologue on it (fused), and issues its engine tiles; the accumulators drain once; the fused
// epilogues run on the vector unit (RMSNorm scale, RoPE, activation, residual read and add:
// hw/common/model/vector_ops.h); the Y block is written back at the slice bandwidth. 1 GHz: 1 cycle = 1 ns.
inline double compute_bound_ns(const HwConfig& c, const GemmJob& j, const GemmPePlan& pl) {
  const uint64_t b = j.elem_bytes(), m = uint64_t(j.m), n_p = uint64_t(pl.shard.n_count);
  const GemmFusion& f = j.fused;
  const VectorConfig& v = c.pe.vector;
  const double first_w = c.host.kernel_launch_ns + c.pe.hbm.latency_ns + ns_of_bytes(uint64_t(pl.blk.kb) * uint64_t(pl.blk.nb) * b, c.pe.hbm.bandwidth_gbps);
  double t = std::max(x_in_ns(c, j), first_w);
  for (int k0 = 0; k0 < pl.shard.k_count; k0 += pl.blk.kb) {
    const uint64_t kb = uint64_t(std::min(pl.blk.kb, pl.shard.k_count - k0));
    t += double(ceil_div(m * kb * b, uint64_t(c.cube.q_buffer.port_bytes_per_cycle)));
    if (f.rms_norm) t += double(rms_prologue_cycles(v, m, kb));
    t += double(gemm_tiles(c.pe.gemm, m, n_p, kb) * gemm_issue_interval(c.pe.gemm, j.dtype));
  }
  t += c.pe.gemm.pipeline_latency;
  if (f.rms_norm) t += double(rms_scale_cycles(v, m, n_p));
  if (f.rope()) {
    uint64_t rotated = 0;
    for (int col = pl.shard.n_begin; col < pl.shard.n_begin + pl.shard.n_count; ++col) rotated += f.rope_col[size_t(col)] >= 0;
    t += double(rope_cycles(v, m, rotated));
  }
  if (f.gated_act) t += double(gated_act_cycles(v, f.act, m, n_p));
  if (f.residual)
    t += c.pe.hbm.latency_ns + ns_of_bytes(m * n_p * 4, c.pe.hbm.bandwidth_gbps) + double(residual_cycles(v, m, n_p));
  return t + ns_of_bytes(gemm_y_block_bytes(f, j.m, pl.shard.n_count), c.pe.hbm.bandwidth_gbps);
}

// Unit roundoff of a storage type and fp32's.
inline double unit_roundoff(DType t) { return t == DType::fp32 ? std::ldexp(1.0, -24) : t == DType::fp16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8); }

// The unrounded X and W of fill_gemm_values(j, seed, op) (runtime/model/layer_plan.h): the
// float64 reference's inputs.
inline void raw_values(const GemmJob& j, uint64_t seed, int op, std::vector<float>& x, std::vector<float>& w) {
  x.resize(size_t(j.m) * size_t(j.k));
  w.resize(size_t(j.k) * size_t(j.n));
  for (size_t i = 0; i < x.size(); ++i) x[i] = tensor_value(seed, TensorKind::activation, op, 0, int64_t(i) / j.k, int64_t(i) % j.k);
  for (size_t i = 0; i < w.size(); ++i) w[i] = tensor_value(seed, TensorKind::weight, op, 0, int64_t(i) / j.n, int64_t(i) % j.n);
}

// Max over Y of |Y - Y64| / bound, where Y64 is the float64 product of the *unrounded* X and W
// and the bound (docs/model.md "Weight GEMMs", values) is
//   (2·u_t + u_t² + K·u_32) · Σ_k |x_k| |w_k|  + 1e-30
// (u_t: the storage type's unit roundoff, for rounding X and W; K·u_32: fp32 accumulation of K
// products in any order). A result ≤ 1 is within the bound.
inline double worst_vs_bound(const MatrixRM& y, const std::vector<float>& x_raw, const std::vector<float>& w_raw, int m, int k, int n, DType t) {
  const double u = unit_roundoff(t), gamma = 2 * u + u * u + double(k) * std::ldexp(1.0, -24);
  double worst = 0;
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c) {
      double ref = 0, mag = 0;
      for (int i = 0; i < k; ++i) {
        const double p = double(x_raw[size_t(r) * size_t(k) + size_t(i)]) * double(w_raw[size_t(i) * size_t(n) + size_t(c)]);
        ref += p;
        mag += std::abs(p);
      }
      worst = std::max(worst, std::abs(double(y(r, c)) - ref) / (gamma * mag + 1e-30));
    }
  return worst;
}

}  // namespace ahbm::test
