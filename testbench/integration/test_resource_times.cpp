// Issue 37 item 2, one closed form per resource: each resource's single transfer, simulated, takes
// the time of its closed form in hw/common/model/resource_times.h as the cost model books it (the
// double-ns instantiation), and that closed form is the documented formula, computed here from
// the parameters. One tiny timing-only run (2 CUBEs x 2 PEs, one 5-row Q tile, 40 KV tokens per
// PE: one KV block each) crosses every resource once per PE or CUBE, before anything queues.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "hw/chip/simulate.h"
#include "hw/common/model/attn_state.h"
#include "hw/common/model/engines.h"
#include "hw/common/model/resource_times.h"
#include "test_support.h"

using namespace ahbm;

namespace {

constexpr int kRows = 5, kHeadDim = 72, kTokensPerPe = 40;
// sc_time resolution: a transfer at a bandwidth rounds to it (transfer_time), once per transfer.
constexpr double kPs = 1e-3;

struct TinyRun {
  HwConfig hw;
  AttentionJob job;
  SimResult r;
  // The spans doing `activity`, any component, in recording order; at least one.
  std::vector<const Span*> spans(const std::string& activity) const {
    std::vector<const Span*> out;
    for (const Span& s : r.spans->spans())
      if (r.spans->name(s.activity) == activity) out.push_back(&s);
    EXPECT_FALSE(out.empty()) << activity;
    return out;
  }
};

TinyRun tiny_run(const HwConfig& hw, DType t) {
  TinyRun x;
  x.hw = hw;
  x.job = timing_copy(test::random_job(hw, kRows, kTokensPerPe * hw.pes_per_group(), kHeadDim, 7));
  x.job.dtype = t;
  x.r = simulate(hw, {x.job});
  return x;
}

HwConfig two_cubes() { return test::small_hw(2, 2); }

double ns(const Span* s) { return to_ns(s->end - s->start); }

// Bytes of an element of each storage type, as the formulas of docs/model.md count them.
double elem_bytes(DType t) { return t == DType::fp32 ? 4.0 : 2.0; }

}  // namespace

// The slice streams K then V of a PE's 40-token block after one first-byte latency:
// latency_ns + 2 x bytes / (bandwidth_gbps x efficiency), at efficiency 1 and 0.8.
TEST(ResourceTimes, HbmBurstAtEfficiencyOneAndPointEight) {
  for (double efficiency : {1.0, 0.8}) {
    HwConfig hw = two_cubes();
    hw.pe.hbm.efficiency = efficiency;
    const TinyRun x = tiny_run(hw, DType::fp32);
    const uint64_t bytes = uint64_t(kTokensPerPe) * kHeadDim * 4;
    const double closed = hbm_read<double>(hw.pe.hbm, bytes) + hbm_burst<double>(hw.pe.hbm, bytes);
    const double formula = hw.pe.hbm.latency_ns + 2.0 * double(bytes) / (hw.pe.hbm.bandwidth_gbps * efficiency);
    EXPECT_NEAR(closed, formula, 2 * kPs) << efficiency;  // two bursts, each rounded to the ps
    // The cost model books the pair as one read of both (cost_model.cpp slice_ns): one rounding.
    EXPECT_NEAR(hbm_read<double>(hw.pe.hbm, 2 * bytes), closed, 2 * kPs) << efficiency;
    const auto dma = x.spans("dma_kv");
    ASSERT_EQ(dma.size(), 4u);  // one block per PE
    for (const Span* s : dma) {
      EXPECT_EQ(s->bytes, int64_t(2 * bytes));
      EXPECT_NEAR(ns(s), closed, 1e-6) << efficiency;  // the same sc_time sums, read in ns
    }
  }
  // Efficiency 0.8 makes the bytes' part 1.25 times longer, in the simulation as in the formula.
  HwConfig slow = two_cubes();
  slow.pe.hbm.efficiency = 0.8;
  const TinyRun full = tiny_run(two_cubes(), DType::fp32), at_08 = tiny_run(slow, DType::fp32);
  const double lat = slow.pe.hbm.latency_ns;
  EXPECT_NEAR(ns(at_08.spans("dma_kv")[0]) - lat, 1.25 * (ns(full.spans("dma_kv")[0]) - lat), 2 * kPs);
}

// A Q tile is rows x d x the storage type's bytes everywhere it goes (host link, NoC, Q buffer):
// 4 for fp32, 2 for fp16 and bf16; its upload over the host link takes latency_ns + bytes /
// bandwidth_gbps (QSource).
TEST(ResourceTimes, QTileBytesAndHostUploadInEachStorageType) {
  for (DType t : {DType::fp32, DType::fp16, DType::bf16}) {
    const TinyRun x = tiny_run(two_cubes(), t);
    const uint64_t bytes = q_tile_bytes(x.job, kRows);
    EXPECT_EQ(double(bytes), kRows * kHeadDim * elem_bytes(t)) << dtype_name(t);
    const auto load = x.spans("q_load");
    ASSERT_EQ(load.size(), 1u);
    EXPECT_EQ(load[0]->bytes, int64_t(bytes)) << dtype_name(t);
    for (const char* at : {"q_write", "q_read"})
      for (const Span* s : x.spans(at)) EXPECT_EQ(s->bytes, int64_t(bytes)) << at << " " << dtype_name(t);
    const HostConfig& h = x.hw.host;
    const double closed = host_upload<double>(h, bytes);
    EXPECT_NEAR(closed, h.latency_ns + double(bytes) / h.bandwidth_gbps, kPs) << dtype_name(t);
    EXPECT_NEAR(ns(load[0]), closed, 1e-6) << dtype_name(t);
  }
}

