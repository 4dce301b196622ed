// Storage precision: fp16 and bf16 keep O within their documented tolerance of the float64
// reference on the unrounded tensors (and the datapath itself stays fp32-exact on the stored
// ones); bytes moved, HBM time and SRAM checks follow the storage type.
#include <gtest/gtest.h>

#include "hw/chip/chip_stats.h"

#include "hw/common/base/error.h"
#include "runtime/run/driver.h"

using namespace ahbm;

namespace {

Scenario with_dtype(const std::string& trace, DType t) {
  Scenario sc = load_scenario(std::string(AHBM_SOURCE_DIR) + "/traces/" + trace + ".json");
  sc.model.dtype = t;
  return sc;
}

RunOutput run(const Scenario& sc, bool values, HwConfig hw = {}, bool keep_steps = false) {
  RunOptions opt;
  opt.vcd = false;
  opt.values = values;
  opt.keep_steps = keep_steps;
  return execute(sc, hw, opt);
}

}  // namespace

TEST(RuntimePrecision, HalfTypesWithinDocumentedTolerance) {
  Scenario sc = with_dtype("fanout_8x20", DType::fp32);
  sc.phases.push_back(PhaseSpec{PhaseType::decode, 0, 2});
  sc.phases.push_back(PhaseSpec{PhaseType::join, 3, 0});
  sc.shared_prefix_tokens = 40;  // short contexts: little averaging, the harder case
  std::map<DType, double> err;
  for (DType t : {DType::fp16, DType::bf16}) {
    sc.model.dtype = t;
    const RunOutput r = run(sc, true);
    const NumericsSummary& n = r.summary.numerics;
    EXPECT_LE(n.max_abs_err, 1e-4) << dtype_name(t);  // fp32 arithmetic on stored values
    ASSERT_TRUE(n.storage.has_value()) << dtype_name(t);
    err[t] = n.storage->max_abs_err;
    EXPECT_LE(err[t], storage_tolerance(t)) << dtype_name(t);
    EXPECT_EQ(n.storage->tolerance_abs, storage_tolerance(t));
    EXPECT_TRUE(n.pass);
    EXPECT_GT(err[t], 100 * n.max_abs_err) << "rounding must show";
  }
  EXPECT_GT(err[DType::bf16], 3 * err[DType::fp16]);  // 8x coarser roundoff
}

TEST(RuntimePrecision, DecodeMovesHalfTheBytesInHalfTheHbmTime) {
  // One HBM3 stack (819 GB/s) shared by the 32 PEs of a group: 25.6 GB/s per PE makes decode
  // (a few rows per step) bandwidth-bound; with the default 307 GB/s per PE the padded GEMM
  // tiles dominate instead.
  HwConfig hw;
  hw.pe.hbm.bandwidth_gbps = 25.6;
  // Each step at its largest Q tile (one tile per step here), the same in fp32 and fp16: the
  // closed form below streams every shard once per step, and the byte ratio compares like with
  // like (the tile search may cut fp32 and fp16 differently).
  hw.q_tile_search = QTileSearch::largest;
  double total[2], transfer[2];
  uint64_t bytes[2];
  int i = 0;
  for (DType t : {DType::fp32, DType::fp16}) {
    const RunOutput r = run(with_dtype("decode_heavy", t), false, hw, true);
    total[i] = r.summary.phases.at("decode").ns;
    transfer[i] = 0;
    bytes[i] = 0;
    for (const auto& [name, ph] : r.summary.phases) bytes[i] += ph.hbm_bytes_read;
    // Every PE's DMA time over the whole run in closed form: per KV tile of n tokens of every
    // step, one burst latency plus K and V transferred back to back at the slice bandwidth; and
    // before it, the step's KV writes (docs/model.md "Timed KV writes"): appended tokens' K and
    // V transferred, a copy's read (latency + transfer) first.
    std::vector<double> dma_busy;  // per PE of the group
    for_each_pe(r.sim.stats, [&](int, const StatsNode& pe) { dma_busy.push_back(pe.get(PeStats::dma_busy)); });
    ASSERT_EQ(dma_busy.size(), size_t(hw.pes_per_group()));
    for (int p = 0; p < hw.pes_per_group(); ++p) {
      double expect = 0;
      for (const StepOutput& st : r.steps) {
        const AttentionJob& job = st.plan.jobs.at(0);
        const int tokens = job.shards[size_t(p)].tokens;
        for (const KvWrite& w : pe_kv_writes(job, p)) {
          const double xfer = 2.0 * w.count * job.head_dim * double(dtype_bytes(t)) / hw.pe.hbm.bandwidth_gbps;
          expect += xfer + (w.copy() ? hw.pe.hbm.latency_ns + xfer : 0.0);
          ASSERT_TRUE(!w.copy() || w.src_pe == p) << "a remote copy's time is not this closed form";
        }
        for (int first = 0; first < tokens; first += hw.pe.dma.kv_tile_tokens) {
          const int n = std::min(hw.pe.dma.kv_tile_tokens, tokens - first);
          const double xfer = 2.0 * n * job.head_dim * double(dtype_bytes(t)) / hw.pe.hbm.bandwidth_gbps;
          expect += hw.pe.hbm.latency_ns + xfer;
          transfer[i] += xfer;
        }
      }
      const double got = dma_busy[size_t(p)];
      EXPECT_NEAR(got, expect, 1e-6 * expect) << dtype_name(t) << " PE " << p;
    }
    ++i;
  }
  EXPECT_EQ(bytes[0], 2 * bytes[1]);
  EXPECT_NEAR(transfer[1], transfer[0] / 2, 1e-9 * transfer[0]);
  // Bandwidth-bound: the decode phase sheds a large part of its time (the rest is the
  // per-step host latency, reduction and padded GEMM tiles, which do not shrink).
  EXPECT_LT(total[1], 0.75 * total[0]);
}

TEST(RuntimePrecision, SramAndQBufferChecksCountStorageBytes) {
  // A Q buffer that holds 160 rows of fp16 but not of fp32: fp32 needs two tiles, fp16 one.
  HwConfig hw;
  hw.cube.q_buffer.bytes = 160 * 128 * 2;
  hw.q_tile_search = QTileSearch::largest;  // the largest tile that fits, which is what this counts
  const RunOutput r32 = run(with_dtype("fanout_8x20", DType::fp32), false, hw);
  const RunOutput r16 = run(with_dtype("fanout_8x20", DType::fp16), false, hw);
  EXPECT_EQ(r32.summary.q_tiles, 2u);
  EXPECT_EQ(r16.summary.q_tiles, 1u);
  // A fixed 160-row tile is refused in fp32 with a message naming the buffer and the type.
  hw.q_tile_rows = 160;
  try {
    run(with_dtype("fanout_8x20", DType::fp32), false, hw);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cube.q_buffer.bytes"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("fp32"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(run(with_dtype("fanout_8x20", DType::fp16), false, hw));
}
