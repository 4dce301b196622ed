// The two parts of a W-stationary weight GEMM that travel over the chip (docs/model.md "Weight
// GEMMs"): X from the host through the Q source's multicast into the CUBEs' Q buffers
// (hw/chip/host.h, q_source.h, hw/cube/q_buffer.h) against its closed form x_ready_ns on the
// ideal NoC (aligned and ragged M, two jobs), later on a NoC with contention, and the PEs
// starting an M-block only once its X is written; and the K-split reduction (hw/pe/gemm_program.cpp):
// partial Y blocks over the NoC to their owner, added on its vector unit, against its closed form,
// with its counters, and its values against float64.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "hw/chip/simulate.h"
#include "hw/common/model/engines.h"
#include "runtime/model/layer_plan.h"
#include "test_gemm_support.h"

using namespace ahbm;
using ahbm::test::ideal_noc_latency_ns;
using ahbm::test::kTimeTolNs;
using ahbm::test::ns_of_bytes;
using ahbm::test::worst_vs_bound;

namespace {

HwConfig chip(int cubes, int pes) { return test::gemm_chip(cubes, pes); }

GemmJob job(int m, int k, int n, DType t = DType::fp16) { return test::gemm_of(m, k, n, t); }

// Per CUBE Q buffer (by component name), the end of each of its "q_write" spans in ns, in order.
std::map<std::string, std::vector<double>> q_writes(const SimResult& r) {
  std::map<std::string, std::vector<double>> out;
  const SpanRecorder& s = *r.spans;
  for (const Span& sp : s.spans())
    if (s.name(sp.activity) == "q_write") out[s.name(sp.component)].push_back(to_ns(sp.end));
  return out;
}

// The start of PE component `pe`'s first span of activity `activity`, in ns (-1: none).
double first_span_ns(const SimResult& r, const std::string& pe, const std::string& activity) {
  const SpanRecorder& s = *r.spans;
  for (const Span& sp : s.spans())
    if (s.name(sp.component) == pe && s.name(sp.activity) == activity) return to_ns(sp.start);
  return -1;
}

}  // namespace

TEST(GemmXPath, ArrivesAtTheClosedFormOnTheIdealNocAlignedAndRagged) {
  HwConfig c = chip(2, 2);
  c.cube.q_buffer.bytes = 2048;  // Mb = 32 (2·Mb·16·2 bytes): several M-blocks, X in several chunks
  const double lambda = ideal_noc_latency_ns(c);
  for (int m : {64, 37}) {
    SCOPED_TRACE("M=" + std::to_string(m));
    // Two jobs: the second's X queues behind the first's on the host link.
    const std::vector<GemmJob> jobs{job(m, 256, 64), job(m, 128, 96)};
    const auto plans = gemm_pe_plans(c, jobs);
    const std::vector<GemmXChunk> chunks = gemm_x_chunks(c, jobs, plans);
    ASSERT_GT(plans[0][0].m_blocks(m), 1);
    // Every M-block end is a chunk end, and no chunk holds more than a Q buffer's worth of rows.
    for (size_t jb = 0; jb < jobs.size(); ++jb)
      for (int e = plans[jb][0].blk.mb; e < m; e += plans[jb][0].blk.mb)
        EXPECT_TRUE(std::any_of(chunks.begin(), chunks.end(), [&](const GemmXChunk& ch) { return int(ch.job) == int(jb) && ch.row_end == e; }));
    for (const GemmXChunk& ch : chunks) EXPECT_LE(ch.bytes, c.cube.q_buffer.bytes);
    EXPECT_EQ(chunks.front().cubes, (std::vector<int>{0, 1}));  // a multicast to both CUBEs
    const SimResult r = Simulator(c).run_gemms(jobs);
    const auto writes = q_writes(r);
    ASSERT_EQ(writes.size(), 2u);
    for (const auto& [qb, ends] : writes) {
      SCOPED_TRACE(qb);
      ASSERT_EQ(ends.size(), chunks.size());
      // Each chunk is written when the closed form says (exact to the picosecond: the same sums).
      for (size_t i = 0; i < chunks.size(); ++i)
        EXPECT_NEAR(ends[i], x_ready_ns(c, jobs, size_t(chunks[i].job), chunks[i].row_end - 1, lambda), 1e-3) << "chunk " << i;
    }
    // The host link carried X once (M·K·b per job), every CUBE's Q buffer wrote it once.
    EXPECT_EQ(r.gemms[0].x_link_bytes, uint64_t(m) * 256u * 2u);
    EXPECT_EQ(r.gemms[0].x_noc_delivered_bytes, 2u * uint64_t(m) * 256u * 2u);
    // A PE starts its first M-block's X read no earlier than the chunk holding its last row.
    const double first_x = x_ready_ns(c, jobs, 0, plans[0][0].blk.mb - 1, lambda);
    EXPECT_GE(first_span_ns(r, "group0.cube0.pe0", "x_in") + kTimeTolNs, first_x);
    EXPECT_GE(first_span_ns(r, "group0.cube1.pe1", "x_in") + kTimeTolNs, first_x);
  }
}