// The cycle-counted resources: the Q buffer's write port and read ports and the CUBE bus to the
// reducer take ceil(bytes / bytes_per_cycle) cycles. At 1 GHz a cycle is a whole number of ps and
// the simulation is the closed form exactly; at 0.75 GHz the modules' clock period rounds to the
// ps (1333 ps) while the cost model counts 1/0.75 ns, so they agree within one cycle (here within
// a fraction of a ns over a few tens of cycles).
TEST(ResourceTimes, QBufferWriteAndReadAndReducerBusInCycles) {
  for (double ghz : {1.0, 0.75})
    for (DType t : {DType::fp32, DType::bf16}) {
      HwConfig hw = two_cubes();
      hw.clock_ghz = ghz;
      const TinyRun x = tiny_run(hw, t);
      const TimeUnits<double> units(ghz);
      const double cycle = 1.0 / ghz, tol = ghz == 1.0 ? 1e-6 : cycle;
      const std::string what = std::to_string(ghz) + " GHz " + dtype_name(t);
      const uint64_t q = uint64_t(kRows * kHeadDim * elem_bytes(t));
      const uint64_t state = uint64_t(kRows) * (kHeadDim + 2) * 4;  // (m, l, o) in fp32
      EXPECT_EQ(AttnState::wire_bytes(kRows, kHeadDim), state);
      const QBufferConfig& qb = hw.cube.q_buffer;
      const double write = q_buffer_write(units, qb, q), read = q_buffer_read(units, qb, q);
      const double bus = reducer_bus(units, hw.cube.reducer, state);
      EXPECT_DOUBLE_EQ(write, std::ceil(double(q) / qb.write_bytes_per_cycle) * cycle) << what;
      EXPECT_DOUBLE_EQ(read, std::ceil(double(q) / qb.port_bytes_per_cycle) * cycle) << what;
      EXPECT_DOUBLE_EQ(bus, std::ceil(double(state) / hw.cube.reducer.bus_bytes_per_cycle) * cycle) << what;
      const auto w = x.spans("q_write"), r = x.spans("q_read"), s = x.spans("send_state");
      EXPECT_EQ(w.size(), 2u);  // one per CUBE
      EXPECT_EQ(r.size(), 4u);  // one per PE
      EXPECT_EQ(s.size(), 4u);
      for (const Span* p : w) EXPECT_NEAR(ns(p), write, tol) << "q_write " << what;
      for (const Span* p : r) EXPECT_NEAR(ns(p), read, tol) << "q_read " << what;
      for (const Span* p : s) {
        EXPECT_EQ(p->bytes, int64_t(state));
        EXPECT_NEAR(ns(p), bus, tol) << "send_state " << what;
      }
    }
}

// CUBE 1's merged state crosses the link to CUBE 0: bytes / bandwidth_gbps on the link, landing
// latency_ns later (the span runs to the landing).
TEST(ResourceTimes, InterCubeLinkTransfer) {
  HwConfig hw = two_cubes();
  hw.group.link.bandwidth_gbps = 48.0;  // not a divisor of the bytes: the transfer rounds to the ps
  const TinyRun x = tiny_run(hw, DType::fp16);
  const uint64_t state = uint64_t(kRows) * (kHeadDim + 2) * 4;  // the state is fp32 whatever Q's type
  const double closed = link_transfer<double>(hw.group.link, state) + link_latency<double>(hw.group.link);
  EXPECT_NEAR(closed, double(state) / 48.0 + hw.group.link.latency_ns, kPs);
  const auto link = x.spans("link_xfer");
  ASSERT_EQ(link.size(), 1u);
  EXPECT_EQ(link[0]->bytes, int64_t(state));
  EXPECT_NEAR(ns(link[0]), closed, 1e-6);
}

// O returns over the host link's chip-to-host direction: rows x d x 4 bytes (O is fp32) at
// bandwidth_gbps, landing latency_ns later (Host; the span runs from the link's start to the landing).
TEST(ResourceTimes, HostOReturn) {
  for (DType t : {DType::fp32, DType::bf16}) {
    HwConfig hw = two_cubes();
    hw.host.bandwidth_gbps = 24.0;
    const TinyRun x = tiny_run(hw, t);
    const uint64_t o = o_tile_bytes(kRows, kHeadDim);
    EXPECT_EQ(o, uint64_t(kRows) * kHeadDim * 4);
    const double closed = host_transfer<double>(hw.host, o) + host_latency<double>(hw.host);
    EXPECT_NEAR(closed, double(o) / 24.0 + hw.host.latency_ns, kPs);
    const auto ret = x.spans("o_return");
    ASSERT_EQ(ret.size(), 1u);
    EXPECT_EQ(ret[0]->bytes, int64_t(o));
    EXPECT_NEAR(ns(ret[0]), closed, 1e-6) << dtype_name(t);
  }
}
