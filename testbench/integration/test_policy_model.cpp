// The cost model against the simulator on a small representative subset of the validation
// sweep (tools/policy_sweep runs the full one): estimates within 15% where the NoC is not
// congested (ideal NoC), and `auto`'s (policy, tile) is within 5% of the fastest simulated one in
// at least 95% of points (never worse than 10%). Also
// the decision record and launch overhead (unified vs per head). (--policy through the CLI:
// e2e/test_policy_cli.cpp.)
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

#include "hw/chip/simulate.h"
#include "hw/common/model/engines.h"
#include "hw/common/base/error.h"
#include "runtime/plan/choose.h"
#include "runtime/plan/policy_eval.h"
#include "runtime/plan/policy_report.h"
#include "test_fanout_scenario.h"
#include "test_support.h"

using namespace ahbm;

TEST(PolicyModel, EstimatesTrackSimulationAndAutoPicksTheWinner) {
  HwConfig slow_remote;
  slow_remote.remote.overhead_ns = 1000;
  HwConfig slow_links;
  slow_links.group.link.bandwidth_gbps = 16;
  const std::vector<std::pair<std::string, HwConfig>> hws = {{"default", HwConfig{}}, {"remote_1us", slow_remote},
                                                             {"slow_links", slow_links}};
  int points = 0, hits = 0, estimates = 0, within = 0;
  for (const auto& [name, hw] : hws)
    for (int prefix : {2048, 8192})
      for (auto [agents, tokens] : std::vector<std::pair<int, int>>{{1, 1}, {8, 20}, {16, 64}, {64, 4}}) {
        const Json r = evaluate_policies(test::fanout_scenario(prefix, agents, tokens), hw);
        ++points;
        // With the tile search many (policy, tile) candidates come within a few percent of each
        // other: the criterion is auto's pick within 5% of the fastest simulated candidate.
        hits += r["auto_regret"].get<double>() <= 0.05;
        EXPECT_LE(r["auto_regret"].get<double>(), 0.10) << name << " prefix " << prefix << " agents " << agents << " x "
                                                         << tokens << ": auto " << r["auto"] << "@" << r["auto_tile_rows"]
                                                         << ", fastest " << r["simulated_winner"] << "@"
                                                         << r["simulated_winner_tile_rows"];
        for (const auto& p : r["policies"]) {
          if (p.contains("unavailable")) continue;
          ++estimates;
          const double err = std::abs(p["error"].get<double>());
          within += err <= 0.15;
          EXPECT_LE(err, 0.15) << name << " prefix " << prefix << " agents " << agents << " x " << tokens << " "
                               << p["policy"] << ": simulated " << p["simulated_ns"] << " estimate " << p["estimate_ns"];
        }
      }
  EXPECT_GE(double(hits), 0.95 * points) << hits << " of " << points << " within 5%";
  EXPECT_EQ(within, estimates);
}

