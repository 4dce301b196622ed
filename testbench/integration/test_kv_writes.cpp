// Timed paged-KV memory work (issue 15 item 5, issue 23 item 4; docs/model.md "Timed KV
// writes"): a step's new tokens' K/V are written into their PEs' HBM slices, and a shared partly
// filled page is copied (copy-on-write) before a branch appends to it, as timed transfers of the
// slice model. The planner derives each PE's writes from the page manager's write counts (closed
// forms below); the PE makes them before it streams (closed-form span times); the values are
// placed either way, so O is bit for bit the same with the writes timed or free; the cost model
// charges the same work.
#include <gtest/gtest.h>

#include <map>

#include "hw/chip/chip_stats.h"
#include "hw/common/model/engines.h"
#include "hw/common/contract/job.h"
#include "hw/common/base/timing.h"
#include "hw/pe/hbm_slice.h"
#include "hw/pe/pe.h"
#include "runtime/run/driver.h"
#include "runtime/kv/page_manager.h"
#include "runtime/plan/planner.h"
#include "runtime/scenario/session.h"
#include "test_runtime_support.h"

using namespace ahbm;

namespace {

// A 4100-token prefix in 64-token pages: its last page holds 4 tokens, shared by both branches
// at the fork, so each branch's first append copies it.
const char* kScenario = R"({
  "name": "kvw", "model": {"head_dim": 64, "num_q_heads": 2, "num_kv_heads": 2}, "kv": {"page_tokens": 64},
  "shared_prefix_tokens": 4100, "seed": 3,
  "agents": [{"name": "a", "new_tokens": 20, "decode_tokens": 2}, {"name": "b", "new_tokens": 30, "decode_tokens": 2}],
  "phases": [{"type": "prefill", "tokens": 100}, {"type": "fanout"}, {"type": "decode", "steps": 2}]
})";

struct WriteTotals {
  int appended = 0, copied = 0, copies = 0;
  std::map<int, int> copied_from;  // source PE -> tokens
};

WriteTotals totals(const AttentionJob& j) {
  WriteTotals t;
  for (size_t p = 0; p < j.kv_writes.size(); ++p)
    for (const KvWrite& w : j.kv_writes[p]) {
      EXPECT_GE(w.first, 0);
      EXPECT_LE(w.first + w.count, j.shards[p].tokens);
      if (w.copy()) {
        t.copied += w.count;
        ++t.copies;
        t.copied_from[w.src_pe] += w.count;
      } else {
        t.appended += w.count;
      }
    }
  return t;
}

// The first job of every step of the scenario's session, planned timing-only (every KV head of
// a step has the same KV layout and so the same writes).
std::vector<std::pair<std::string, AttentionJob>> planned_steps(const Scenario& sc, bool share) {
  HwConfig hw;
  KvPageManager kv(hw.pes_per_group(), -1, sc.kv.page_tokens);
  Planner planner(sc, hw, sc.seed, nullptr);
  std::vector<std::pair<std::string, AttentionJob>> out;
  AgentSession(sc, kv, share).run([&](const Step& step) {
    Planner::JobSet set;
    set.timing_only = true;
    out.emplace_back(step.label(), planner.plan(kv, step, set).jobs.front());
  });
  return out;
}

}  // namespace

