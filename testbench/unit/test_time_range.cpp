// Arithmetic that cannot wrap (docs/reliability.md, "Ranges of time, counts and integers"):
// durations held at the saturated time instead of SystemC's undefined double conversion, cycle
// products held at UINT64_MAX instead of wrapping, the closed-form check that refuses a run too
// long for simulated time before it starts, integers compared at full width before they are
// narrowed to the member that holds them, and join-plan counts checked against int64.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "hw/chip/simulate.h"
#include "hw/common/model/engines.h"
#include "hw/common/config/hw_config.h"
#include "hw/common/base/json_reader.h"
#include "hw/common/base/timing.h"
#include "runtime/join/shape.h"
#include "test_support.h"

using namespace ahbm;

TEST(TimeRange, DurationsSaturateInsteadOfWrapping) {
  const Clock slow(0.01);  // 100 ns a cycle
  EXPECT_EQ(slow.cycles(1000), sc_core::sc_time(100000, sc_core::SC_NS));  // in range: unchanged
  // 2^50 cycles of 100 ns = 1.1e20 ps: beyond 2^64 ps. SystemC's own conversion gives 2^63 ps
  // or 0 depending on the instruction sequence; here it is the saturated time, every time.
  EXPECT_EQ(slow.cycles(uint64_t(1) << 50), saturated_time());
  EXPECT_EQ(slow.cycles(uint64_t(1) << 40), sc_core::sc_time(1e2 * double(uint64_t(1) << 40), sc_core::SC_NS));
  EXPECT_EQ(slow.cycles(UINT64_MAX), saturated_time());
  EXPECT_EQ(transfer_time(uint64_t(1) << 50, 0.001), saturated_time());  // 1 PiB at 1 MB/s
  EXPECT_EQ(transfer_time(1000, 0.001), sc_core::sc_time(1e6, sc_core::SC_NS));
  EXPECT_EQ(sum_sat(saturated_time(), saturated_time()), saturated_time());
  EXPECT_EQ(sum_sat(sc_core::sc_time(5, sc_core::SC_NS), sc_core::sc_time(7, sc_core::SC_NS)),
            sc_core::sc_time(12, sc_core::SC_NS));
  ServerPool pool(1);  // bookings beyond the range stay at the saturated time, not wrapped
  pool.reserve(saturated_time());
  EXPECT_EQ(pool.reserve(saturated_time()).second, saturated_time());
  EXPECT_EQ(pool.busy(), saturated_time());
  EXPECT_NEAR(max_run_ns(), 4611686018427387.904, 1.0);  // 2^62 ps
}

TEST(TimeRange, CycleProductsAtTheDocumentedMaximaSaturate) {
  EXPECT_EQ(mul_sat(uint64_t(1) << 32, uint64_t(1) << 32), UINT64_MAX);
  EXPECT_EQ(mul_sat(uint64_t(1) << 31, uint64_t(1) << 32), uint64_t(1) << 63);
  EXPECT_EQ(add_sat(UINT64_MAX, 1), UINT64_MAX);
  EXPECT_EQ(ceil_div(UINT64_MAX, 2), uint64_t(1) << 63);  // (a + b - 1) / b would wrap to 0
  // 1x1x1 engine tiles at the largest issue interval (2^20 cycles), a 2^20-row tile of a
  // 1024-wide head against a 65536-token KV tile: 2^46 engine tiles, 2^66 cycles.
  GemmConfig g;
  g.tile_m = g.tile_n = g.tile_k = 1;
  g.issue_interval = int(kMaxConfigCycles);
  const uint64_t rows = uint64_t(1) << 20, n = uint64_t(1) << 16, d = 1024;
  EXPECT_EQ(gemm_tiles(g, rows, n, d), uint64_t(1) << 46);
  EXPECT_EQ(gemm_cycles(g, rows, n, d, DType::fp32), UINT64_MAX);
  // One step below: exact.
  EXPECT_EQ(gemm_cycles(g, 1024, n, d, DType::fp32), (uint64_t(1) << 36) * (uint64_t(1) << 20) + uint64_t(g.pipeline_latency));
  PeConfig pe;
  pe.gemm = g;
  pe.vector.lanes = 1;
  pe.vector.ops_per_score = pe.vector.ops_per_merge = 64;
  EXPECT_EQ(block_cycles(pe, rows, n, d, DType::fp32), UINT64_MAX);
  EXPECT_EQ(Clock(1.0).cycles(block_cycles(pe, rows, n, d, DType::fp32)), saturated_time());
}

TEST(TimeRange, RunTooLongForSimulatedTimeIsRefusedBeforeItStarts) {
  HwConfig hw = test::small_hw(1, 1);
  const AttentionJob job = test::random_job(hw, 64, 256, 64, 1);
  EXPECT_NO_THROW(check_run_length(hw, {job}, "hw.json"));
  hw.clock_ghz = 0.01;
  hw.pe.gemm.issue_interval = int(kMaxConfigCycles);
  hw.pe.gemm.tile_m = hw.pe.gemm.tile_n = hw.pe.gemm.tile_k = 1;
  // 64 rows x 256 tokens x 64 wide, twice, 2^20 cycles each at 100 ns: 2.2e14 ns, in range.
  EXPECT_NO_THROW(check_run_length(hw, {job}, "hw.json"));
  const AttentionJob big = test::random_job(hw, 512, 1024, 64, 1);  // 32x: 7.0e15 ns
  try {
    check_run_length(hw, {big}, "hw.json");
    FAIL() << "a run of 7.0e15 simulated ns was accepted";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("hw.json: the run would last longer than simulated time can represent"), std::string::npos) << m;
    EXPECT_NE(m.find("PE 0 of group 0 alone computes for at least"), std::string::npos) << m;
    EXPECT_NE(m.find("clock_ghz = 0.01 (default 1.0)"), std::string::npos) << m;
    EXPECT_NE(m.find("pe.gemm.issue_interval = 1048576 (default 16)"), std::string::npos) << m;
    EXPECT_NE(m.find("pe.gemm.tile_m = 1 (default 16)"), std::string::npos) << m;
    EXPECT_EQ(m.find("pe.hbm.bandwidth_gbps"), std::string::npos) << "only the slow parameters are named: " << m;
  }
  // The simulator checks it too, before elaborating anything.
  EXPECT_THROW(simulate(hw, {big}), InputError);
}