// The reducer's merge options (cube.reducer.units / order / inter_cube): the cost model books
// the same merges the reducer does (hw/common/model/merge_tree.h), so it stays within 15% of the
// simulation, and both see the tree shorten policy A's merge tail.
TEST(PolicyModel, EstimatesFollowTheMergeOptions) {
  auto reducer = [](const std::string& order, int units, const std::string& inter_cube) {
    HwConfig hw;
    hw.cube.reducer.order = choice_of<MergeOrder>(order);
    hw.cube.reducer.units = units;
    hw.cube.reducer.inter_cube = choice_of<InterCubeMerge>(inter_cube);
    return hw;
  };
  const std::vector<std::pair<std::string, HwConfig>> hws = {{"tree_4", reducer("tree", 4, "own_unit")},
                                                             {"serial_2_shared", reducer("serial", 2, "shared")},
                                                             {"tree_2_shared", reducer("tree", 2, "shared")},
                                                             {"serial_1_shared", reducer("serial", 1, "shared")}};
  for (const auto& [name, hw] : hws)
    for (int prefix : {2048, 8192})
      for (auto [agents, tokens] : std::vector<std::pair<int, int>>{{8, 20}, {16, 64}}) {
        const Json r = evaluate_policies(test::fanout_scenario(prefix, agents, tokens), hw);
        for (const auto& p : r["policies"]) {
          if (p.contains("unavailable")) continue;
          EXPECT_LE(std::abs(p["error"].get<double>()), 0.15)
              << name << " prefix " << prefix << " agents " << agents << " x " << tokens << " " << p["policy"]
              << ": simulated " << p["simulated_ns"] << " estimate " << p["estimate_ns"];
        }
      }
  // Policy A on the note's example as one 160-row tile: the states reach each reducer one every
  // 1.3 µs over the shared bus (half a merge time), so the tree's pairs wait for their PEs and
  // it saves one merge time of the serial 7, in the simulation and in the estimate alike.
  const Scenario sc = test::fanout_scenario(8192, 8, 20);
  auto a_largest = [&](HwConfig hw) {
    hw.q_tile_search = QTileSearch::largest;
    const Json r = evaluate_policies(sc, hw);
    for (const auto& p : r["policies"])
      if (p["policy"] == "A") return std::make_pair(p["simulated_ns"].get<double>(), p["estimate_ns"].get<double>());
    return std::make_pair(0.0, 0.0);
  };
  const auto serial = a_largest(HwConfig{}), tree = a_largest(reducer("tree", 4, "own_unit"));
  const HwConfig hw;
  const double merge = double(merge_cycles(hw.cube.reducer.lanes, hw.pe.vector.ops_per_merge, 160, 128)) / hw.clock_ghz;
  EXPECT_NEAR(serial.first - tree.first, merge, 1.0) << "simulated";
  EXPECT_NEAR(serial.second - tree.second, merge, 1.0) << "estimated";
}

TEST(PolicyModel, AutoRecordsEveryEstimateAndTheChoiceIsTheLowest) {
  const HwConfig hw;
  const AttentionJob a = test::random_job(hw, 64, 64 * hw.pes_per_group(), 64, 3);
  const std::vector<Candidate> candidates = layout_candidates(hw, a, hw.q_tile_rows);
  CostModel model(hw);
  const Choice d = choose({a}, candidates, hw, "auto", model);
  EXPECT_EQ(model.calls(), 1);  // every candidate estimated in one entry
  ASSERT_EQ(d.estimates.size(), candidates.size());  // all of them can run here
  for (Policy p : all_policies())  // each policy's largest tile, then its smaller ones
    EXPECT_TRUE(std::any_of(d.estimated.begin(), d.estimated.end(), [p](const Layout& l) { return l.policy == p; }));
  double lowest = 1e300;
  for (const auto& e : d.estimates) {
    lowest = std::min(lowest, e.total_ns);
    EXPECT_NEAR(e.q_ns + e.remap_ns + e.gemm_ns + e.kv_ns + e.reduce_ns + e.other_ns, e.total_ns, 1e-6);
  }
  ASSERT_NE(d.chosen_estimate(), nullptr);
  EXPECT_EQ(d.chosen_estimate()->policy, d.chosen.policy);
  EXPECT_LE(d.chosen_estimate()->total_ns, lowest * 1.001);  // ties within 0.1% go to the simpler policy
  EXPECT_THROW(choose({a}, candidates, hw, "C", model), InputError);
}

