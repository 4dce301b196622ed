// Grouped-query attention: rows per KV head = new tokens x query heads per KV head; one job
// per KV head on group head % groups; with fewer groups than KV heads a group serves its heads
// in turn (visible in the latency trace as runtime.group<g> spans labelled kv_head<h>).
#include <gtest/gtest.h>

#include "hw/chip/chip_stats.h"

#include <map>
#include <set>

#include "runtime/run/driver.h"

using namespace ahbm;

namespace {

RunOutput run_llama(int groups, bool keep_steps = false) {
  const Scenario sc = load_scenario(std::string(AHBM_SOURCE_DIR) + "/traces/llama_gqa.json");
  HwConfig hw;
  hw.groups = groups;
  RunOptions opt;
  opt.vcd = false;
  opt.values = false;  // timing and structure only; numerics below on a smaller model
  opt.keep_steps = keep_steps;
  return execute(sc, hw, opt);
}

double pe0_gemm_busy(const StatsNode& stats) {
  double first = -1;
  for_each_pe(stats, [&](int, const StatsNode& pe) {
    if (first < 0) first = pe.get(PeStats::gemm_busy);
  });
  return first;
}

}  // namespace

TEST(RuntimeGqa, LlamaRowCountsAndGroupAssignment) {
  const RunOutput run = run_llama(2, true);
  const Json s = to_json(run.summary);
  EXPECT_EQ(s["model"]["q_heads_per_kv_head"].get<int>(), 4);
  EXPECT_EQ(s["model"]["time_multiplexed_rounds"].get<int>(), 4);
  EXPECT_EQ(s["rows"].get<int>(), 8 * 20 * 4);
  EXPECT_EQ(s["phases"]["prefill"]["rows_per_kv_head"].get<int>(), 256 * 4);
  EXPECT_EQ(s["phases"]["decode"]["rows_per_kv_head"].get<int>(), 8 * 8 * 4);
  EXPECT_EQ(s["phases"]["join"]["rows_per_kv_head"].get<int>(), 32 * 4);
  for (const StepOutput& st : run.steps) {
    ASSERT_EQ(st.plan.jobs.size(), 8u) << st.step.label();
    for (size_t h = 0; h < 8; ++h) {
      const AttentionJob& job = st.plan.jobs[h];
      EXPECT_EQ(job.group, int(h % 2));
      EXPECT_EQ(st.plan.meta[h].kv_head, int(h));
      int rows = 0;
      for (const StepAgent& a : st.step.agents) rows += a.new_tokens * 4;
      EXPECT_EQ(job.row_count(), rows);
      // Query heads 4h .. 4h+3 each carry every new token once.
      std::map<int, int> per_head;
      for (int q : st.plan.meta[h].row_q_head) ++per_head[q];
      ASSERT_EQ(per_head.size(), 4u);
      for (const auto& [q, n] : per_head) {
        EXPECT_EQ(q / 4, int(h));
        EXPECT_EQ(n * 4, rows);
      }
    }
  }
  // Each group serves only its own heads, one Q tile at a time (no overlap).
  const SpanRecorder& spans = *run.sim.spans;
  std::map<std::string, std::set<std::string>> heads;
  std::map<std::string, sc_core::sc_time> last_end;
  for (const Span& sp : spans.spans()) {
    const std::string comp = spans.name(sp.component);
    if (comp.rfind("runtime.group", 0) != 0) continue;
    heads[comp].insert(spans.name(sp.activity));
    EXPECT_GE(sp.start, last_end[comp]) << comp;
    last_end[comp] = sp.end;
  }
  EXPECT_EQ(heads["runtime.group0"], (std::set<std::string>{"kv_head0", "kv_head2", "kv_head4", "kv_head6"}));
  EXPECT_EQ(heads["runtime.group1"], (std::set<std::string>{"kv_head1", "kv_head3", "kv_head5", "kv_head7"}));
}

TEST(RuntimeGqa, FewerGroupsTimeMultiplexHeads) {
  const RunOutput one = run_llama(1), eight = run_llama(8);
  // The same per-PE work per head (statistics summed over every step): one group does all eight
  // heads' GEMMs on its PEs.
  EXPECT_NEAR(pe0_gemm_busy(one.sim.stats), 8 * pe0_gemm_busy(eight.sim.stats), 1e-6 * pe0_gemm_busy(one.sim.stats));
  const double t1 = one.summary.total_ns;
  const double t8 = eight.summary.total_ns;
  EXPECT_GE(t1, pe0_gemm_busy(one.sim.stats));  // the run cannot beat its busiest engine
  EXPECT_LT(t8, t1);
  EXPECT_EQ(one.summary.model.time_multiplexed_rounds, 8);
  EXPECT_EQ(eight.summary.model.time_multiplexed_rounds, 1);
  // The page pool holds the KV of every head a group serves: 8x fewer pages fit with 1 group.
  EXPECT_EQ(one.summary.kv.page_slot_bytes, 8 * eight.summary.kv.page_slot_bytes);
}

TEST(RuntimeGqa, SmallGqaNumericsPerQueryHead) {
  const Scenario sc = parse_scenario(Json::parse(R"({
    "name": "gqa", "model": {"head_dim": 32, "num_q_heads": 8, "num_kv_heads": 2, "layers": 4},
    "shared_prefix_tokens": 300, "seed": 5,
    "agents": [{"name": "a", "new_tokens": 6}, {"name": "b", "new_tokens": 9}],
    "phases": [{"type": "prefill", "tokens": 40}, {"type": "fanout"}, {"type": "decode", "steps": 2}, {"type": "join", "tokens": 4}]
  })"), "gqa");
  HwConfig hw;
  hw.groups = 2;
  RunOptions opt;
  opt.vcd = false;
  opt.keep_steps = true;
  const RunOutput run = execute(sc, hw, opt);
  EXPECT_LE(run.summary.numerics.max_abs_err, 1e-4);
  EXPECT_EQ(run.summary.rows, (6 + 9) * 4);
  // Different query heads of one KV head give different outputs for the same token.
  const StepOutput& fan = run.steps.at(1);
  const MatrixRM& o = fan.outputs.at(0);
  EXPECT_GT((o.row(0) - o.row(6)).cwiseAbs().maxCoeff(), 1e-3);  // agent a, token 0: q heads 0 and 1
}
