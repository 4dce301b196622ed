// The CUBE reducer's merge units (cube.reducer.units, .order, .inter_cube): the closed forms of
// hw/common/model/engines.h, the merge schedule of hw/common/model/merge_tree.h, and small chips whose
// simulated merges follow them: 8 states in 7 serial merges or 3 tree levels, inter-CUBE merges
// that queue behind intra-CUBE ones on a shared unit, O within 1e-5 of float64 in either order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "hw/chip/simulate.h"
#include "hw/common/model/engines.h"
#include "hw/common/model/merge_tree.h"
#include "test_sim_support.h"
#include "test_support.h"

using namespace ahbm;

using test::spans_of;

namespace {

// All `states` present at 0 on `units` units of `merge` ns each: when the merged state is done,
// and how many merges were booked.
std::pair<double, int> schedule_all_at_once(int states, int units, MergeOrder order, double merge) {
  std::vector<double> free_at(size_t(units), 0.0);
  std::vector<std::pair<int, double>> arrivals;
  for (int i = 0; i < states; ++i) arrivals.push_back({i, 0.0});
  int booked = 0;
  const double done = MergeSchedule<double>::run(states, order, arrivals, [&](double ready) {
    ++booked;
    return book_server(free_at, ready, merge, [](double a, double b) { return a + b; }) + merge;
  });
  return {done, booked};
}

}  // namespace

TEST(CubeMerge, ClosedFormsCountSerialMergesAndTreeLevels) {
  EXPECT_EQ(merge_levels(8, MergeOrder::serial), 7u);
  EXPECT_EQ(merge_levels(8, MergeOrder::tree), 3u);
  EXPECT_EQ(merge_levels(5, MergeOrder::tree), 3u);
  EXPECT_EQ(merge_levels(2, MergeOrder::tree), 1u);
  EXPECT_EQ(merge_levels(1, MergeOrder::tree), 0u);
  for (int units : {1, 2, 4, 8}) EXPECT_EQ(merge_all_cycles(8, units, MergeOrder::serial, 10), 70u) << units;
  EXPECT_EQ(merge_all_cycles(8, 1, MergeOrder::tree, 10), 70u);  // one unit: the 7 merges in a row
  EXPECT_EQ(merge_all_cycles(8, 2, MergeOrder::tree, 10), 40u);  // 4 pairs in 2 rounds, then 1, 1
  EXPECT_EQ(merge_all_cycles(8, 4, MergeOrder::tree, 10), 30u);  // 3 levels
  EXPECT_EQ(merge_all_cycles(8, 8, MergeOrder::tree, 10), 30u);
  EXPECT_EQ(merge_all_cycles(5, 2, MergeOrder::tree, 10), 30u);  // 5 -> 3 -> 2 -> 1: 2 pairs, 1, 1
}

// The schedule the reducer and the cost model share gives the closed forms when every state is
// there at once, always with states - 1 merges.
TEST(CubeMerge, ScheduleOfStatesPresentAtOnceIsTheClosedForm) {
  for (MergeOrder order : {MergeOrder::serial, MergeOrder::tree})
    for (int states : {1, 2, 3, 5, 8})
      for (int units : {1, 2, 3, 4, 8}) {
        const auto [done, booked] = schedule_all_at_once(states, units, order, 10.0);
        EXPECT_DOUBLE_EQ(done, double(merge_all_cycles(uint64_t(states), units, order, 10)))
            << states << " states, " << units << " units, " << (order == MergeOrder::tree ? "tree" : "serial");
        EXPECT_EQ(booked, states - 1);
      }
}