// choose estimates every candidate in one buffer laid out again per candidate (relay_out) and
// computes each distinct head shape once (the cost model's memo): every estimate equals, to the
// last bit, the estimate of the jobs apply_layout lays out on their own, and a head whose shape
// differs only where no number depends on it (a visible token's owner: shared vs the row's own
// agent) gets exactly the estimate of its identical twin.
TEST(PolicyModel, ChooseEstimatesEqualEachLayoutEstimatedAlone) {
  const HwConfig hw;
  const AttentionJob a = test::random_job(hw, 48, 40 * hw.pes_per_group(), 64, 5);
  AttentionJob twin = a, near_twin = a;
  twin.group = near_twin.group = 1;
  near_twin.shards[3].info[0].owner = 0;  // agent 0's own token at the same position: still visible
  const std::vector<Candidate> candidates = layout_candidates(hw, a, hw.q_tile_rows);
  for (const std::vector<AttentionJob>& jobs : {std::vector<AttentionJob>{a, twin}, std::vector<AttentionJob>{a, near_twin}}) {
    CostModel model(hw);
    const Choice d = choose(jobs, candidates, hw, "auto", model);
    ASSERT_EQ(d.estimates.size(), d.estimated.size());
    for (size_t i = 0; i < d.estimates.size(); ++i) {
      const PolicyEstimate alone = estimate_policy(apply_layout(jobs, hw, d.estimated[i]), hw, d.estimated[i].policy);
      EXPECT_EQ(d.estimates[i].to_json().dump(), alone.to_json().dump()) << policy_name(d.estimated[i].policy);
    }
  }
  CostModel with_twin(hw), with_near_twin(hw);
  const Choice t = choose({a, twin}, candidates, hw, "auto", with_twin);
  const Choice n = choose({a, near_twin}, candidates, hw, "auto", with_near_twin);
  EXPECT_EQ(t.to_json().dump(), n.to_json().dump());
}

TEST(LaunchOverhead, PerHeadLaunchesDelayTheStepByTheExtraLaunches) {
  HwConfig hw;
  hw.groups = 4;
  hw.host.kernel_launch_ns = 5000;
  std::vector<AttentionJob> jobs;
  for (int g = 0; g < 4; ++g) {
    jobs.push_back(test::random_job(hw, 32, 32 * hw.pes_per_group(), 64, 7u + unsigned(g)));
    jobs.back().group = g;
    jobs.back().values = false;
    jobs.back().q.clear();
    for (auto& s : jobs.back().shards) s.k.clear(), s.v.clear();
  }
  set_launch_schedule(jobs, "unified");
  const double unified = simulate(hw, jobs).end_ns;
  set_launch_schedule(jobs, "per-head");
  const double per_head = simulate(hw, jobs).end_ns;
  hw.host.kernel_launch_ns = 0;
  const double none = simulate(hw, jobs).end_ns;
  // One launch delays the step by at most one launch (the host already writes Q tiles into the
  // Q source's staging while the kernel launches). With four serial launches the last head
  // starts three launches later than under the unified schedule; the heads share the host link,
  // so part of that delay was queueing anyway: the step grows by between 2 and 3 launches.
  EXPECT_GT(unified - none, 0.7 * 5000);
  EXPECT_LE(unified - none, 5000 + 1e-6);
  EXPECT_GT(per_head - unified, 2 * 5000);
  EXPECT_LE(per_head - unified, 3 * 5000 + 1);
  EXPECT_THROW(set_launch_schedule(jobs, "sometimes"), InputError);
}

// Tile search (runtime/plan/planner.h): the smaller tiles are even cuts of the largest rounded up to
// whole GEMM tiles; every policy runs its lowest-estimate tile; "largest" keeps one tile each.
TEST(TileSearch, SmallerTilesAreEvenCutsRoundedUpToGemmTiles) {
  EXPECT_EQ(smaller_tiles(160, 16), (std::vector<int>{80, 64, 48, 32, 16}));  // n = 2, 3, 4, 5, 10
  EXPECT_EQ(smaller_tiles(40, 16), (std::vector<int>{32, 16}));               // n = 2: 20 -> 32; n = 3: 14 -> 16
  EXPECT_EQ(smaller_tiles(20, 16), (std::vector<int>{16}));
  EXPECT_TRUE(smaller_tiles(16, 16).empty());
  EXPECT_TRUE(smaller_tiles(5, 16).empty());
  const std::vector<int> big = smaller_tiles(8192, 16);
  ASSERT_FALSE(big.empty());
  EXPECT_EQ(big.back(), 16);
  EXPECT_LE(big.size(), 40u);  // n grows geometrically: logarithmic in 8192 / 16
  for (size_t i = 0; i < big.size(); ++i) {
    EXPECT_EQ(big[i] % 16, 0);
    if (i > 0) {
      EXPECT_LT(big[i], big[i - 1]);
    }
  }
}

