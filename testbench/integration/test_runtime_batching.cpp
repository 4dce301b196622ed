// Batched vs unbatched: the same O (bit for bit when every KV tile holds whole pages of one
// owner; otherwise up to fp32 summation order, since the KV tiles mix different tokens), and
// the summary reports both times without presuming which is faster.
#include <gtest/gtest.h>

#include "runtime/driver.h"

using namespace ahbm;

namespace {

RunOutput run_with_baseline(const Scenario& sc) {
  RunOptions opt;
  opt.vcd = false;
  opt.compare_unbatched = true;
  return execute(sc, HwConfig{}, opt);
}

}  // namespace

TEST(RuntimeBatching, PageAlignedTilesGiveIdenticalO) {
  // page_tokens = pe.dma.kv_tile_tokens = 64 and whole pages everywhere: every KV tile is one
  // page of one owner, so a row meets the same tiles batched or alone (others' pages are fully
  // masked and leave its state exactly unchanged).
  const Scenario sc = parse_scenario(Json::parse(R"({
    "name": "aligned", "model": {"head_dim": 64}, "kv": {"page_tokens": 64}, "shared_prefix_tokens": 4096,
    "agents": [{"name": "a", "new_tokens": 64}, {"name": "b", "new_tokens": 64}, {"name": "c", "new_tokens": 128}],
    "phases": [{"type": "fanout"}]})"), "aligned");
  const RunOutput run = run_with_baseline(sc);
  const Json& u = run.summary["baselines"]["unbatched"];
  EXPECT_TRUE(u["identical_o"].get<bool>());
  EXPECT_EQ(u["max_abs_diff_vs_batched"].get<double>(), 0.0);
  EXPECT_GT(u["total_ns"].get<double>(), 0.0);
  EXPECT_EQ(u["batched_total_ns"].get<double>(), run.summary["total_ns"].get<double>());
}

TEST(RuntimeBatching, DefaultScenarioSameOBothTimesReported) {
  Scenario sc = load_scenario(std::string(AHBM_SOURCE_DIR) + "/traces/fanout_8x20.json");
  sc.phases.push_back(PhaseSpec{PhaseType::decode, 0, 2});
  const RunOutput run = run_with_baseline(sc);
  const Json& u = run.summary["baselines"]["unbatched"];
  // Private pages of different branches share KV tiles in the batched job: the softmax sums
  // group the same terms differently, so O agrees to a few fp32 ulps of |O| ~ 0.1.
  EXPECT_LE(u["max_abs_diff_vs_batched"].get<double>(), 1e-6);
  EXPECT_LE(run.summary["numerics"]["max_abs_err"].get<double>(), 1e-4);
  EXPECT_GT(u["total_ns"].get<double>(), 0.0);
  double per_step = 0;
  for (const auto& s : run.summary["steps"]) {
    ASSERT_TRUE(s.contains("unbatched_ns")) << s["label"];
    per_step += s["unbatched_ns"].get<double>();
  }
  EXPECT_DOUBLE_EQ(per_step, u["total_ns"].get<double>());
  EXPECT_TRUE(run.summary["phases"]["fanout"].contains("unbatched_ns"));
  EXPECT_TRUE(run.summary["phases"]["decode"].contains("unbatched_ns"));
}
