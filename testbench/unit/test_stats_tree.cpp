// The typed statistics tree (hw/common/observe/stats.h): each counter's merge rule on hand-built
// trees, list elements matched by name, rule/type changes refused, and the one serialiser.
#include <gtest/gtest.h>

#include <stdexcept>

#include "hw/common/observe/stats.h"
#include "runtime/report/stats_tree.h"

using namespace ahbm;

namespace {

constexpr stats::Sum<uint64_t> kBytes{"bytes", "bytes", "bytes moved"};
constexpr stats::BusyNs kBusy{"busy_ns", "ns", "time busy"};
constexpr stats::Max<uint64_t> kHighWater{"high_water_bytes", "bytes", "most bytes held at once"};
constexpr stats::Max<double> kWorst{"max_ns", "ns", "worst latency"};
constexpr stats::TimeMeanNs kMean{"avg_ns", "ns", "mean latency"};
constexpr stats::Label<int64_t> kIndex{"group", "", "group index"};
constexpr stats::Label<std::string> kKind{"kind", "", "group kind"};

// One group with one PE: counters of every rule.
StatsNode tree(uint64_t bytes, double busy, uint64_t hw, double worst, double mean) {
  StatsNode root;
  StatsNode& g = root.list("groups").child("group3");
  g.set(kIndex, 3);
  g.set(kKind, "kv");
  StatsNode& pe = g.list("pes").child("pe0");
  pe.set(kBytes, bytes);
  pe.set(kBusy, busy);
  pe.set(kHighWater, hw);
  root.child("noc").set(kWorst, worst);
  root.child("noc").set(kMean, mean);
  return root;
}

const StatsNode& pe0(const StatsNode& root) { return root.at("groups").at("group3").at("pes").at("pe0"); }

}  // namespace

TEST(StatsTree, EachCounterMergesByItsOwnRule) {
  StatsNode acc = tree(100, 1.25, 64, 7.0, 10.0);
  merge_stats(acc, tree(30, 0.5, 48, 9.0, 40.0), 300.0, 100.0);
  EXPECT_EQ(pe0(acc).get(kBytes), 130u);                    // sum
  EXPECT_DOUBLE_EQ(pe0(acc).get(kBusy), 1.75);               // sum of busy time
  EXPECT_EQ(pe0(acc).get(kHighWater), 64u);                 // max: the later, lower mark does not win
  EXPECT_EQ(acc.at("noc").get(kWorst), 9.0);                 // max: the later, higher one does
  EXPECT_DOUBLE_EQ(acc.at("noc").get(kMean), (10.0 * 300 + 40.0 * 100) / 400);  // time-weighted
  const StatsNode& g = acc.at("groups").at("group3");
  EXPECT_EQ(g.get(kIndex), 3);                               // labels stay
  EXPECT_EQ(g.get(kKind), "kv");
}

TEST(StatsTree, MergeOverThreeStepsEqualsTheWholeRunMean) {
  // Steps of 100, 200 and 700 ns with means 1, 2 and 3: the run's mean is their time average.
  StatsNode acc = tree(1, 0, 0, 0, 1.0);
  merge_stats(acc, tree(1, 0, 0, 0, 2.0), 100.0, 200.0);
  merge_stats(acc, tree(1, 0, 0, 0, 3.0), 300.0, 700.0);
  EXPECT_NEAR(acc.at("noc").get(kMean), (1.0 * 100 + 2.0 * 200 + 3.0 * 700) / 1000, 1e-12);
  EXPECT_EQ(pe0(acc).get(kBytes), 3u);
}

TEST(StatsTree, ZeroLengthStepsTakeTheLaterMean) {
  StatsNode acc = tree(0, 0, 0, 0, 5.0);
  merge_stats(acc, tree(0, 0, 0, 0, 8.0), 0.0, 0.0);
  EXPECT_EQ(acc.at("noc").get(kMean), 8.0);
}