TEST(TimeRange, SlowHbmIsRefusedByItsStreamingBound) {
  HwConfig hw = test::small_hw(1, 1);
  hw.pe.hbm.bandwidth_gbps = 0.001;  // 1 byte/us
  // Timing only: one PE holding 2^20 tokens of a 1024-wide head, one-row Q tiles. Each tile
  // streams K and V: 2^33 bytes, 8.6e12 ns at 1 MB/s; 512 tiles are 4.4e15 ns (in range), 1024
  // are 8.8e15 ns (beyond 2^62 ps = 4.6e15 ns).
  AttentionJob job;
  job.head_dim = 1024;
  job.values = false;
  job.shards.resize(1);
  job.shards[0].tokens = 1 << 20;
  for (int r = 0; r < 512; ++r) job.tiles.push_back({r, r + 1});
  EXPECT_NO_THROW(check_run_length(hw, {job}, "hw.json"));
  for (int r = 512; r < 1024; ++r) job.tiles.push_back({r, r + 1});
  try {
    check_run_length(hw, {job}, "hw.json");
    FAIL() << "a run streaming for 8.8e15 ns was accepted";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("streams 8796093022208 KV bytes from its HBM slice"), std::string::npos) << m;
    EXPECT_NE(m.find("pe.hbm.bandwidth_gbps = 0.001 (default 307.2)"), std::string::npos) << m;
  }
}

TEST(IntegerWidth, IntegersAreComparedBeforeNarrowing) {
  EXPECT_EQ(integer_in(Json(5), 0, 7), 5);
  EXPECT_EQ(integer_in(Json(5.0), 0, 7), 5);
  // 2^32 and 2^32 + 1 narrowed to int are 0 and 1: in range, and wrong.
  EXPECT_FALSE(integer_in(Json(int64_t(1) << 32), 0, 7));
  EXPECT_FALSE(integer_in(Json((int64_t(1) << 32) + 1), 0, 7));
  EXPECT_FALSE(integer_in(Json(uint64_t(1) << 63), 0, INT64_MAX));
  EXPECT_FALSE(integer_in(Json(-1), 0, 7));
  EXPECT_FALSE(integer_in(Json(1e30), 0, INT64_MAX));
  EXPECT_FALSE(integer_in(Json(2.5), 0, 7));
  EXPECT_FALSE(integer_in(Json("3"), 0, 7));
  EXPECT_FALSE(integer_in(Json(true), 0, 7));
}

TEST(IntegerWidth, EveryHardwareIntegerRangeFitsItsMember) {
  int integers = 0;
  for (const HwParam& p : hw_params()) {
    if (p.type != ParamType::integer) continue;
    ++integers;
    EXPECT_LT(p.type_lo, p.type_hi) << p.path << ": no width recorded";
    EXPECT_GE(p.allowed.lo, p.type_lo) << p.path;
    EXPECT_LE(p.allowed.hi, p.type_hi) << p.path << ": allows values its member cannot hold";
  }
  EXPECT_GT(integers, 20);
}

TEST(CountRange, JoinPlanCountsBeyondInt64AreAnInputError) {
  join::ModelDims m;
  m.num_q_heads = m.num_kv_heads = m.head_dim = m.layers = 1024;
  m.bytes_per_element = 8;
  // In range: the closed forms, exactly.
  const join::PrefillShape s = join::prefill_shape(m, 1000, 10);
  EXPECT_EQ(s.visible_pairs_per_q_head, 10 * 1000 + 10 * 11 / 2);
  EXPECT_EQ(s.attention_flops, int64_t(4) * 1024 * (10 * 1000 + 55) * 1024 * 1024);
  EXPECT_EQ(s.new_kv_bytes, int64_t(10) * 2 * 1024 * 8 * 1024 * 1024);
  // 2^30 new tokens after 2^30 (the largest token counts a join result may give): 1.5 x 2^60
  // visible pairs, 2^94 FLOPs. They wrapped to a plausible number before.
  const int64_t max_tokens = int64_t(1) << 30;
  try {
    join::prefill_shape(m, max_tokens, max_tokens);
    FAIL() << "2^94 FLOPs were counted in int64";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("attention FLOPs of a prefill of 1073741824 tokens after 1073741824"),
              std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("is beyond the range of a 64-bit count"), std::string::npos) << e.what();
  }
  EXPECT_THROW(join::decode_kv_read_bytes(m, max_tokens, max_tokens), InputError);
  EXPECT_EQ(join::decode_kv_read_bytes(m, 100, 3), (3 * 100 + 3) * m.kv_bytes_per_token());
}
