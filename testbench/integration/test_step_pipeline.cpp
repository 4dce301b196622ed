// The runtime's step as a straight line (runtime/step/step_runner.h): plan -> choose -> apply ->
// simulate -> report. A step enters the planner and the cost model once per job set, under a
// fixed policy as under auto; a whole run (decode steps, the unbatched baseline, a join phase
// with extrapolated prefills) enters them exactly as often as it has job sets. Also the choose
// stage's rule on hand-made estimates.
#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>

#include "hw/common/base/error.h"
#include "runtime/run/driver.h"
#include "runtime/plan/choose.h"
#include "runtime/plan/policy_report.h"
#include "runtime/step/step_runner.h"
#include "test_runtime_support.h"

using namespace ahbm;

namespace {

// Two agents, two KV heads (two job sets' worth of jobs in one step), 128 rows per KV head.
Scenario fanout_scenario() {
  return test::inline_scenario(R"({
    "name": "pipeline", "model": {"head_dim": 32, "num_q_heads": 4, "num_kv_heads": 2},
    "kv": {"page_tokens": 16}, "shared_prefix_tokens": 512, "seed": 3,
    "agents": [{"name": "a", "new_tokens": 24}, {"name": "b", "new_tokens": 40}],
    "phases": [{"type": "fanout"}]
  })", "pipeline");
}

}  // namespace

class StepPipeline : public ::testing::TestWithParam<std::string> {};

TEST_P(StepPipeline, OneStepEntersThePlannerAndTheCostModelOnce) {
  const std::string policy = GetParam();
  const Scenario sc = fanout_scenario();
  const HwConfig hw;
  KvPageManager kv(hw.pes_per_group(), -1, sc.kv.page_tokens);
  KvValues values(sc.seed, sc.model.head_dim, sc.model.dtype);
  StepSettings set;
  set.seed = sc.seed;
  set.values = &values;
  set.policy = policy;
  set.sim.vcd = false;
  StepRunner steps(sc, hw, set);
  Timeline tl(false);
  std::optional<StepRun> fan;
  AgentSession(sc, kv).run([&](const Step& step) {
    if (step.phase == PhaseType::fanout) fan = steps.run(kv, step, tl);
  });
  ASSERT_TRUE(fan.has_value());
  const StageCalls calls = steps.calls();
  EXPECT_EQ(calls.plan, 1) << policy;
  EXPECT_EQ(calls.cost_model, 1) << policy;
  EXPECT_EQ(calls.simulate, 1) << policy;

  // That one entry estimated every candidate; the jobs simulated are laid out as chosen.
  const Json& d = fan->record.policy.at("decision");
  std::set<std::string> estimated;  // every policy, at one or more tiles (the tile search)
  for (const Json& e : d.at("estimates")) estimated.insert(e.at("policy").get<std::string>());
  EXPECT_EQ(estimated.size(), all_policies().size());
  EXPECT_GE(d.at("estimates").size(), all_policies().size());
  EXPECT_EQ(d.at("automatic").get<bool>(), policy == "auto");
  const std::string chosen = d.at("chosen").get<std::string>();
  if (policy != "auto") {
    EXPECT_EQ(chosen, policy);
  }
  ASSERT_EQ(fan->plan.jobs.size(), 2u);
  for (const AttentionJob& job : fan->plan.jobs)
    for (const QTile& t : job.tiles) {
      // PEs per tile: all (empty) for A and B4, one CUBE's for B1..B3, one for B5.
      const size_t pes = chosen == "A" || chosen == "B4" ? 0u : chosen == "B5" ? 1u : size_t(hw.cube.pes);
      EXPECT_EQ(t.pes.size(), pes) << chosen;
    }
  if (chosen == "B2") {  // one Q group per CUBE: ceil(128 / 4) rows
    EXPECT_EQ(fan->plan.jobs[0].tiles.size(), size_t(hw.group.cubes));
    EXPECT_EQ(fan->plan.jobs[0].tiles[0].rows(), 128 / hw.group.cubes);
  }
  ASSERT_TRUE(fan->record.check.has_value());
  EXPECT_LE(fan->record.check->datapath.max_abs_err, 1e-5) << chosen;
  EXPECT_EQ(fan->record.shape.macs_expected, fan->record.timing.macs_simulated + fan->record.timing.macs_skipped);
}

