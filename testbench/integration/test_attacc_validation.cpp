// The bank-level HBM model against AttAcc's published attention timings (docs/validation.md): a few
// calibration points of each level and power setting stay within the error bound, and the
// model's BG-level time without refresh is the MAC stream's closed form.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "runtime/validate/attacc.h"

using namespace ahbm;

namespace {

std::string presets() { return std::string(AHBM_SOURCE_DIR) + "/hw/configs"; }

validate::AttaccPreset preset(const std::string& level, bool pc) {
  return validate::read_attacc_preset(presets() + "/" + validate::attacc_preset_file(level, pc));
}

}  // namespace

TEST(AttaccValidation, CalibrationPointsOfEveryLevelWithinTheErrorBound) {
  std::ifstream in(std::string(AHBM_SOURCE_DIR) + "/docs/validation/attacc_calibration.csv");
  ASSERT_TRUE(in.good());
  std::string line;
  std::getline(in, line);  // L,nhead,dhead,dbyte,pim_type,power_constraint,cycle,runs
  std::map<std::string, std::vector<double>> errs;  // by level and power setting
  while (std::getline(in, line)) {
    std::stringstream s(line);
    std::string f[8];
    for (std::string& x : f) std::getline(s, x, ',');
    validate::AttaccPoint pt;
    pt.L = std::stoll(f[0]);
    if (pt.L != 2048 && pt.L != 3072 && pt.L != 4096) continue;  // a few points: the ends and the middle
    pt.nhead = std::stoll(f[1]);
    pt.dhead = std::stoll(f[2]);
    pt.dbyte = std::stoll(f[3]);
    pt.pim_type = f[4];
    pt.power_constraint = f[5] == "True";
    const validate::AttaccTiming t = simulate_attacc(preset(pt.pim_type, pt.power_constraint), pt);
    const double ref_ns = std::stod(f[6]) / 1.3;  // cycles of the artifact's 1.3 GHz tCK
    errs[pt.pim_type + (pt.power_constraint ? " power-constrained" : " unconstrained")].push_back((t.ns - ref_ns) / ref_ns);
  }
  ASSERT_EQ(errs.size(), 4u);  // BG and BUFFER, both power settings
  for (const auto& [group, e] : errs) {
    ASSERT_EQ(e.size(), 3u) << group;
    double sum = 0, worst = 0;
    for (double x : e) sum += std::fabs(x), worst = std::max(worst, std::fabs(x));
    EXPECT_LE(sum / double(e.size()), 0.03) << group;
    EXPECT_LE(worst, 0.06) << group;
  }
}

TEST(AttaccValidation, BankGroupUnitWithoutRefreshIsItsMacStream) {
  // A BG-level unit hides every row switch behind the other banks' MACs: with refresh off the step
  // is its MAC commands nCCDSB apart, plus one ACT -> first MAC (tRCD) and the last data (RL + burst).
  for (bool pc : {true, false}) {
    validate::AttaccPreset p = preset("BG", pc);
    p.dram.refresh = hbm::RefreshPolicy::off;
    validate::AttaccPoint pt{2048, 188, 128, 2, "BG", pc};
    const validate::AttaccTiming t = simulate_attacc(p, pt);
    const int64_t macs = t.rounds * int64_t(t.unit_bursts_per_round);
    EXPECT_EQ(t.rounds, 12);
    EXPECT_EQ(t.unit_bursts_per_round, 2u * 128u * 8u);  // K and V: 2048 / 16 tokens x 256 B / 32 B
    const int64_t stream = (macs - 1) * p.dram.t.ccd_l + p.dram.t.rcd_rd + p.dram.t.rl + p.dram.t.burst;
    EXPECT_GE(t.cycles, stream);
    EXPECT_LE(t.cycles, stream + 2 * t.rounds * (p.dram.t.rcd_rd + p.dram.t.rl + p.dram.t.burst)) << "pc " << pc;
  }
}

TEST(AttaccValidation, ComposedRoundsMatchSimulatedOnes) {
  // Past kMaxSimulatedBursts the step is composed from simulated rounds; below it all run. Both
  // ways give the same time per round within the refresh phase's spread (one refresh per round).
  const validate::AttaccPreset p = preset("BUFFER", true);
  validate::AttaccPoint big{65536, 512, 256, 2, "BUFFER", true};
  const validate::AttaccTiming t = simulate_attacc(p, big);
  EXPECT_LT(t.rounds_simulated, t.rounds);
  validate::AttaccPoint one_round = big;
  one_round.nhead = 16;
  const validate::AttaccTiming r = simulate_attacc(p, one_round);
  EXPECT_EQ(r.rounds_simulated, 1);
  EXPECT_NEAR(double(t.cycles) / double(t.rounds), double(r.cycles), 0.01 * double(r.cycles));
}

TEST(AttaccValidation, KAndVOpenRowsOfTheirOwnSoTimeGrowsEvenlyWithL) {
  // The artifact keeps K and V in two regions (gen_trace_attacc_*.py: val_addr = key_addr +
  // v_offset), so every round opens a row for each whatever L is. A bank-level unit at L = 128 reads
  // 8 tokens x 64 B of K and as much of V: 1 KiB, one row if they were packed together. With the
  // regions apart, the 16 tokens from 112 to 128 cost what those from 128 to 144 cost (one more
  // token per unit, two more MACs per round each); packed, the second step paid an extra row switch.
  const validate::AttaccPreset p = preset("BANK", true);
  const auto ns = [&](int64_t L) { return simulate_attacc(p, validate::AttaccPoint{L, 101, 128, 2, "BANK", true}).ns; };
  const double before = ns(128) - ns(112), after = ns(144) - ns(128), later = ns(160) - ns(144);
  EXPECT_GT(before, 0.0);
  EXPECT_NEAR(after, later, 0.02 * later);
  EXPECT_NEAR(before, later, 0.02 * later);
}
