// Simulated time against closed forms for the simple cases (one DMA burst, double buffering,
// Q-buffer port contention, inter-CUBE reduction topologies), and the isolation of
// simulations from each other.
#include <gtest/gtest.h>

#include "hw/chip/simulate.h"
#include "hw/common/model/engines.h"
#include "hw/common/base/timing.h"
#include "test_sim_support.h"
#include "test_support.h"

using namespace ahbm;

using test::spans_of;

TEST(Timing, DmaBurstIsLatencyPlusTransfer) {
  HwConfig hw = test::small_hw(1, 1);
  hw.pe.hbm.bandwidth_gbps = 100.0;  // 100 bytes/ns
  hw.pe.hbm.latency_ns = 40.0;
  const int d = 64, tokens = 100, tile = hw.pe.dma.kv_tile_tokens;  // tiles of 64 and 36 tokens
  const SimResult r = simulate(hw, {test::random_job(hw, 16, tokens, d, 1)});
  const auto dma = spans_of(r, "group0.cube0.pe0.dma", "dma_kv");
  ASSERT_EQ(dma.size(), 2u);
  // K and V bursts issued together: one latency, both transfers back to back.
  EXPECT_NEAR(to_ns(dma[0]->end - dma[0]->start), 40.0 + 2.0 * tile * d * 4 / 100.0, 1e-3);
  EXPECT_NEAR(to_ns(dma[1]->end - dma[1]->start), 40.0 + 2.0 * (tokens - tile) * d * 4 / 100.0, 1e-3);
}

// With two SRAM slots the next tile streams in while the current one computes: compute runs
// back to back after the first tile. With one slot every tile waits for its own DMA.
TEST(Timing, DoubleBufferingHidesDmaBehindCompute) {
  HwConfig hw = test::small_hw(1, 1);
  hw.pe.hbm.bandwidth_gbps = 20.0;  // slow enough that DMA is visible, still below compute time
  const int d = 128, tokens = 512, rows = 64;
  auto run = [&](int buffers) {
    hw.pe.dma.buffers = buffers;
    return simulate(hw, {test::random_job(hw, rows, tokens, d, 2)});
  };
  const SimResult two = run(2), one = run(1);
  const auto qk2 = spans_of(two, "group0.cube0.pe0", "gemm_qk");
  const auto pv2 = spans_of(two, "group0.cube0.pe0", "gemm_pv");
  ASSERT_EQ(qk2.size(), 8u);
  for (size_t i = 1; i < qk2.size(); ++i) EXPECT_EQ(qk2[i]->start, pv2[i - 1]->end) << "KV tile " << i << " stalled";
  const auto qk1 = spans_of(one, "group0.cube0.pe0", "gemm_qk");
  const auto dma1 = spans_of(one, "group0.cube0.pe0.dma", "dma_kv");
  const auto pv1 = spans_of(one, "group0.cube0.pe0", "gemm_pv");
  for (size_t i = 1; i < qk1.size(); ++i) {
    EXPECT_EQ(dma1[i]->start, pv1[i - 1]->end);  // the single slot frees only after compute
    EXPECT_EQ(qk1[i]->start, dma1[i]->end);
  }
  const double dma_ns = to_ns(dma1[1]->end - dma1[1]->start);
  EXPECT_NEAR(one.end_ns - two.end_ns, 7 * dma_ns, 1.0);  // 7 exposed refills
}

// 8 PEs read the same Q tile through 2 ports: reads go in 4 waves of one read time each.
TEST(Timing, QBufferPortsSerialiseReads) {
  HwConfig hw = test::small_hw(1, 8);
  const int d = 128, rows = 32;
  const SimResult r = simulate(hw, {test::random_job(hw, rows, 8 * 64, d, 3)});
  const double read = double(ceil_div(uint64_t(rows) * d * 4, hw.cube.q_buffer.port_bytes_per_cycle));
  double first_start = 1e300, last_end = 0;
  for (int p = 0; p < 8; ++p) {
    const auto q = spans_of(r, "group0.cube0.pe" + std::to_string(p), "q_read");
    ASSERT_EQ(q.size(), 1u);
    EXPECT_DOUBLE_EQ(to_ns(q[0]->end - q[0]->start), read);
    first_start = std::min(first_start, to_ns(q[0]->start));
    last_end = std::max(last_end, to_ns(q[0]->end));
  }
  EXPECT_DOUBLE_EQ(last_end - first_start, 4 * read);
}