INSTANTIATE_TEST_SUITE_P(Policies, StepPipeline, ::testing::Values("A", "B2", "auto"),
                         [](const auto& info) { return info.param; });

// Only the fan-out step's decision is reported with every candidate (summary.policy): a step of
// another phase under a named policy estimates that policy's tiles alone, under auto every one.
TEST(StepPipelineRun, AStepOutsideTheFanOutEstimatesOnlyTheNamedPolicysTiles) {
  const Scenario sc = test::decode_scenario();
  const HwConfig hw;
  for (const std::string policy : {"B2", "auto"}) {
    KvPageManager kv(hw.pes_per_group(), -1, sc.kv.page_tokens);
    StepSettings set;
    set.seed = sc.seed;
    set.policy = policy;
    set.sim.vcd = false;
    StepRunner steps(sc, hw, set);
    Timeline tl(false);
    std::set<std::string> fanout_estimated, decode_estimated;
    AgentSession(sc, kv).run([&](const Step& step) {
      if (step.phase != PhaseType::fanout && step.phase != PhaseType::decode) return;
      const StepRun r = steps.run(kv, step, tl);
      auto& into = step.phase == PhaseType::fanout ? fanout_estimated : decode_estimated;
      for (const Json& e : r.record.policy.at("decision").at("estimates")) into.insert(e.at("policy").get<std::string>());
      if (policy != "auto") {
        EXPECT_EQ(r.record.policy.at("decision").at("chosen"), policy);
      }
    });
    EXPECT_EQ(fanout_estimated.size(), all_policies().size()) << policy;
    if (policy == "auto") {
      EXPECT_EQ(decode_estimated.size(), all_policies().size());
    } else {
      EXPECT_EQ(decode_estimated, std::set<std::string>{policy});
    }
  }
}

// A serve part (StepRunner::batch_jobs) is laid out as choose() lays it out, and enters the cost
// model only when the choice needs it: under auto, or when its policy has several tile sizes. A
// decode part under a named policy has one candidate and is laid out without an estimate.
TEST(StepPipelineRun, AServePartIsLaidOutAsChooseLaysItOutAndEstimatedOnlyWhenThereIsAChoice) {
  const Scenario sc = test::decode_scenario();
  const HwConfig hw;
  for (const std::string policy : {"A", "B2", "B5", "auto"}) {
    KvPageManager kv(hw.pes_per_group(), -1, sc.kv.page_tokens);
    StepSettings set;
    set.seed = sc.seed;
    set.policy = policy;
    StepRunner steps(sc, hw, set);
    Planner planner(sc, hw, sc.seed, nullptr);
    CostModel model(hw);
    int parts = 0;
    AgentSession(sc, kv).run([&](const Step& step) {
      if (step.phase != PhaseType::fanout && step.phase != PhaseType::decode) return;
      Planner::JobSet timing;
      timing.timing_only = true;
      Plan plan = planner.plan(kv, step, timing);
      set_launch_schedule(plan.jobs, set.launch);
      const std::vector<Candidate> candidates = candidates_for(plan.candidates, policy);
      const Layout want = choose(plan.jobs, candidates, hw, policy, model).chosen;
      const int before = steps.calls().cost_model;
      std::vector<Layout> got;
      const std::vector<AttentionJob> jobs = steps.batch_jobs(kv, {step}, &got);
      ASSERT_EQ(got.size(), 1u);
      EXPECT_EQ(got[0].policy, want.policy) << policy << " " << step.label();
      EXPECT_EQ(got[0].tile_rows, want.tile_rows) << policy << " " << step.label();
      const bool choice = policy == "auto" || candidates.size() > 1;
      EXPECT_EQ(steps.calls().cost_model - before, choice ? 1 : 0) << policy << " " << step.label();
      ASSERT_EQ(jobs.size(), plan.jobs.size());
      for (size_t j = 0; j < jobs.size(); ++j) EXPECT_EQ(jobs[j].tiles.size(), apply_layout({plan.jobs[j]}, hw, want)[0].tiles.size());
      ++parts;
    });
    EXPECT_GT(parts, 1) << policy;
  }
}

