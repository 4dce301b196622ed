// Decode: each step appends exactly one token per live branch, batches one row per live branch
// (x query heads per KV head), and later steps attend to the tokens earlier steps appended.
#include <gtest/gtest.h>

#include <map>

#include "runtime/run/driver.h"
#include "runtime/numerics/reference.h"
#include "test_runtime_support.h"

using namespace ahbm;

TEST(RuntimeDecode, OneTokenPerLiveBranchPerStepAndLaterStepsAttendToIt) {
  RunOptions opt = test::in_memory_options();
  opt.keep_steps = true;
  const RunOutput run = execute(test::decode_scenario(), HwConfig{}, opt);
  ASSERT_EQ(run.steps.size(), 1u + 4u + 1u);

  std::map<std::string, int32_t> len = {{"a", 73}, {"b", 76}, {"c", 71}};  // after the fan-out
  const std::map<std::string, int> budget = {{"a", 2}, {"b", 5}, {"c", 1 << 30}};
  for (int s = 0; s < 4; ++s) {
    const StepOutput& st = run.steps[size_t(1 + s)];
    ASSERT_EQ(st.step.phase, PhaseType::decode);
    std::vector<std::string> live;
    for (const auto& a : st.step.agents) live.push_back(a.name);
    std::vector<std::string> expect;
    for (const char* n : {"a", "b", "c"})
      if (s < budget.at(n)) expect.push_back(n);
    EXPECT_EQ(live, expect) << "step " << s;
    const AttentionJob& job = st.plan.jobs.at(0);
    ASSERT_EQ(job.row_count(), int(expect.size()) * 2);  // one token x 2 query heads per branch
    for (size_t i = 0; i < st.step.agents.size(); ++i) {
      const StepAgent& a = st.step.agents[i];
      EXPECT_EQ(a.length, len[a.name] + 1) << a.name << " step " << s;
      EXPECT_EQ(a.new_tokens, 1);
      len[a.name] = a.length;
      // Its new token is in the KV, owned by the branch, and each of its rows sees it.
      const FlatKv kv = flatten_kv(job);
      int found = -1;
      for (size_t c = 0; c < kv.info.size(); ++c)
        if (kv.info[c].owner == int(i) && kv.info[c].pos == a.length - 1) found = int(c);
      ASSERT_GE(found, 0) << a.name << " step " << s;
      for (int r = 0; r < job.row_count(); ++r) {
        const bool own = job.rows[size_t(r)].agent == int(i);
        if (own) {
          EXPECT_EQ(job.rows[size_t(r)].pos, a.length - 1);
        }
        EXPECT_EQ(visible(job.rows[size_t(r)], kv.info[size_t(found)]), own);
      }
    }
    // The token appended at the previous step changes this step's output: drop it from the
    // reference and the result moves well beyond rounding.
    if (s > 0) {
      const FlatKv kv = flatten_kv(job);
      const double scale = 1.0 / std::sqrt(16.0);
      const Eigen::MatrixXd ref = reference_attention(job.q, job.rows, kv.k, kv.v, kv.info, 16, scale);
      EXPECT_LE(compare_to_reference(st.outputs[0], ref).max_abs_err, 1e-4);
      // The reference that reads the shards in place (the CLI's check) is the same softmax.
      EXPECT_LE((reference_attention(job, scale) - ref).cwiseAbs().maxCoeff(), 1e-12) << "step " << s;
      std::vector<uint8_t> mask = visibility_mask(job.rows, kv.info);
      for (int r = 0; r < job.row_count(); ++r)
        for (size_t c = 0; c < kv.info.size(); ++c)
          if (kv.info[c].pos == job.rows[size_t(r)].pos - 1) mask[size_t(r) * kv.info.size() + c] = 0;
      const Eigen::MatrixXd without = reference_attention_masked(job.q, kv.k, kv.v, mask, 16, scale);
      EXPECT_GT(compare_to_reference(st.outputs[0], without).max_abs_err, 1e-3) << "step " << s;
    }
  }
  // The summary counts the same: rows per KV head per decode step and tokens per agent.
  const PhaseSummary& dec = run.summary.phases.at("decode");
  EXPECT_EQ(dec.steps, 4);
  EXPECT_EQ(dec.rows_per_kv_head, (3 + 3 + 2 + 2) * 2);  // a stops after 2 tokens
  EXPECT_EQ(dec.agents.at("a").tokens, 2);
  EXPECT_EQ(dec.agents.at("b").tokens, 4);
  EXPECT_EQ(run.summary.agents.at("c").decoded_tokens.value_or(0), 4);
  // Join: the parent continues on the shared prefix alone (branch pages released first).
  const StepOutput& join = run.steps.back();
  ASSERT_EQ(join.step.phase, PhaseType::join);
  EXPECT_EQ(join.step.agents.at(0).name, "main");
  EXPECT_EQ(join.step.agents.at(0).length, 70 + 5);
  EXPECT_EQ(flatten_kv(join.plan.jobs.at(0)).info.size(), 75u);
  EXPECT_LE(run.summary.numerics.max_abs_err, 1e-4);
  // The steps follow each other on one timeline.
  double t = 0;
  for (const StepSummary& s : run.summary.steps) {
    EXPECT_DOUBLE_EQ(s.start_ns, t);
    t += s.ns;
  }
  EXPECT_NEAR(run.summary.total_ns, t, 1e-6 * t);
}