TEST(TileSearch, EachPolicyRunsItsLowestEstimateTileAndLargestKeepsOne) {
  HwConfig hw;
  const AttentionJob a = test::random_job(hw, 160, 8192, 128, 3);
  CostModel model(hw);
  const std::vector<Candidate> searched = layout_candidates(hw, a, 0);
  EXPECT_GT(searched.size(), all_policies().size());
  for (Policy p : all_policies()) {
    const Choice c = choose({a}, searched, hw, policy_name(p), model);
    ASSERT_EQ(c.chosen.policy, p);
    double lowest = 1e300, largest = -1;
    for (size_t i = 0; i < c.estimates.size(); ++i)
      if (c.estimated[i].policy == p) {
        lowest = std::min(lowest, c.estimates[i].total_ns);
        if (largest < 0) largest = c.estimates[i].total_ns;  // each policy's largest tile comes first
      }
    EXPECT_LE(c.chosen_estimate()->total_ns, lowest * 1.001) << policy_name(p);
    EXPECT_LE(c.chosen_estimate()->total_ns, largest) << policy_name(p);
  }
  hw.q_tile_search = QTileSearch::largest;
  EXPECT_EQ(layout_candidates(hw, a, 0).size(), all_policies().size());
  hw.q_tile_search = QTileSearch::cost_model;
  EXPECT_EQ(layout_candidates(hw, a, 48).size(), all_policies().size());  // a fixed tile is not searched
}

// Serve's steps estimate only the requested policy's tiles (candidates_for): the same layout as
// choosing among every candidate, from one policy's estimates, each equal to its estimate in
// the full choice. "auto" keeps every candidate.
TEST(TileSearch, TheRequestedPolicysCandidatesAloneGiveTheSameChoice) {
  const HwConfig hw;
  const AttentionJob a = test::random_job(hw, 160, 8192, 128, 3);
  const std::vector<Candidate> searched = layout_candidates(hw, a, 0);
  EXPECT_EQ(candidates_for(searched, "auto").size(), searched.size());
  EXPECT_THROW(candidates_for(searched, "B9"), InputError);
  for (Policy p : all_policies()) {
    const std::vector<Candidate> own = candidates_for(searched, policy_name(p));
    ASSERT_FALSE(own.empty());
    EXPECT_LT(own.size(), searched.size());
    CostModel all_model(hw), own_model(hw);
    const Choice all = choose({a}, searched, hw, policy_name(p), all_model);
    const Choice one = choose({a}, own, hw, policy_name(p), own_model);
    EXPECT_EQ(one.chosen.policy, all.chosen.policy);
    EXPECT_EQ(one.chosen.tile_rows, all.chosen.tile_rows) << policy_name(p);
    ASSERT_EQ(one.estimates.size(), own.size());
    for (size_t i = 0; i < one.estimates.size(); ++i) {
      EXPECT_EQ(one.estimated[i].policy, p);
      const auto same = std::find_if(all.estimated.begin(), all.estimated.end(), [&](const Layout& l) {
        return l.policy == p && l.tile_rows == one.estimated[i].tile_rows;
      });
      ASSERT_NE(same, all.estimated.end());
      EXPECT_EQ(one.estimates[i].to_json().dump(),
                all.estimates[size_t(same - all.estimated.begin())].to_json().dump());
    }
  }
}