// A tree pairs states by PE index whatever order they arrive in, and values follow the same shape.
TEST(CubeMerge, TreePairsByIndexAndFoldFollowsTheShape) {
  std::vector<double> free_at(4, 0.0);
  auto book = [&](double ready) { return book_server(free_at, ready, 10.0, [](double a, double b) { return a + b; }) + 10.0; };
  // States 0..3 arrive in the order 3, 0, 2, 1 at 0, 1, 2, 3: (2,3) merges at 2, (0,1) at 3, the root at 13.
  EXPECT_DOUBLE_EQ(MergeSchedule<double>::run(4, MergeOrder::tree, {{3, 0.0}, {0, 1.0}, {2, 2.0}, {1, 3.0}}, book), 23.0);
  auto concat = [](std::string& into, const std::string& from) { into = "(" + into + from + ")"; };
  EXPECT_EQ(MergeSchedule<double>::fold<std::string>({"a", "b", "c", "d", "e"}, MergeOrder::tree, concat), "(((ab)(cd))e)");
  EXPECT_EQ(MergeSchedule<double>::fold<std::string>({"a", "b", "c", "d", "e"}, MergeOrder::serial, concat), "((((ab)c)d)e)");
}

// One CUBE of 8 PEs that finish together (every PE reads Q at once; a bus wide enough that a
// state takes one cycle on it): serial merges are 7 one after another from the second arrival;
// a tree on 4 units merges pairs by PE index, 3 levels after the pairs are present.
TEST(CubeMerge, EightStatesMergeInSevenSerialMergesOrThreeTreeLevels) {
  const int rows = 16, d = 64;
  auto run = [&](const std::string& order, int units) {
    HwConfig hw = test::small_hw(1, 8);
    hw.cube.q_buffer.read_ports = 8;
    hw.cube.reducer.bus_bytes_per_cycle = 1 << 16;
    hw.cube.reducer.order = choice_of<MergeOrder>(order);
    hw.cube.reducer.units = units;
    return simulate(hw, {test::random_job(hw, rows, 8 * 64, d, 21)});
  };
  const HwConfig hw;
  const double m = double(merge_cycles(hw.cube.reducer.lanes, hw.pe.vector.ops_per_merge, rows, d));  // ns at 1 GHz
  auto arrivals = [](const SimResult& r) {
    std::vector<double> at;
    for (int p = 0; p < 8; ++p) {
      const auto s = spans_of(r, "group0.cube0.pe" + std::to_string(p), "send_state");
      EXPECT_EQ(s.size(), 1u);
      at.push_back(to_ns(s.at(0)->end));
    }
    return at;
  };
  auto done = [](const SimResult& r) {
    double end = 0;
    for (const Span* s : spans_of(r, "group0.cube0.reducer", "merge")) end = std::max(end, to_ns(s->end));
    return end;
  };

  const SimResult serial = run("serial", 1);
  std::vector<double> at = arrivals(serial);
  ASSERT_LT(*std::max_element(at.begin(), at.end()) - *std::min_element(at.begin(), at.end()), m);
  std::sort(at.begin(), at.end());
  EXPECT_EQ(spans_of(serial, "group0.cube0.reducer", "merge").size(), 7u);
  EXPECT_NEAR(done(serial), at[1] + 7 * m, 1e-6);
  EXPECT_NEAR(done(run("serial", 4)), at[1] + 7 * m, 1e-6);  // more units do not shorten one chain

  for (int units : {4, 8}) {
    const SimResult tree = run("tree", units);
    const std::vector<double> a = arrivals(tree);
    std::vector<double> level(a);  // max-plus by levels: a pair starts when both halves are present
    for (int l = 0; l < 3; ++l) {
      std::vector<double> up;
      for (size_t i = 0; i < level.size(); i += 2) up.push_back(std::max(level[i], level[i + 1]) + m);
      level = up;
    }
    EXPECT_EQ(spans_of(tree, "group0.cube0.reducer", "merge").size(), 7u);
    EXPECT_NEAR(done(tree), level[0], 1e-6) << units << " units";
    EXPECT_LE(done(tree) - *std::max_element(a.begin(), a.end()), 3 * m + 1e-6);
    EXPECT_LT(done(tree), done(serial) - 3 * m);
  }
  // Two units: the 4 pairs take 2 rounds, one more merge time than with 4 units.
  const SimResult two = run("tree", 2), four = run("tree", 4);
  EXPECT_NEAR(done(two) - done(four), m, 8.0);  // the arrivals are a few cycles apart
}