TEST(GemmXPath, ANocWithContentionDeliversXLater) {
  // The same GEMM on the ideal NoC and on a mesh with narrow (4-byte) channels: the multicast of
  // X serialises into many flits, so every chunk is written later and the GEMM ends later.
  HwConfig ideal = chip(2, 2);
  ideal.cube.q_buffer.bytes = 2048;
  HwConfig narrow = ideal;
  narrow.noc.model = "mesh";
  narrow.noc.params = Json{{"flit_bytes", 4}};
  const std::vector<GemmJob> jobs{job(48, 256, 64)};
  const SimResult a = Simulator(ideal).run_gemms(jobs), b = Simulator(narrow).run_gemms(jobs);
  const auto wa = q_writes(a), wb = q_writes(b);
  ASSERT_EQ(wa.size(), wb.size());
  for (const auto& [qb, ends] : wa) {
    ASSERT_EQ(wb.at(qb).size(), ends.size());
    for (size_t i = 0; i < ends.size(); ++i) EXPECT_GT(wb.at(qb)[i], ends[i] + 100.0) << qb << " chunk " << i;
  }
  EXPECT_GT(b.end_ns, a.end_ns);
  // Only the time moves: the same bytes and MACs.
  EXPECT_EQ(a.gemms[0].macs, b.gemms[0].macs);
  EXPECT_EQ(a.gemms[0].x_bytes_read, b.gemms[0].x_bytes_read);
}

namespace {

// When a PE's one Y block (one M-block, one N-block) leaves its engine, the engine being the
// bottleneck: compute_bound_ns (test_gemm_support.h) without the write-back.
double compute_done_ns(const HwConfig& c, const GemmJob& j, const GemmPePlan& pl) {
  return ahbm::test::compute_bound_ns(c, j, pl) -
         ns_of_bytes(uint64_t(j.m) * uint64_t(pl.shard.n_count) * 4, c.pe.hbm.bandwidth_gbps);
}

}  // namespace

TEST(GemmKSplit, ReductionTakesItsClosedFormAndIsCounted) {
  // K split 2 ways on a CUBE of 2 PEs (PE 0 owns columns, PE 1 sends its partial) and 4 ways
  // over 2 CUBEs of 2 PEs (partials from the other CUBE too). One M- and N-block per PE.
  for (int k_split : {2, 4}) {
    SCOPED_TRACE("k_split " + std::to_string(k_split));
    HwConfig c = k_split == 2 ? chip(1, 2) : chip(2, 2);
    GemmJob j = job(16, 512, 32);
    j.k_split = k_split;
    const auto plans = gemm_pe_plans(c, {j});
    const GemmPePlan& owner = plans[0][0];
    ASSERT_EQ(owner.partials, k_split - 1);
    ASSERT_EQ(owner.m_blocks(j.m) * owner.n_blocks(), 1);
    for (int p = 1; p < k_split; ++p) ASSERT_EQ(plans[0][size_t(p)].owner, 0);
    const SimResult r = Simulator(c).run_gemms({j});
    const GemmOpStats& st = r.gemms[0];
    const uint64_t block = uint64_t(j.m) * uint64_t(j.n) * 4;
    // The owner: its own partial, then the latest partial over the NoC (ideal: λ after it is
    // done), the add of k_split − 1 blocks on the vector unit, the write of the sum.
    double ready = compute_done_ns(c, j, owner);
    for (int p = 1; p < k_split; ++p)
      ready = std::max(ready, compute_done_ns(c, j, plans[0][size_t(p)]) + ideal_noc_latency_ns(c));
    const double add = double(gemm_reduce_cycles(c, j.m, j.n, k_split - 1));
    EXPECT_NEAR(st.pe_end_ns[0], ready + add + ns_of_bytes(block, c.pe.hbm.bandwidth_gbps), kTimeTolNs);
    EXPECT_NEAR(st.k_reduce_busy_ns, add, kTimeTolNs);
    EXPECT_EQ(st.k_reduce_bytes, uint64_t(k_split - 1) * block);
    EXPECT_EQ(st.y_bytes_written, block);  // only the owner writes Y
    EXPECT_EQ(st.vector_ops, uint64_t(k_split - 1) * uint64_t(j.m) * uint64_t(j.n));
    EXPECT_NEAR(r.end_ns, st.pe_end_ns[0], kTimeTolNs);
  }
}

TEST(GemmKSplit, ReducedValuesMatchFloat64OnEveryNoc) {
  // Ragged K parts (301 over 4), several M-blocks, partials from another CUBE; the sum is
  // the same on the ideal NoC and the mesh (added in K order, whatever the arrival order).
  for (DType t : {DType::fp32, DType::fp16}) {
    SCOPED_TRACE(dtype_name(t));
    HwConfig c = chip(2, 2);
    c.cube.q_buffer.bytes = 2048;  // several M-blocks per PE
    GemmJob j = job(37, 301, 45, t);
    j.k_split = 4;
    fill_gemm_values(j, /*seed=*/5, /*op=*/2);
    std::vector<float> x_raw, w_raw;
    ahbm::test::raw_values(j, 5, 2, x_raw, w_raw);
    const auto plans = gemm_pe_plans(c, {j});
    ASSERT_GT(plans[0][0].m_blocks(j.m), 1);
    ASSERT_EQ(plans[0][3].owner, 0);  // PE 3 (CUBE 1) sends to PE 0 (CUBE 0)
    const SimResult ideal = Simulator(c).run_gemms({j});
    const double worst = worst_vs_bound(ideal.gemm_outputs[0], x_raw, w_raw, j.m, j.k, j.n, t);
    EXPECT_LE(worst, 1.0);
    EXPECT_GT(worst, 0.0);
    HwConfig mesh = c;
    mesh.noc.model = "mesh";
    const SimResult m = Simulator(mesh).run_gemms({j});
    EXPECT_EQ(m.gemm_outputs[0], ideal.gemm_outputs[0]);
    EXPECT_GT(ideal.gemms[0].k_reduce_bytes, 0u);
  }
}
