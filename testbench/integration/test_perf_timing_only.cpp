// Timing-only mode (--no-values) must give exactly the simulated times of a values run: same
// spans (latency.csv), same waveform, same per-module statistics, same times in the summary;
// and it must carry no tensors at all (issue 8: the fast mode for sweeps).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hw/chip/simulate.h"
#include "runtime/plan/planner.h"
#include "runtime/policy/cost_model.h"
#include "runtime/report/stats_tree.h"
#include "test_outputs_common.h"

namespace ahbm {
namespace {

// Every number in the summary whose key names a time ("ns", "*_ns"), with its JSON path.
void collect_times(const Json& j, const std::string& path, std::vector<std::pair<std::string, double>>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& k = it.key();
      const bool time = k == "ns" || (k.size() > 3 && k.compare(k.size() - 3, 3, "_ns") == 0);
      if (time && it->is_number()) out.emplace_back(path + "/" + k, it->get<double>());
      else collect_times(*it, path + "/" + k, out);
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) collect_times(j[i], path + "/" + std::to_string(i), out);
  }
}

void expect_same_timing(const std::string& scenario_file, DType dtype) {
  Scenario sc = load_scenario(std::string(AHBM_SOURCE_DIR) + "/traces/" + scenario_file);
  sc.model.dtype = dtype;
  test::ScratchDir scratch("perf-timing");
  RunOptions with, without;
  with.keep_steps = without.keep_steps = true;
  without.values = false;
  const RunOutput a = execute(sc, HwConfig{}, with);
  const RunOutput b = execute(sc, HwConfig{}, without);
  write_run_dir(scratch.path("values"), a, with);
  write_run_dir(scratch.path("timing"), b, without);

  // Timing-only runs carry no tensors: nothing to compute on.
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (const StepOutput& s : b.steps)
    for (const AttentionJob& j : s.plan.jobs) {
      EXPECT_FALSE(j.values);
      EXPECT_TRUE(j.q.empty());
      for (const KvShard& sh : j.shards) EXPECT_TRUE(sh.k.empty() && sh.v.empty());
    }
  for (const StepOutput& s : a.steps) EXPECT_TRUE(s.plan.jobs.at(0).values && !s.plan.jobs.at(0).q.empty());

  for (const char* f : {"latency.csv", "waves.vcd", "stats.json", "trace.json"}) {
    const std::string va = test::read_file(scratch.path(std::string("values/") + f));
    ASSERT_FALSE(va.empty()) << f;
    EXPECT_TRUE(va == test::read_file(scratch.path(std::string("timing/") + f))) << scenario_file << ": " << f << " differs";
  }
  std::vector<std::pair<std::string, double>> ta, tb;
  collect_times(to_json(a.summary), "", ta);
  collect_times(to_json(b.summary), "", tb);
  ASSERT_GT(ta.size(), 3u);
  EXPECT_EQ(ta, tb);
  EXPECT_GT(a.sim.end_ns, 0.0);
  EXPECT_EQ(a.sim.end_ns, b.sim.end_ns);
  EXPECT_EQ(a.sim.tile_done_ns, b.sim.tile_done_ns);
}

TEST(PerfTimingOnly, FanoutIdenticalTimes) { expect_same_timing("fanout_8x20.json", DType::fp32); }
TEST(PerfTimingOnly, Fp16StorageIdenticalTimes) { expect_same_timing("fanout_8x20.json", DType::fp16); }
TEST(PerfTimingOnly, GqaIdenticalTimes) { expect_same_timing("llama_gqa.json", DType::fp32); }
TEST(PerfTimingOnly, DecodePhasesIdenticalTimes) { expect_same_timing("decode_heavy.json", DType::fp32); }

// timing_copy drops the tensors and nothing else: under every policy's layout (segments,
// replicas, remap, broadcast) the copy simulates to the same times and statistics as the job,
// and the cost model estimates it the same (the choose stage estimates on such copies).
TEST(PerfTimingOnly, TimingCopyKeepsEveryLayoutField) {
  const HwConfig hw;
  Scenario sc;
  sc.name = "timing-copy";
  sc.model.head_dim = 64;
  sc.shared_prefix_tokens = 1024;
  for (int a = 0; a < 4; ++a) sc.agents.push_back({"agent" + std::to_string(a), 8});
  const Plan plan = plan_fanout(sc, hw, 3, true);
  for (Policy p : all_policies()) {
    const AttentionJob job = policy_job(plan.jobs.at(0), hw, p);
    const AttentionJob copy = timing_copy(job);
    EXPECT_FALSE(copy.values);
    EXPECT_TRUE(copy.q.empty());
    for (const KvShard& s : copy.shards) EXPECT_TRUE(s.k.empty() && s.v.empty());
    const SimResult a = simulate(hw, {job});
    const SimResult b = simulate(hw, {copy});
    EXPECT_EQ(a.tile_done_ns, b.tile_done_ns) << policy_name(p);
    EXPECT_EQ(report::stats_json(a.stats).dump(), report::stats_json(b.stats).dump()) << policy_name(p);
    EXPECT_EQ(estimate_policy({job}, hw, p).to_json().dump(), estimate_policy({copy}, hw, p).to_json().dump())
        << policy_name(p);
  }
}

}  // namespace
}  // namespace ahbm
