// Batched vs unbatched: the same O (bit for bit when every KV tile holds whole pages of one
// owner and the GEMMs have the same shapes; to fp32 rounding when the shapes differ or the KV
// tiles mix different tokens), and the summary reports both times without presuming which is
// faster.
#include <gtest/gtest.h>

#include "runtime/run/driver.h"

using namespace ahbm;

namespace {

RunOutput run_with_baseline(const Scenario& sc, const HwConfig& hw = {}) {
  RunOptions opt;
  opt.vcd = false;
  opt.compare_unbatched = true;
  return execute(sc, hw, opt);
}

// page_tokens = pe.dma.kv_tile_tokens = 64 and whole pages everywhere: every KV tile is one
// page of one owner, so a row meets the same KV tiles in the same order batched or alone
// (others' pages are fully masked and leave its state exactly unchanged).
Scenario page_aligned() {
  return parse_scenario(Json::parse(R"({
    "name": "aligned", "model": {"head_dim": 64}, "kv": {"page_tokens": 64}, "shared_prefix_tokens": 4096,
    "agents": [{"name": "a", "new_tokens": 64}, {"name": "b", "new_tokens": 64}, {"name": "c", "new_tokens": 128}],
    "phases": [{"type": "fanout"}]})"), "aligned");
}

}  // namespace

TEST(RuntimeBatching, PageAlignedTilesGiveIdenticalO) {
  // With 64-row Q tiles every batched Q tile is the rows of one agent, exactly the Q tiles of
  // that agent's run alone: both runs issue GEMMs of the same shapes on the same data, so the
  // same BLAS kernel runs in both (whatever kernel this CPU gets) and O must agree bit for
  // bit. A row that met its keys split into other KV tiles, or in another order, is in general
  // rounded differently and fails here (16-token pages after a 4000-token prefix: 1.5e-8 under
  // OpenBLAS's Zen kernel), as does a fully masked tile that touched a row's state.
  HwConfig hw;
  hw.q_tile_rows = 64;
  const RunOutput run = run_with_baseline(page_aligned(), hw);
  const Json u = to_json(run.summary)["baselines"]["unbatched"];
  EXPECT_TRUE(u["identical_o"].get<bool>());
  EXPECT_EQ(u["max_abs_diff_vs_batched"].get<double>(), 0.0);
  EXPECT_GT(u["total_ns"].get<double>(), 0.0);
  EXPECT_EQ(u["batched_total_ns"].get<double>(), run.summary.total_ns);
}

TEST(RuntimeBatching, PageAlignedTilesOfOtherGemmShapesAgreeToRounding) {
  // One Q tile of all 256 rows batched, 64 or 128 rows alone: a row's scores and PV sums are
  // the same sums over the same KV tiles, but from GEMMs of other shapes, and OpenBLAS picks
  // its sgemm kernel per CPU and per shape (blocking, FMA, the order of a dot product's partial
  // sums): O identical with OpenBLAS's SkylakeX, Cooperlake or Sandybridge kernels differs by
  // 3.9e-8 with its Haswell or Zen kernels (OPENBLAS_CORETYPE=Zen). Reordering an
  // n-term fp32 sum moves it by ~sqrt(n) u sum|terms| (u = 2^-24; at worst n u sum|terms|):
  // a score is a d = 64 term dot product with sum|q_i k_i| / sqrt(d) <~ 8 for N(0,1) Q and K,
  // so ~4e-6, and O = sum p v / sum p moves by at most that times |v - O| <~ 1 (a PV partial,
  // 64 tokens of weights <= 1, adds ~sqrt(64) u |v| ~ 2e-7). 1e-5 bounds this on any kernel; it
  // cannot resolve a re-split of a row's keys (ulps: the same-shape test above does), but a
  // row meeting a wrong key or mask moves O by ~1e-2.
  const RunOutput run = run_with_baseline(page_aligned());
  const Json u = to_json(run.summary)["baselines"]["unbatched"];
  EXPECT_LE(u["max_abs_diff_vs_batched"].get<double>(), 1e-5);
  EXPECT_LE(run.summary.numerics.max_abs_err, 1e-4);
  EXPECT_EQ(u["batched_total_ns"].get<double>(), run.summary.total_ns);
}

TEST(RuntimeBatching, DefaultScenarioSameOBothTimesReported) {
  Scenario sc = load_scenario(std::string(AHBM_SOURCE_DIR) + "/traces/fanout_8x20.json");
  sc.phases.push_back(PhaseSpec{PhaseType::decode, 0, 2});
  const RunOutput run = run_with_baseline(sc);
  const Json u = to_json(run.summary)["baselines"]["unbatched"];
  // Private pages of different branches share KV tiles in the batched job: the softmax sums
  // group the same terms differently, so O agrees to a few fp32 ulps of |O| ~ 0.1.
  EXPECT_LE(u["max_abs_diff_vs_batched"].get<double>(), 1e-6);
  EXPECT_LE(run.summary.numerics.max_abs_err, 1e-4);
  EXPECT_GT(u["total_ns"].get<double>(), 0.0);
  double per_step = 0;
  for (const StepSummary& s : run.summary.steps) {
    ASSERT_TRUE(s.unbatched_ns.has_value()) << s.label;
    per_step += *s.unbatched_ns;
  }
  EXPECT_DOUBLE_EQ(per_step, u["total_ns"].get<double>());
  EXPECT_TRUE(run.summary.phases.at("fanout").unbatched_ns.has_value());
  EXPECT_TRUE(run.summary.phases.at("decode").unbatched_ns.has_value());
}

TEST(RuntimeBatching, TheBaselinePaysItsOwnKernelLaunches) {
  // Each agent alone is a kernel launch of its own: with host.kernel_launch_ns the unbatched
  // baseline pays one per agent (3 here) where the batched step pays one, as the run's launch
  // schedule says (the baseline used to be simulated without it, as if launches were free). A
  // launch overlaps the step's Q upload, so what each adds is less than its 1000 ns.
  HwConfig free_launch, paid;
  paid.host.kernel_launch_ns = 1000;
  const Json a = to_json(run_with_baseline(page_aligned(), free_launch).summary),
             b = to_json(run_with_baseline(page_aligned(), paid).summary);
  const double batched = b["total_ns"].get<double>() - a["total_ns"].get<double>();
  const double unbatched =
      b["baselines"]["unbatched"]["total_ns"].get<double>() - a["baselines"]["unbatched"]["total_ns"].get<double>();
  EXPECT_GT(batched, 0.0);
  EXPECT_LE(batched, 1000.0 + 1e-6);
  EXPECT_GT(unbatched, batched);
  EXPECT_LE(unbatched, 3 * 1000.0 + 1e-6);
}
