// The statistics tree of real runs: its structure follows the chip (groups, CUBEs, PEs, links,
// NoC), per-PE counters add up to the chip-level figures reported elsewhere, and the run's tree
// is the per-step trees folded by each counter's rule.
#include <gtest/gtest.h>

#include <algorithm>

#include "hw/chip/chip_stats.h"
#include "runtime/run/driver.h"
#include "runtime/report/stats_tree.h"

using namespace ahbm;

namespace {

// The default scenario plus two decode steps, timing only, on the mesh NoC (its completion
// times differ from step to step).
RunOutput two_decode_steps(const HwConfig& hw) {
  Scenario sc = load_scenario(std::string(AHBM_SOURCE_DIR) + "/traces/fanout_8x20.json");
  sc.phases.push_back(PhaseSpec{PhaseType::decode, 0, 2});
  RunOptions opt;
  opt.vcd = false;
  opt.values = false;
  opt.keep_steps = true;
  return execute(sc, hw, opt);
}

HwConfig mesh_hw() {
  HwConfig hw;
  hw.noc.model = "mesh";
  return hw;
}

const StatsNode& cube_of(const StatsNode& chip, size_t c) {
  return chip.at(ChipStats::groups).children().at(0).at(ChipStats::cubes).children().at(c);
}

}  // namespace

TEST(StatsSim, TreeFollowsTheChipAndPeSumsMatchChipFigures) {
  const HwConfig hw = mesh_hw();
  const RunOutput r = two_decode_steps(hw);
  const StatsNode& chip = r.sim.stats;
  // One active group (index 0), its CUBEs, each with a Q buffer, a reducer and its PEs.
  const StatsNode& groups = chip.at(ChipStats::groups);
  ASSERT_TRUE(groups.is_list());
  ASSERT_EQ(groups.children().size(), 1u);
  const StatsNode& g = groups.children()[0];
  EXPECT_EQ(g.get(ChipStats::group), 0);
  ASSERT_EQ(g.at(ChipStats::cubes).children().size(), size_t(hw.group.cubes));
  for (const StatsNode& c : g.at(ChipStats::cubes).children()) {
    EXPECT_EQ(c.at(CubeStats::pes).children().size(), size_t(hw.cube.pes)) << c.name();
    EXPECT_TRUE(c.at(CubeStats::q_buffer).has(QBufferStats::high_water)) << c.name();
    EXPECT_TRUE(c.at(CubeStats::reducer).has(CubeReducerStats::rows_merged)) << c.name();
  }
  // One link per CUBE but the root of the reduction tree, child to parent.
  const std::vector<int> parent = reduction_parents(hw.group.link.topology, hw.group.cubes);
  const StatsNode& links = g.at(LinkStats::list);
  ASSERT_EQ(links.children().size(), size_t(hw.group.cubes - 1));
  for (const StatsNode& l : links.children())
    EXPECT_EQ(int(l.get(LinkStats::to)), parent.at(size_t(l.get(LinkStats::from)))) << l.name();
  EXPECT_TRUE(chip.at(ChipStats::noc).has(NocStats::packets_sent));

  // PE MACs add up to 2 x rows x KV tokens x d over every job of every step (closed form in the
  // summary, computed from the jobs, not from the tree).
  uint64_t macs = 0;
  double gemm_ns = 0;
  int pes = 0;
  for_each_pe(chip, [&](int group, const StatsNode& pe) {
    EXPECT_EQ(group, 0);
    macs += pe.get(PeStats::macs) + pe.get(PeStats::macs_skipped);  // computed + fully masked tiles left out
    gemm_ns += pe.get(PeStats::gemm_busy);
    ++pes;
  });
  EXPECT_EQ(pes, hw.pes_per_group());
  EXPECT_EQ(macs, r.summary.arithmetic.macs_expected);
  ASSERT_GT(macs, 0u);
  // GEMM busy time summed over PEs equals the GEMM spans' total (recorded independently).
  const std::map<std::string, double>& act = r.summary.busy_ns_by_activity;
  const double spans_ns = act.at("gemm_qk") + act.at("gemm_pv");
  EXPECT_NEAR(gemm_ns, spans_ns, 1e-9 * spans_ns);
  // The Q buffer's high-water mark cannot exceed its capacity.
  for (int c = 0; c < hw.group.cubes; ++c)
    EXPECT_LE(cube_of(chip, size_t(c)).at(CubeStats::q_buffer).get(QBufferStats::high_water), hw.cube.q_buffer.bytes);
}

TEST(StatsSim, RunTreeIsTheStepTreesFoldedByEachRule) {
  const RunOutput r = two_decode_steps(mesh_hw());
  ASSERT_EQ(r.steps.size(), 3u);  // fan-out prefill, two decode steps
  const std::vector<StepSummary>& steps = r.summary.steps;
  const StatsNode& run = r.sim.stats;

  // Sums: every PE's MACs and DMA time; max: each Q buffer's high-water mark.
  std::vector<uint64_t> macs;
  std::vector<double> dma;
  for (const StepOutput& s : r.steps) {
    size_t i = 0;
    for_each_pe(s.stats, [&](int, const StatsNode& pe) {
      if (macs.size() <= i) macs.push_back(0), dma.push_back(0);
      macs[i] += pe.get(PeStats::macs);
      dma[i] += pe.get(PeStats::dma_busy);
      ++i;
    });
  }
  size_t i = 0;
  for_each_pe(run, [&](int, const StatsNode& pe) {
    EXPECT_EQ(pe.get(PeStats::macs), macs.at(i)) << "PE " << i;
    EXPECT_NEAR(pe.get(PeStats::dma_busy), dma.at(i), 1e-9 * dma.at(i)) << "PE " << i;
    ++i;
  });
  EXPECT_EQ(i, macs.size());
  for (size_t c = 0; c < 4; ++c) {
    uint64_t hw = 0;
    for (const StepOutput& s : r.steps)
      hw = std::max(hw, cube_of(s.stats, c).at(CubeStats::q_buffer).get(QBufferStats::high_water));
    EXPECT_EQ(cube_of(run, c).at(CubeStats::q_buffer).get(QBufferStats::high_water), hw) << "cube " << c;
  }

  // NoC: packets summed, worst completion the maximum, mean completion weighted by step time.
  uint64_t packets = 0;
  double worst = 0, weighted = 0, covered = 0;
  for (size_t k = 0; k < r.steps.size(); ++k) {
    const StatsNode& mc = r.steps[k].stats.at(ChipStats::noc).at(NocStats::multicast);
    const double ns = steps[k].ns;
    packets += mc.get(NocStats::packets);
    worst = std::max(worst, mc.get(NocStats::max_ns));
    weighted += mc.get(NocStats::avg_ns) * ns;
    covered += ns;
  }
  const StatsNode& mc = run.at(ChipStats::noc).at(NocStats::multicast);
  EXPECT_EQ(mc.get(NocStats::packets), packets);
  EXPECT_EQ(mc.get(NocStats::max_ns), worst);
  EXPECT_NEAR(mc.get(NocStats::avg_ns), weighted / covered, 1e-9 * weighted / covered);
  EXPECT_NE(r.steps[0].stats.at(ChipStats::noc).at(NocStats::multicast).get(NocStats::avg_ns),
            r.steps[1].stats.at(ChipStats::noc).at(NocStats::multicast).get(NocStats::avg_ns))
      << "steps with equal means would not test the weighting";

  // summary.json "stats" is this tree, serialised.
  EXPECT_EQ(r.summary.stats, report::stats_json(run));
}
