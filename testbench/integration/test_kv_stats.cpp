// KV statistics in summary.json against counts derived by hand from the scenario; capacity
// errors from the HBM size; Q tiling that leaves the arithmetic unchanged.
#include <gtest/gtest.h>

#include "hw/chip/chip_stats.h"

#include "hw/common/base/error.h"
#include "hw/pe/sram_budget.h"
#include "runtime/run/driver.h"
#include "test_runtime_support.h"

using namespace ahbm;

namespace {

RunOutput run(const Scenario& sc, const HwConfig& hw = {}) { return test::timing_only_run(sc, hw); }

}  // namespace

TEST(KvStats, DefaultScenarioPageCounts) {
  const Scenario sc = load_scenario(std::string(AHBM_SOURCE_DIR) + "/traces/fanout_8x20.json");
  const Json kv = to_json(run(sc).summary)["kv"];
  // 8192 / 16 = 512 prefix pages (page-aligned: no copy-on-write), 20 tokens = 2 pages per agent.
  const uint64_t page = 16 * 128 * 2 * 4;
  EXPECT_EQ(kv["page_bytes_model"].get<uint64_t>(), page);
  EXPECT_EQ(kv["pages_allocated"].get<int>(), 512 + 8 * 2);
  EXPECT_EQ(kv["cow_copies"].get<int>(), 0);
  EXPECT_EQ(kv["peak_pages"].get<int>(), 528);
  EXPECT_EQ(kv["at_peak"]["shared_pages"].get<int>(), 512);
  EXPECT_EQ(kv["at_peak"]["private_pages"].get<int>(), 16);
  EXPECT_EQ(kv["at_peak"]["shared_bytes"].get<uint64_t>(), 512 * page);
  EXPECT_EQ(kv["at_peak"]["private_bytes"].get<uint64_t>(), 16 * page);
  // Contiguous prefix: 16 pages per PE; the 16 private pages go one each to the least loaded.
  int sum = 0, top = 0;
  for (const auto& p : kv["peak_pages_per_pe"]) {
    sum += p.get<int>();
    top = std::max(top, p.get<int>());
  }
  EXPECT_EQ(sum, 528);
  EXPECT_EQ(top, 17);
  // No sharing: every branch holds a copy of the 512 prefix pages next to its 2 own.
  EXPECT_EQ(kv["no_sharing_baseline"]["peak_pages"].get<int>(), 512 + 8 * (512 + 2));
  EXPECT_EQ(kv["bytes_saved_by_sharing"].get<uint64_t>(), uint64_t(8 * 512) * page);
}

TEST(KvStats, JoinFreesBranchPagesAndCountsCopies) {
  Scenario sc = parse_scenario(Json::parse(R"({
    "name": "j", "model": {"head_dim": 16, "layers": 3}, "kv": {"page_tokens": 10}, "shared_prefix_tokens": 95,
    "agents": [{"name": "a", "new_tokens": 12}, {"name": "b", "new_tokens": 3}],
    "phases": [{"type": "fanout"}, {"type": "decode", "steps": 6}, {"type": "join", "tokens": 7}]})"), "j");
  const Json kv = to_json(run(sc).summary)["kv"];
  // Prefix: 10 pages, the last holding positions 90..94. Each branch copies that page on its
  // first append and goes on from there:
  // a: 5 copied + 12 + 6 decode = 23 tokens from position 90 -> pages 90.., 100.., 110.. = 3.
  // b: 5 copied + 3 + 6 decode = 14 tokens from position 90 -> pages 90.., 100.. = 2.
  EXPECT_EQ(kv["cow_copies"].get<int>(), 2);
  // Join: branches released (5 pages), the parent appends 7 to its own partial page, which no
  // branch references any more (5 + 7 = 12 tokens -> one more page).
  EXPECT_EQ(kv["pages_allocated"].get<int>(), 10 + 3 + 2 + 1);
  EXPECT_EQ(kv["pages_freed"].get<int>(), 5);
  EXPECT_EQ(kv["pages_in_use_end"].get<int>(), 11);
  EXPECT_EQ(kv["page_bytes_model"].get<uint64_t>(), uint64_t(10) * 16 * 2 * 4 * 3);  // three layers
}

TEST(KvStats, OutOfCapacityNamesTheHbmField) {
  const Scenario sc = load_scenario(std::string(AHBM_SOURCE_DIR) + "/traces/long_prefix_32k.json");
  HwConfig hw;
  hw.pe.hbm.capacity_bytes = 60 * 16 * 128 * 2 * 4;  // 60 pages per PE; the prefix needs 64
  const std::string m = test::refusal_of(sc, hw);
  ASSERT_FALSE(m.empty()) << "accepted";
  EXPECT_NE(m.find("KV capacity exceeded"), std::string::npos) << m;
  EXPECT_NE(m.find("pe.hbm.capacity_bytes"), std::string::npos) << m;
  EXPECT_NE(m.find("60 pages"), std::string::npos) << m;
}

TEST(KvStats, QTilingKeepsArithmeticAndFitsBuffers) {
  Scenario sc = load_scenario(std::string(AHBM_SOURCE_DIR) + "/traces/wide_fanout_32.json");
  sc.phases = {PhaseSpec{}};  // the fan-out step alone
  HwConfig hw;
  hw.pe.sram_bytes = 256 * 1024;  // forces several Q tiles for the 512 fan-out rows
  const RunOutput r = run(sc, hw);
  const AttentionJob& job = r.plan.jobs.at(0);
  ASSERT_GT(job.tiles.size(), 1u);
  int covered = 0;
  for (const QTile& t : job.tiles) {
    EXPECT_EQ(t.row_begin, covered);
    covered = t.row_end;
    EXPECT_LE(sram_budget(hw.pe, uint64_t(t.rows()), 128, 4).total(), hw.pe.sram_bytes);
    EXPECT_LE(uint64_t(t.rows()) * 128 * 4, hw.cube.q_buffer.bytes);
  }
  EXPECT_EQ(covered, 512);
  // Note §3.7: the PEs did exactly 2 x rows x KV tokens x d MACs, whatever the tiling.
  // Computed plus skipped: fully masked KV tiles (other branches' private pages) are left out
  // (pe.dma.masked_tiles = skip) and counted apart.
  uint64_t macs = 0, skipped = 0;
  for_each_pe(r.sim.stats, [&](int, const StatsNode& pe) {
    macs += pe.get(PeStats::macs);
    skipped += pe.get(PeStats::macs_skipped);
  });
  EXPECT_EQ(macs + skipped, 2ull * 512 * (8192 + 32 * 16) * 128);
  EXPECT_GT(skipped, 0u);
  EXPECT_TRUE(r.summary.arithmetic.unchanged);
  EXPECT_EQ(r.summary.arithmetic.macs_expected,
            r.summary.arithmetic.macs_simulated +
                r.summary.arithmetic.macs_skipped);
  EXPECT_EQ(r.summary.arithmetic.macs_simulated, macs);
}