// A chain needs 3 sequential link hops to bring 4 CUBE states to CUBE 0, a tree 2 levels; the
// difference is exactly one level of (transfer + latency + merge). Values are the same.
TEST(Timing, ReductionTopologiesOrderAndAgree) {
  auto run = [](const std::string& topo) {
    HwConfig hw = test::small_hw(4, 1);
    hw.group.link.topology = choice_of<ReductionTopology>(topo);
    return simulate(hw, {test::random_job(hw, 32, 4 * 64, 128, 4)});
  };
  const SimResult chain = run("chain"), ring = run("ring"), tree = run("tree");
  HwConfig hw = test::small_hw(4, 1);
  const double xfer = 32.0 * (128 + 2) * 4 / hw.group.link.bandwidth_gbps + hw.group.link.latency_ns;
  const double merge = double(merge_cycles(hw.cube.reducer.lanes, hw.pe.vector.ops_per_merge, 32, 128));
  EXPECT_NEAR(chain.end_ns - tree.end_ns, xfer + merge, 1e-3);
  EXPECT_NEAR(ring.end_ns, tree.end_ns, 1e-3);  // 4-CUBE ring: also two levels (2->1->0, 3->0)
  EXPECT_EQ(chain.outputs[0].rows(), 32);
  EXPECT_LT((chain.outputs[0] - tree.outputs[0]).cwiseAbs().maxCoeff(), 1e-6f);
  EXPECT_LT((ring.outputs[0] - tree.outputs[0]).cwiseAbs().maxCoeff(), 1e-6f);
}

// O returns over the host link's chip-to-host direction: after the root's O packet reaches the
// host port, rows x d x 4 bytes at host.bandwidth_gbps, then host.latency_ns. One tile pays the
// link latency twice (its Q write and its O return) and its bytes once each way.
TEST(Timing, OReturnsOverTheHostLink) {
  const int rows = 32, d = 64;
  auto run = [&](double latency_ns, double gbps) {
    HwConfig hw = test::small_hw(2, 2);
    hw.host.latency_ns = latency_ns;
    hw.host.bandwidth_gbps = gbps;
    return simulate(hw, {test::random_job(hw, rows, 4 * 64, d, 5)});
  };
  const double bytes = double(o_tile_bytes(rows, d));
  const SimResult r = run(300, 16);
  const auto o = spans_of(r, "host", "o_return");
  ASSERT_EQ(o.size(), 1u);
  const auto normalise = spans_of(r, "group0.cube0.reducer", "normalise");
  ASSERT_EQ(normalise.size(), 1u);
  const double noc_ns = 10.0;  // the ideal NoC's latency (docs/noc.md)
  EXPECT_NEAR(to_ns(o[0]->start), to_ns(normalise[0]->end) + noc_ns, 1e-3);
  EXPECT_NEAR(to_ns(o[0]->end - o[0]->start), bytes / 16 + 300, 1e-3);
  EXPECT_NEAR(r.end_ns, to_ns(o[0]->end), 1e-3);
  EXPECT_EQ(o[0]->bytes, int64_t(bytes));
  // Latency: once for Q, once for O. Bandwidth: Q (fp32 here) and O bytes, one way each.
  EXPECT_NEAR(run(1300, 16).end_ns - r.end_ns, 2 * 1000.0, 1e-3);
  const double q_bytes = double(rows) * d * 4;
  EXPECT_NEAR(r.end_ns - run(300, 32).end_ns, (q_bytes + bytes) * (1.0 / 16 - 1.0 / 32), 1e-3);
}

// Two simulations with different configs in one process: each gives what it gives alone.
TEST(Timing, SimulationsInOneProcessAreIndependent) {
  HwConfig slow = test::small_hw(2, 2), fast = test::small_hw(2, 2);
  fast.clock_ghz = 2.0;
  const AttentionJob job = test::random_job(slow, 32, 256, 64, 9);
  const SimResult a1 = simulate(slow, {job});
  const SimResult b = simulate(fast, {job});
  const SimResult a2 = simulate(slow, {job});
  EXPECT_LT(b.end_ns, a1.end_ns);
  EXPECT_EQ(a1.end_ns, a2.end_ns);
  EXPECT_EQ(a1.spans->spans().size(), a2.spans->spans().size());
  EXPECT_EQ(a1.outputs[0], a2.outputs[0]);
  EXPECT_EQ(a1.outputs[0], b.outputs[0]);  // timing never changes values
}
