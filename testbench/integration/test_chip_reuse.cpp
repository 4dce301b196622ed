// A Simulator keeps its elaborated chip for the next run (hw/chip/simulate.h). Whatever ran
// before on that chip, a run's results must be those of a new chip, byte for byte: outputs, tile
// times, statistics, waveform and spans. And a chip must not be reused when it cannot be: other
// KV-head groups, a failed run, a NoC model that cannot restart.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "hw/chip/simulate.h"
#include "hw/common/base/error.h"
#include "hw/noc/ideal_noc.h"
#include "runtime/plan/planner.h"
#include "runtime/report/stats_tree.h"

namespace ahbm {
namespace {

// Everything a run reports, as text: equal text means byte-identical results.
std::string fingerprint(const SimResult& r) {
  std::ostringstream os;
  os.precision(17);
  os << "end " << r.end_ns << "\ntiles";
  for (size_t i = 0; i < r.tile_done_ns.size(); ++i)
    os << ' ' << r.tile_of[i].first << ':' << r.tile_of[i].second << '@' << r.tile_done_ns[i];
  os << "\noutputs";
  for (const MatrixRM& o : r.outputs) {
    os << ' ' << o.rows() << 'x' << o.cols() << ':';
    for (long i = 0; i < o.size(); ++i) {
      uint32_t bits;
      std::memcpy(&bits, o.data() + i, 4);
      os << std::hex << bits << std::dec << ',';
    }
  }
  os << "\nstats " << report::stats_json(r.stats).dump() << "\nspans";
  const SpanRecorder& s = *r.spans;
  for (const Span& x : s.spans())
    os << '\n'
       << x.start.value() << ' ' << x.end.value() << ' ' << s.name(x.component) << ' ' << s.name(x.activity) << ' '
       << s.name(x.phase) << ' ' << s.name(x.agent) << ' ' << x.rows << ' ' << x.bytes;
  os << "\nvcd\n";
  r.trace->write_vcd(os);
  return os.str();
}

Scenario fanout(int agents, int new_tokens, int prefix, int head_dim) {
  Scenario sc;
  sc.name = "reuse";
  sc.model.head_dim = head_dim;
  sc.shared_prefix_tokens = prefix;
  for (int a = 0; a < agents; ++a) sc.agents.push_back({"agent" + std::to_string(a), new_tokens});
  return sc;
}

// Runs of different shapes, policies (segments, replicas, remap, remote reads, broadcast),
// storage types and value modes, all on group 0.
std::vector<std::vector<AttentionJob>> mixed_runs(const HwConfig& hw) {
  std::vector<std::vector<AttentionJob>> runs;
  const Plan small = plan_fanout(fanout(4, 8, 1024, 64), hw, 3, true);
  for (Policy p : all_policies()) runs.push_back({policy_job(small.jobs.at(0), hw, p)});
  runs.push_back(plan_fanout(fanout(8, 20, 2048, 128), hw, 5, false).jobs);  // timing only
  Scenario half = fanout(3, 5, 700, 64);
  half.model.dtype = DType::fp16;
  runs.push_back(plan_fanout(half, hw, 7, true).jobs);
  runs.push_back({policy_job(small.jobs.at(0), hw, Policy::A)});  // the first run again
  return runs;
}

void expect_reuse_matches_fresh(const HwConfig& hw, const SimOptions& opt = {}) {
  Simulator sim(hw, opt);
  const auto runs = mixed_runs(hw);
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string reused = fingerprint(sim.run(runs[i]));
    const std::string fresh = fingerprint(simulate(hw, runs[i], opt));
    EXPECT_TRUE(reused == fresh) << "run " << i << " on a reused chip differs from a new chip";
  }
  EXPECT_EQ(sim.elaborations(), 1);
}

TEST(ChipReuse, IdealNocRunsMatchNewChips) {
  SimOptions opt;
  opt.vcd = true;
  expect_reuse_matches_fresh(HwConfig{}, opt);
}

TEST(ChipReuse, MeshAndRingRunsMatchNewChips) {
  for (const char* model : {"mesh", "ring"}) {
    HwConfig hw;
    hw.noc.model = model;
    SimOptions opt;
    opt.vcd = true;
    expect_reuse_matches_fresh(hw, opt);
  }
}

// Kernel-launch waits are read from the jobs as times since the run's start.
TEST(ChipReuse, KernelLaunchWaitsCountFromTheRunStart) {
  HwConfig hw;
  hw.host.kernel_launch_ns = 3000;
  expect_reuse_matches_fresh(hw);
}

// Progress reports end the run's slices early; the chip must still start the next run idle.
TEST(ChipReuse, ProgressReportsDoNotLeakIntoTheNextRun) {
  SimOptions opt;
  int reports = 0;
  opt.progress = [&](const SimProgress&) { ++reports; };
  expect_reuse_matches_fresh(HwConfig{}, opt);
  EXPECT_GT(reports, 0);
}

TEST(ChipReuse, OtherGroupsGetANewChip) {
  HwConfig hw;
  hw.groups = 2;
  const Plan p = plan_fanout(fanout(4, 8, 1024, 64), hw, 3, true);
  std::vector<AttentionJob> on1 = p.jobs;
  on1[0].group = 1;
  std::vector<AttentionJob> both = p.jobs;
  both.push_back(on1[0]);
  Simulator sim(hw);
  EXPECT_TRUE(fingerprint(sim.run(p.jobs)) == fingerprint(simulate(hw, p.jobs)));
  EXPECT_TRUE(fingerprint(sim.run(on1)) == fingerprint(simulate(hw, on1)));
  EXPECT_EQ(sim.elaborations(), 2);
  EXPECT_TRUE(fingerprint(sim.run(both)) == fingerprint(simulate(hw, both)));
  EXPECT_TRUE(fingerprint(sim.run(both)) == fingerprint(simulate(hw, both)));
  EXPECT_EQ(sim.elaborations(), 3);
}

// A run that fails leaves its threads mid-run: the next run must get a new chip and be right.
TEST(ChipReuse, AFailedRunIsFollowedByANewChip) {
  const HwConfig hw;
  const Plan p = plan_fanout(fanout(4, 8, 1024, 64), hw, 3, true);
  std::vector<AttentionJob> bad = p.jobs;
  bad[0].q[0] = std::numeric_limits<float>::quiet_NaN();
  Simulator sim(hw);
  const std::string good = fingerprint(sim.run(p.jobs));
  EXPECT_THROW(sim.run(bad), NumericFault);
  EXPECT_TRUE(fingerprint(sim.run(p.jobs)) == good);
  EXPECT_EQ(sim.elaborations(), 2);
}

// A user model that does not opt in to restarting gets a new chip for every run.
class OneShotIdealNoc : public IdealNoc {
 public:
  using IdealNoc::IdealNoc;
  bool restartable() const override { return false; }
};

TEST(ChipReuse, NocThatCannotRestartGetsANewChipEachRun) {
  NocRegistry nocs = NocRegistry::with_builtin_models();
  nocs.add(noc_model<OneShotIdealNoc>("oneshot", "ideal, without restart"));
  HwConfig hw;
  hw.noc.model = "oneshot";
  SimOptions opt;
  opt.nocs = &nocs;
  const Plan p = plan_fanout(fanout(4, 8, 1024, 64), hw, 3, true);
  Simulator sim(hw, opt);
  const std::string first = fingerprint(sim.run(p.jobs));
  EXPECT_TRUE(fingerprint(sim.run(p.jobs)) == first);
  EXPECT_EQ(sim.elaborations(), 2);
}

// Simulators of different configs live side by side and run in any order.
TEST(ChipReuse, InterleavedSimulatorsOfDifferentConfigs) {
  HwConfig a, b;
  b.cube.pes = 4;
  b.noc.model = "crossbar";
  const Plan pa = plan_fanout(fanout(4, 8, 1024, 64), a, 3, true);
  const Plan pb = plan_fanout(fanout(4, 8, 1024, 64), b, 3, true);
  Simulator sa(a), sb(b);
  const std::string ra = fingerprint(sa.run(pa.jobs));
  const std::string rb = fingerprint(sb.run(pb.jobs));
  EXPECT_TRUE(fingerprint(sa.run(pa.jobs)) == ra);
  EXPECT_TRUE(fingerprint(sb.run(pb.jobs)) == rb);
  EXPECT_TRUE(ra == fingerprint(simulate(a, pa.jobs)));
  EXPECT_TRUE(rb == fingerprint(simulate(b, pb.jobs)));
  EXPECT_NE(ra, rb);
}

// The runtime's pool keeps one Simulator per distinct chip: a config it has seen reuses its chip.
TEST(ChipReuse, PoolKeepsOneChipPerConfig) {
  HwConfig a, b;
  b.q_tile_rows = 16;
  const Plan pa = plan_fanout(fanout(4, 8, 1024, 64), a, 3, true);
  const Plan pb = plan_fanout(fanout(4, 8, 1024, 64), b, 3, true);
  SimulatorPool pool;
  SimOptions no_vcd;
  SimOptions vcd;
  vcd.vcd = true;
  EXPECT_TRUE(fingerprint(pool.run(a, pa.jobs, vcd)) == fingerprint(simulate(a, pa.jobs, vcd)));
  EXPECT_TRUE(fingerprint(pool.run(b, pb.jobs, vcd)) == fingerprint(simulate(b, pb.jobs, vcd)));
  EXPECT_TRUE(fingerprint(pool.run(a, pa.jobs, vcd)) == fingerprint(simulate(a, pa.jobs, vcd)));
  EXPECT_EQ(pool.elaborations(), 2);
  EXPECT_TRUE(fingerprint(pool.run(a, pa.jobs, no_vcd)) == fingerprint(simulate(a, pa.jobs, no_vcd)));
  EXPECT_EQ(pool.elaborations(), 3);  // the VCD switch is part of the chip
}

// Runs that keep no spans (SimOptions::keep_spans = false: serve's steps, a model's operators)
// reuse the chip's span buffer; interleaved with runs that keep them, on one pooled chip, every
// run is still a new chip's, and the spanless ones return no spans.
TEST(ChipReuse, RunsWithoutSpansLeaveTheNextRunUnchanged) {
  const HwConfig hw;
  SimOptions with, without;
  without.keep_spans = false;
  SimulatorPool pool;
  const auto runs = mixed_runs(hw);
  for (size_t i = 0; i < runs.size(); ++i) {
    const SimResult quiet = pool.run(hw, runs[i], without);
    EXPECT_TRUE(quiet.spans && quiet.spans->spans().empty()) << "run " << i;
    EXPECT_TRUE(fingerprint(quiet) == fingerprint(simulate(hw, runs[i], without))) << "run " << i;
    EXPECT_TRUE(fingerprint(pool.run(hw, runs[i], with)) == fingerprint(simulate(hw, runs[i], with))) << "run " << i;
  }
  EXPECT_EQ(pool.elaborations(), 1);  // keep_spans is not part of the chip
}

}  // namespace
}  // namespace ahbm