// The note's example (fanout_8x20): policy A as one 160-row tile leaves the serial CUBE merge
// un-overlapped; a smaller tile pipelines it. The search finds a faster tile in simulation, and
// the tile the cost model picks is never slower than the largest.
TEST(TileSearch, OnTheNotesExampleTheSearchedTileBeatsTheLargestInSimulation) {
  const Json r = evaluate_policies(test::fanout_scenario(8192, 8, 20), HwConfig{});
  int seen = 0;
  for (const Json& p : r["policies"]) {
    if (p.contains("unavailable")) continue;
    ++seen;
    const double largest = p["largest"]["simulated_ns"].get<double>(), best = p["best"]["simulated_ns"].get<double>();
    EXPECT_LE(best, largest) << p["policy"];
    EXPECT_LE(p["simulated_ns"].get<double>(), largest * 1.02) << p["policy"] << " picked tile " << p["tile_rows"];
    if (p["policy"] == "A") {
      EXPECT_EQ(p["largest"]["tile_rows"].get<int>(), 160);
      EXPECT_LT(p["simulated_ns"].get<double>(), 0.9 * largest) << "A at tile " << p["tile_rows"];
    }
  }
  EXPECT_EQ(seen, int(all_policies().size()));
  EXPECT_LE(r["auto_regret"].get<double>(), 0.05);
}

// Issue 37 item 2: with the HBM slice at efficiency 0.8, with the banked slice and with bf16
// storage, `auto`'s (policy, tile) -- the cost model's pick among every candidate of the tile
// search -- simulates within 5% of the fastest candidate, found by simulating them all
// (evaluate_policies, what `ahbm-sim policy-eval` runs). At 25.6 GB/s per PE (one HBM3
// pseudo-channel) the steps are bandwidth-bound, so the HBM term decides: a cost model that ignores
// the efficiency missed 2048 x 64 x 20 by 44%, and one that times the banked slice as the simple
// defaults (307.2 GB/s) missed 2048 x 8 x 20 by 32% (main at 14bb88f, docs/policies.md). The
// estimate says what it assumed of a banked slice, and nothing of a simple one.
TEST(PolicyModel, AutoWithinFivePercentAtEfficiencyBankedHbmAndBf16) {
  HwConfig eff = {}, banked = {}, bf16_hw = {};
  eff.pe.hbm.bandwidth_gbps = 25.6;
  eff.pe.hbm.efficiency = 0.8;
  banked.pe.hbm.model = HbmModel::banked;
  banked.pe.hbm.pseudo_channels = 1;
  banked.pe.hbm.capacity_bytes = kHbm3PseudoChannelBytes;
  bf16_hw.pe.hbm.bandwidth_gbps = 25.6;
  struct Setting {
    std::string name;
    HwConfig hw;
    DType dtype;
    std::vector<std::tuple<int, int, int>> shapes;  // prefix, agents, new tokens each
  };
  const std::vector<Setting> settings = {
      {"efficiency 0.8", eff, DType::fp32, {{8192, 1, 1}, {2048, 64, 20}}},
      {"banked, 1 pseudo-channel", banked, DType::fp32, {{8192, 1, 1}, {2048, 8, 20}}},
      {"bf16", bf16_hw, DType::bf16, {{8192, 1, 1}, {2048, 64, 1}}}};
  for (const Setting& s : settings)
    for (const auto& [prefix, agents, tokens] : s.shapes) {
      Scenario sc = test::fanout_scenario(prefix, agents, tokens);
      sc.model.dtype = s.dtype;
      const Json r = evaluate_policies(sc, s.hw);
      const std::string what = s.name + ", prefix " + std::to_string(prefix) + ", " + std::to_string(agents) + " x " +
                               std::to_string(tokens);
      EXPECT_LE(r["auto_regret"].get<double>(), 0.05) << what << ": auto " << r["auto"] << "@" << r["auto_tile_rows"]
                                                      << ", fastest " << r["simulated_winner"] << "@"
                                                      << r["simulated_winner_tile_rows"];
      for (const auto& p : r["policies"])
        if (!p.contains("unavailable")) {
          EXPECT_EQ(p["estimate"].contains("hbm_assumed"), s.hw.pe.hbm.banked()) << what << " " << p["policy"];
        }
    }
}