TEST(KvWrites, EachStepWritesItsNewTokensAndCopiesTheSharedLastPageOnce) {
  const Scenario sc = test::inline_scenario(kScenario, "kvw");
  const auto steps = planned_steps(sc, true);
  ASSERT_EQ(steps.size(), 4u);  // prefill, fanout, decode[0], decode[1]
  // Prefill: the 100 computed tokens; the 4000 cached ones were in the cache before the run.
  EXPECT_EQ(steps[0].first, "prefill");
  WriteTotals t = totals(steps[0].second);
  EXPECT_EQ(t.appended, 100);
  EXPECT_EQ(t.copies, 0);
  // Fan-out: each branch copies the 4-token shared last page, then appends its instruction
  // tokens (the first 60 into the copy, the rest into new pages).
  t = totals(steps[1].second);
  EXPECT_EQ(t.appended, 20 + 30);
  EXPECT_EQ(t.copies, 2);
  EXPECT_EQ(t.copied, 2 * 4);
  ASSERT_EQ(t.copied_from.size(), 1u);  // both from the PE holding the prefix's last page
  // Decode: one token per branch, no copy (each branch's last page is its own).
  for (size_t s = 2; s < 4; ++s) {
    t = totals(steps[s].second);
    EXPECT_EQ(t.appended, 2) << steps[s].first;
    EXPECT_EQ(t.copies, 0) << steps[s].first;
  }
}

TEST(KvWrites, NoSharingForkCopiesEveryPrefixPage) {
  const Scenario sc = test::inline_scenario(kScenario, "kvw");
  const auto steps = planned_steps(sc, false);
  ASSERT_EQ(steps.size(), 4u);
  const WriteTotals t = totals(steps[1].second);  // the fan-out: both forks' copies
  EXPECT_EQ(t.copied, 2 * 4100);
  EXPECT_EQ(t.copies, 2 * 65);  // 64 full pages and the 4-token one, per branch
  EXPECT_EQ(t.appended, 50);
}

TEST(KvWrites, AppendsBeforeTheStreamTakeTheSliceClosedForm) {
  // One decode step of one branch; simple HBM slice. Each PE holding the new token writes it:
  // K and V bursts of d x 4 B issued together, a write's latency hidden, so the append span lasts
  // the transfer time of the two d x 4 B bursts at pe.hbm.bandwidth_gbps (the slice serves them one
  // after the other), and the PE's first KV burst of
  // the step starts when it ends.
  const Scenario sc = test::inline_scenario(R"({
    "name": "kvw1", "model": {"head_dim": 128, "num_q_heads": 1, "num_kv_heads": 1}, "kv": {"page_tokens": 64},
    "shared_prefix_tokens": 2048, "seed": 1,
    "agents": [{"name": "a", "new_tokens": 64, "decode_tokens": 1}],
    "phases": [{"type": "fanout"}, {"type": "decode", "steps": 1}]
  })", "kvw1");
  HwConfig hw;
  RunOptions opt = test::in_memory_options();
  const RunOutput r = execute(sc, hw, opt);
  const double expect = 2 * to_ns(transfer_time(128 * 4, hw.pe.hbm.bandwidth_gbps));  // each burst in whole ps
  const StepSummary& step = r.summary.steps[1];
  ASSERT_EQ(step.phase, "decode");
  const double t0 = step.start_ns, t1 = t0 + step.ns;
  const SpanRecorder& spans = *r.sim.spans;
  int appends = 0;
  for (const Span& s : spans.spans()) {
    if (to_ns(s.start) < t0 || to_ns(s.end) > t1 || spans.name(s.activity) != "kv_append") continue;
    ++appends;
    EXPECT_NEAR(to_ns(s.end) - to_ns(s.start), expect, 1e-6);
    EXPECT_EQ(s.bytes, 2 * 128 * 4);
    // The same PE's first KV burst of the step starts at the append's end.
    double first_burst = 1e300;
    for (const Span& b : spans.spans())
      if (b.component == s.component && spans.name(b.activity) == "dma_kv" && to_ns(b.start) >= t0)
        first_burst = std::min(first_burst, to_ns(b.start));
    EXPECT_NEAR(first_burst, to_ns(s.end), 1e-6);
  }
  EXPECT_EQ(appends, 1);  // one token, one PE
}