// O within 1e-5 of float64 whichever order merges the states, deterministically.
TEST(CubeMerge, SerialAndTreeOrdersMatchFloat64) {
  for (const std::string order : {"serial", "tree"}) {
    HwConfig hw = test::small_hw(4, 8);
    hw.cube.reducer.order = choice_of<MergeOrder>(order);
    hw.cube.reducer.units = 4;
    const AttentionJob job = test::random_job(hw, 40, 32 * 50, 64, 22, 16);
    const SimResult r = simulate(hw, {job}), again = simulate(hw, {job});
    EXPECT_LE(test::max_err_vs_reference(job, r.outputs[0]), 1e-5) << order;
    EXPECT_EQ(r.outputs[0], again.outputs[0]) << order;
    EXPECT_EQ(r.end_ns, again.end_ns) << order;
  }
}

// Two CUBEs of 2 PEs, two Q tiles, a 1-lane reducer (merges long against compute): CUBE 0's
// inter-CUBE merges of tile 0 come while its intra-CUBE merge of tile 1 is on the unit. Shared
// (inter_cube = shared, 1 unit), every merge and normalise of CUBE 0 runs back to back: the
// unit is busy for exactly their sum. With its own unit, the link port overlaps them and the
// step ends earlier.
TEST(CubeMerge, InterCubeMergesQueueBehindIntraCubeMergesOnASharedUnit) {
  const int rows = 16, d = 64;
  auto run = [&](const std::string& inter_cube) {
    HwConfig hw = test::small_hw(2, 2);
    hw.cube.reducer.lanes = 1;
    hw.cube.reducer.inter_cube = choice_of<InterCubeMerge>(inter_cube);
    hw.host.latency_ns = 0;
    return simulate(hw, {test::random_job(hw, 2 * rows, 4 * 64, d, 23, rows)});
  };
  HwConfig hw = test::small_hw(2, 2);
  hw.cube.reducer.lanes = 1;
  const double m = double(merge_cycles(1, hw.pe.vector.ops_per_merge, rows, d));
  const double n = double(normalise_cycles(1, rows, d));
  auto cube0_work = [](const SimResult& r) {
    std::vector<std::pair<double, double>> w;
    for (const char* act : {"merge", "xcube_merge", "normalise"})
      for (const Span* s : spans_of(r, "group0.cube0.reducer", act)) w.push_back({to_ns(s->start), to_ns(s->end)});
    std::sort(w.begin(), w.end());
    return w;
  };
  const SimResult shared = run("shared"), own = run("own_unit");
  const auto ws = cube0_work(shared), wo = cube0_work(own);
  ASSERT_EQ(ws.size(), 6u);  // 2 intra-CUBE merges, 2 inter-CUBE merges, 2 normalises
  ASSERT_EQ(wo.size(), 6u);
  double sum = 0;
  for (size_t i = 0; i < ws.size(); ++i) {
    sum += ws[i].second - ws[i].first;
    if (i) {
      EXPECT_NEAR(ws[i].first, ws[i - 1].second, 1e-6) << "gap or overlap before work item " << i;
    }
  }
  EXPECT_NEAR(sum, 4 * m + 2 * n, 1e-6);
  EXPECT_NEAR(ws.back().second - ws.front().first, 4 * m + 2 * n, 1e-6);  // time = the sum
  bool overlap = false;
  for (size_t i = 1; i < wo.size(); ++i) overlap |= wo[i].first < wo[i - 1].second - 1e-6;
  EXPECT_TRUE(overlap) << "with its own unit the link port merges while the reducer does";
  EXPECT_LT(own.end_ns, shared.end_ns);
  EXPECT_EQ(own.outputs[0], shared.outputs[0]);  // where merges run never changes values
}
