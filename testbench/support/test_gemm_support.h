#pragma once
// Closed forms of the weight GEMMs on a PE (docs/model.md "Weight GEMMs") shared by the tests.
#include <algorithm>
#include <cstdint>

#include "hw/common/engines.h"
#include "hw/common/gemm_job.h"

namespace ahbm::test {

// Simulated times are kept in ps (SystemC's resolution); a closed form in ns matches to a few.
constexpr double kTimeTolNs = 0.01;

inline double ns_of_bytes(uint64_t bytes, double gbps) { return double(bytes) / gbps; }

// The per-PE time when the GEMM engine is the bottleneck (every W tile loaded before compute
// needs it) and the M, N edges are one block: the engine starts when X is in and the first W
// tile has arrived, then per W tile reads its X block (Q-buffer port) and issues its engine
// tiles; the accumulators drain once; the Y block is written back at the slice bandwidth.
inline double compute_bound_ns(const HwConfig& c, const GemmJob& j, const GemmPePlan& pl) {
  const uint64_t b = j.elem_bytes();
  const double first_w = c.pe.hbm.latency_ns + ns_of_bytes(uint64_t(pl.blk.kb) * uint64_t(pl.blk.nb) * b, c.pe.hbm.bandwidth_gbps);
  double t = std::max(x_ready_ns(c, {j}, 0, j.m - 1), first_w);
  for (int k0 = 0; k0 < pl.shard.k_count; k0 += pl.blk.kb) {
    const uint64_t kb = uint64_t(std::min(pl.blk.kb, pl.shard.k_count - k0));
    t += double(ceil_div(uint64_t(j.m) * kb * b, uint64_t(c.cube.q_buffer.port_bytes_per_cycle)));
    t += double(gemm_tiles(c.pe.gemm, uint64_t(j.m), uint64_t(pl.shard.n_count), kb) * gemm_issue_interval(c.pe.gemm, j.dtype));
  }
  t += c.pe.gemm.pipeline_latency;
  return t + ns_of_bytes(uint64_t(j.m) * uint64_t(pl.shard.n_count) * 4, c.pe.hbm.bandwidth_gbps);
}

}  // namespace ahbm::test