TEST(KvWrites, CopyOnWriteReadsThenWritesClosedForm) {
  // The fan-out of one branch after a prefix whose last page holds 4 tokens: the PE that gets the
  // branch's copy reads the 4 tokens' K and V (locally: latency + transfer; from another PE: a
  // remote read over the NoC), then writes them. Timed with the ideal NoC: the copy span is the
  // closed form of the read plus the write.
  const Scenario sc = test::inline_scenario(R"({
    "name": "cow", "model": {"head_dim": 128, "num_q_heads": 1, "num_kv_heads": 1}, "kv": {"page_tokens": 64},
    "shared_prefix_tokens": 2052, "seed": 1,
    "agents": [{"name": "a", "new_tokens": 16}], "phases": [{"type": "fanout"}]
  })", "cow");
  HwConfig hw;
  RunOptions opt = test::in_memory_options();
  const RunOutput r = execute(sc, hw, opt);
  const SpanRecorder& spans = *r.sim.spans;
  const uint64_t b = 2 * 4 * 128 * 4;
  const double write = 2 * to_ns(transfer_time(b / 2, hw.pe.hbm.bandwidth_gbps));  // K, then V
  const double local = hw.pe.hbm.latency_ns + write + write;
  int copies = 0;
  for (const Span& s : spans.spans()) {
    if (spans.name(s.activity) != "kv_copy") continue;
    ++copies;
    EXPECT_EQ(s.bytes, int64_t(b));
    const double took = to_ns(s.end) - to_ns(s.start);
    // Local or remote: at least the local closed form; a remote read adds the request, the
    // server's overhead and two NoC deliveries (the ideal NoC's latency each way).
    EXPECT_GE(took, local - 1e-6);
    EXPECT_LE(took, local + hw.remote.overhead_ns + 2 * 1000.0);
  }
  EXPECT_EQ(copies, 1);
  uint64_t copy_bytes = 0;
  for_each_pe(r.sim.stats, [&](int, const StatsNode& pe) { copy_bytes += pe.get(PeStats::kv_copy_bytes); });
  EXPECT_EQ(copy_bytes, b);
}

TEST(KvWrites, OIsTheSameTimedOrFreeAndNoStepIsFaster) {
  const Scenario sc = test::inline_scenario(kScenario, "kvw");
  RunOptions opt = test::in_memory_options();
  HwConfig timed, free_writes;
  free_writes.pe.dma.kv_writes = KvWritePolicy::free;
  const RunOutput a = execute(sc, timed, opt), b = execute(sc, free_writes, opt);
  ASSERT_EQ(a.summary.steps.size(), b.summary.steps.size());
  for (size_t s = 0; s < a.summary.steps.size(); ++s)
    EXPECT_GE(a.summary.steps[s].ns, b.summary.steps[s].ns) << s;
  ASSERT_EQ(a.sim.outputs.size(), b.sim.outputs.size());
  for (size_t h = 0; h < a.sim.outputs.size(); ++h) EXPECT_TRUE(a.sim.outputs[h] == b.sim.outputs[h]) << "KV head " << h;
  EXPECT_EQ(a.summary.numerics.max_abs_err, b.summary.numerics.max_abs_err);
  EXPECT_LE(a.summary.numerics.max_abs_err, 1e-5);
  // The writes are the whole difference in bytes the slices wrote.
  uint64_t appended = 0, copied = 0, appended_free = 0, written = 0, written_free = 0;
  for_each_pe(a.sim.stats, [&](int, const StatsNode& pe) {
    appended += pe.get(PeStats::kv_append_bytes);
    copied += pe.get(PeStats::kv_copy_bytes);
    written += pe.get(HbmSliceStats::bytes_written);
  });
  for_each_pe(b.sim.stats, [&](int, const StatsNode& pe) {
    appended_free += pe.get(PeStats::kv_append_bytes);
    written_free += pe.get(HbmSliceStats::bytes_written);
  });
  EXPECT_GT(appended, 0u);
  EXPECT_GT(copied, 0u);
  EXPECT_EQ(appended_free, 0u);
  EXPECT_EQ(written - written_free, appended + copied);
}