// Decode steps with the unbatched baseline: every step plans, estimates and simulates its batched
// job set once; the baseline plans and simulates one job set per agent and estimates none.
TEST(StepPipelineRun, EveryJobSetOfARunIsPlannedOnceAndEstimatedOncePerStep) {
  const Scenario sc = test::decode_scenario();
  RunOptions opt = test::in_memory_options();
  opt.policy = "auto";
  opt.compare_unbatched = true;
  const RunOutput run = execute(sc, HwConfig{}, opt);
  const std::vector<StepSummary>& steps = run.summary.steps;
  ASSERT_EQ(steps.size(), 1u + 4u + 1u);
  int agents = 0;
  for (const StepSummary& s : steps) agents += int(s.agents);
  EXPECT_EQ(agents, 3 + (3 + 3 + 2 + 2) + 1);  // a decodes 2 tokens, b and c all 4 steps
  EXPECT_EQ(run.stage_calls.plan, int(steps.size()) + agents);
  EXPECT_EQ(run.stage_calls.cost_model, int(steps.size()));
  EXPECT_EQ(run.stage_calls.simulate, int(steps.size()) + agents);
}

// A join strategy's steps go through the same line; a prefill too long to simulate whole adds
// one probe (a job set planned and simulated off the timeline, not estimated).
TEST(StepPipelineRun, AJoinPhasePlansEachStepAndProbeOnce) {
  Json agents = Json::array();
  for (int i = 0; i < 8; ++i) agents.push_back({{"name", "agent" + std::to_string(i)}, {"new_tokens", 8}});
  const Json j = {{"name", "join_pipeline"},
                  {"model", {{"head_dim", 32}, {"num_q_heads", 4}, {"num_kv_heads", 1}}},
                  {"shared_prefix_tokens", 1024},
                  {"agents", agents},
                  {"join", {{"strategy", "hierarchical"},
                            {"results", std::string(AHBM_SOURCE_DIR) + "/traces/join/note_8x1000_sizes.json"},
                            {"max_simulated_tokens", 64},
                            {"hierarchical", {{"reducers", 2}, {"reducer_output_tokens", 50}}}}},
                  {"phases", {{{"type", "fanout"}}, {{"type", "join"}, {"tokens", 2}}}}};
  RunOptions opt = test::in_memory_options();
  opt.values = false;
  opt.policy = "B4";
  const RunOutput run = execute(parse_scenario(j, "join_pipeline"), HwConfig{}, opt);
  const int steps = int(run.summary.steps.size());
  const Json& hw = run.summary.join.at("strategies").at(0).at("hardware");
  const int probes = int(hw.at("reduce_prefill").at("extrapolated").get<bool>()) +
                     int(hw.at("continuation_prefill").at("extrapolated").get<bool>());
  EXPECT_TRUE(hw.at("reduce_prefill").at("extrapolated").get<bool>());  // 4000 input tokens per reducer
  EXPECT_GE(probes, 1);
  EXPECT_EQ(run.stage_calls.plan, steps + probes);
  EXPECT_EQ(run.stage_calls.cost_model, steps);
  EXPECT_EQ(run.stage_calls.simulate, steps + probes);
}

// The choose stage's rule on hand-made estimates: a named policy is taken as asked; auto takes
// the lowest estimate, a policy within 0.1% of it earlier in the preference A, B4, B3, B2, B1,
// B5 winning the tie; a candidate that cannot run is never picked.
TEST(ChooseStage, PicksTheRequestedPolicyOrTheLowestEstimateWithTiesToTheSimplerPolicy) {
  PolicyEstimate a, b2, b5;
  a.policy = Policy::A, a.total_ns = 1000.0;
  b2.policy = Policy::B2, b2.total_ns = 999.5;  // lowest, but A is within 0.1%
  b5.policy = Policy::B5, b5.total_ns = 10.0;
  std::vector<Scored> scored = {{{Policy::A, 64}, &a}, {{Policy::B2, 16}, &b2}, {{Policy::B5, 2}, nullptr}};
  EXPECT_EQ(pick(scored, "auto"), 0u);
  EXPECT_EQ(pick(scored, "B2"), 1u);
  b2.total_ns = 998.0;  // now beyond the tie
  EXPECT_EQ(pick(scored, "auto"), 1u);
  scored[2].estimate = &b5;
  EXPECT_EQ(pick(scored, "auto"), 2u);
  EXPECT_THROW(pick(scored, "B7"), InputError);
}