TEST(StatsTree, ListElementsMatchByNameAndNewOnesAreAdded) {
  StatsNode acc = tree(10, 0, 0, 0, 0);
  StatsNode step = tree(5, 0, 0, 0, 0);
  StatsNode& g1 = step.list("groups").child("group1");  // only in the later step
  g1.set(kIndex, 1);
  g1.list("pes").child("pe0").set(kBytes, uint64_t(77));
  merge_stats(acc, step, 1.0, 1.0);
  ASSERT_EQ(acc.at("groups").children().size(), 2u);
  EXPECT_EQ(pe0(acc).get(kBytes), 15u);
  EXPECT_EQ(acc.at("groups").at("group1").get(kIndex), 1);
  EXPECT_EQ(acc.at("groups").at("group1").at("pes").at("pe0").get(kBytes), 77u);
  // A counter only in the later step is copied.
  StatsNode extra = tree(0, 0, 0, 0, 0);
  extra.child("noc").set(stats::Sum<uint64_t>{"retries", "count", "retries"}, 4);
  merge_stats(acc, extra, 2.0, 1.0);
  EXPECT_EQ(acc.at("noc").get(stats::Sum<uint64_t>{"retries", "count", "retries"}), 4u);
}

TEST(StatsTree, ChangingTypeOrRuleBetweenStepsIsABug) {
  StatsNode a, b, c;
  a.set(kBytes, 1);
  b.set(stats::Max<uint64_t>{"bytes", "bytes", "bytes"}, 2);  // same name, other rule
  EXPECT_THROW(merge_stats(a, b, 1, 1), std::logic_error);
  c.set(stats::Sum<double>{"bytes", "bytes", "bytes"}, 2.0);  // same name and rule, other type
  EXPECT_THROW(merge_stats(a, c, 1, 1), std::logic_error);
}

TEST(StatsTree, TypedAccessRefusesMissingOrMistypedCounters) {
  StatsNode n("pe0");
  n.set(kBytes, 5);
  EXPECT_TRUE(n.has(kBytes));
  EXPECT_FALSE(n.has(stats::Sum<double>{"bytes", "bytes", "bytes"}));
  EXPECT_THROW(n.get(stats::Sum<double>{"bytes", "bytes", "bytes"}), std::logic_error);
  EXPECT_THROW(n.get(kBusy), std::logic_error);
  EXPECT_THROW(n.at("nothing"), std::logic_error);
  n.set(kBytes, 6);  // overwrite, not a second counter
  EXPECT_EQ(n.counters().size(), 1u);
  EXPECT_EQ(n.get(kBytes), 6u);
}

namespace {

// A CUBE list with an inlined Q buffer and a list of two PEs, and a topology of labels.
StatsNode cube_tree() {
  StatsNode root;
  StatsNode& cube = root.list("cubes").child("cube0");
  cube.set(stats::Sum<uint64_t>{"served", "rows", "rows served"}, 2);
  StatsNode& qb = cube.child("q_buffer");
  qb.inline_prefix = "q_buffer_";
  qb.set(kHighWater, 512);
  cube.list("pes").child("pe0").set(kBusy, 1.5);
  cube.list("pes").child("pe1").set(kBusy, 0.0);
  root.child("topology").set(stats::Label<std::vector<int64_t>>{"at", "", "mesh coordinate"}, {2, 1});
  root.child("topology").set(kKind, "mesh");
  return root;
}

}  // namespace

TEST(StatsTree, SerialisedOnceWithListsAndInlinedChildren) {
  EXPECT_EQ(report::stats_json(cube_tree()).dump(),
            R"({"cubes":[{"pes":[{"busy_ns":1.5},{"busy_ns":0.0}],"q_buffer_high_water_bytes":512,"served":2}],)"
            R"("topology":{"at":[2,1],"kind":"mesh"}})");
}

TEST(StatsTree, DocsNameEveryCounterByItsPathWithUnitDescriptionAndRule) {
  StatsNode root = cube_tree();  // a list's elements (pe0, pe1) are documented once
  root.child("noc").set(kMean, 3.0);
  const Json docs = report::stats_docs(root);
  EXPECT_EQ(docs.size(), 6u);
  EXPECT_EQ(docs.at("cubes[].served"), (Json{{"unit", "rows"}, {"description", "rows served"}, {"merge", "sum"}}));
  EXPECT_EQ(docs.at("cubes[].q_buffer_high_water_bytes").at("merge"), "max");  // inlined: the prefixed name
  EXPECT_EQ(docs.at("cubes[].pes[].busy_ns").at("unit"), "ns");
  EXPECT_EQ(docs.at("topology.at").at("description"), "mesh coordinate");
  EXPECT_EQ(docs.at("topology.kind"), (Json{{"unit", ""}, {"description", "group kind"}, {"merge", "label"}}));
  EXPECT_EQ(docs.at("noc.avg_ns").at("merge"), "time_mean");
}
