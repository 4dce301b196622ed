// The GDDR6-AiM channel model against CENT's published transformer-block latencies
// (docs/validation.md): a few calibration rows of each pipeline split stay within the error
// bound, Tensor parallelism > 1 is refused, and one GEMV's commands and time are their closed form.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "hw/common/base/error.h"
#include "hw/hbm/aim_channel.h"
#include "runtime/validate/cent.h"

using namespace ahbm;

namespace {

validate::CentPreset preset() {
  return validate::read_cent_preset(std::string(AHBM_SOURCE_DIR) + "/hw/configs/" + validate::cent_preset_file());
}

}  // namespace

TEST(CentValidation, CalibrationRowsOfEachSplitWithinTheErrorBound) {
  std::ifstream in(std::string(AHBM_SOURCE_DIR) + "/docs/validation/cent_calibration.csv");
  ASSERT_TRUE(in.good());
  std::string line;
  std::getline(in, line);  // Model,Device number,Pipeline parallelism,Tensor parallelism,...
  const validate::CentPreset p = preset();
  std::map<int64_t, std::vector<double>> block_err, pim_err;  // by pipeline split
  while (std::getline(in, line)) {
    std::stringstream s(line);
    std::string f[11];
    for (std::string& x : f) std::getline(s, x, ',');
    validate::CentRow r;
    r.model = f[0];
    r.devices = std::stoll(f[1]);
    r.pp = std::stoll(f[2]);
    r.tp = std::stoll(f[3]);
    r.channels_per_device = std::stoll(f[4]);
    r.channels_per_block = std::stoll(f[5]);
    r.L = std::stoll(f[6]);
    if (r.L != 128 && r.L != 2048 && r.L != 4096) continue;  // a few rows: the ends and the middle
    const validate::CentTiming t = validate::simulate_cent_block(p, r);
    block_err[r.pp].push_back((t.block_ms - std::stod(f[10])) / std::stod(f[10]));
    pim_err[r.pp].push_back((t.pim_ms - std::stod(f[7])) / std::stod(f[7]));
    // The CXL and accelerator parts are the artifact's own formulas over the preset's constants.
    EXPECT_NEAR(t.cxl_ms, std::stod(f[8]), 1e-9) << line;
    EXPECT_NEAR(t.acc_ms, std::stod(f[9]), 1e-9) << line;
  }
  ASSERT_EQ(block_err.size(), 2u);  // PP 8 (32 channels per block) and PP 32 (8)
  for (const auto& [pp, e] : block_err) {
    ASSERT_EQ(e.size(), 3u) << pp;
    double sum = 0, worst = 0;
    for (double x : e) sum += std::fabs(x), worst = std::max(worst, std::fabs(x));
    EXPECT_LE(sum / double(e.size()), 0.05) << "PP " << pp;
    EXPECT_LE(worst, 0.10) << "PP " << pp;
    for (double x : pim_err[pp]) EXPECT_LE(std::fabs(x), 0.05) << "PP " << pp;
  }
}

TEST(CentValidation, TensorParallelRowsAndBadSplitsAreRefused) {
  const validate::CentPreset p = preset();
  auto message = [&](validate::CentRow r) {
    try {
      validate::simulate_cent_block(p, r);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const validate::CentRow good{"Llama2-7B", 8, 8, 1, 32, 32, 512};
  validate::CentRow r = good;
  r.pp = 2, r.tp = 4;
  EXPECT_NE(message(r).find("Tensor parallelism = 4: a block split over devices needs the chips to talk to each other (the many-chips issue)"),
            std::string::npos) << message(r);
  r = good, r.model = "GPT3-175B";
  EXPECT_NE(message(r).find("column Model = \"GPT3-175B\""), std::string::npos) << message(r);
  r = good, r.pp = 32, r.channels_per_block = 12;
  EXPECT_NE(message(r).find("column Channels per block = 12"), std::string::npos) << message(r);
  r = good, r.L = 70000;
  EXPECT_NE(message(r).find("column Sequence length = 70000"), std::string::npos) << message(r);
  r = good, r.pp = 16;
  EXPECT_NE(message(r).find("column Pipeline parallelism = 16"), std::string::npos) << message(r);
  EXPECT_EQ(message(good), "no error");
}

TEST(CentValidation, AllBankMacsAreTheirClosedForm) {
  // n MAC_ABK of `op` columns on distinct rows from a closed channel, no refresh: ACT16, op MAC16
  // nCCDL apart after nRCDRDMAC, PREA nRTP after the last, the next ACT16 nRP later. One MAC_ABK
  // is nRP + nRCDRDMAC + nCCDL (op - 1) + nRTP = 98 + 2 op tCK: aim_sim.py's MAC_ABK constant,
  // 49 + op_size ns at 0.5 ns.
  validate::CentPreset p = preset();
  p.dram.refresh = hbm::RefreshPolicy::off;
  for (int64_t op : {8, 48, 64})
    for (int64_t n : {1, 5}) {
      hbm::AimChannel ch(p.dram, p.aim);
      for (int64_t i = 0; i < n; ++i) ch.run(hbm::AimRequest{hbm::AimIsr::mac_abk, op, 100 + i});
      const int64_t per = p.dram.t.rp + p.aim.rcd_mac + p.dram.t.ccd_l * (op - 1) + p.dram.t.rtp;
      EXPECT_EQ(per, 98 + 2 * op);
      EXPECT_EQ(ch.finish(), (n - 1) * per + p.aim.rcd_mac + p.dram.t.ccd_l * (op - 1) + 1) << op << " " << n;
      EXPECT_EQ(ch.stats()[hbm::AimCmd::act16], uint64_t(n));
      EXPECT_EQ(ch.stats()[hbm::AimCmd::mac16], uint64_t(n * op));
      EXPECT_EQ(ch.stats()[hbm::AimCmd::prea], uint64_t(n - 1));
    }
}

TEST(CentValidation, OneGemvsInstructionsAndTime) {
  // Llama2-7B's Wq (4096 x 4096) on 32 channels = 512 banks: 8 columns per bank, 4 rows of the
  // input vector; per row one global-buffer write of 64 bursts and one group of 8 columns.
  validate::CentPreset p = preset();
  std::vector<hbm::AimRequest> trace;
  validate::cent_gemv_trace(p, 32, 0, 4096, 4096, false, trace);
  std::map<hbm::AimIsr, int64_t> count, size;
  for (const hbm::AimRequest& r : trace) ++count[r.isr], size[r.isr] += r.size;
  EXPECT_EQ(count[hbm::AimIsr::wr_gb], 4);
  EXPECT_EQ(size[hbm::AimIsr::wr_gb], 4 * 64);
  EXPECT_EQ(count[hbm::AimIsr::wr_bias], 32);
  EXPECT_EQ(count[hbm::AimIsr::mac_abk], 32);
  EXPECT_EQ(size[hbm::AimIsr::mac_abk], 32 * 64);
  EXPECT_EQ(count[hbm::AimIsr::rd_mac], 32);
  p.dram.refresh = hbm::RefreshPolicy::off;
  hbm::AimChannel ch(p.dram, p.aim);
  for (const hbm::AimRequest& r : trace) ch.run(r);
  // The MACs alone (32 x (98 + 128) tCK) plus, per input row, the global-buffer write (64 WRGB
  // nBL apart), 8 register writes and reads, and the TMODs into and out of register mode (at most
  // 3 x 32 per row).
  const int64_t macs = 32 * (98 + 2 * 64);
  EXPECT_GE(ch.finish(), macs);
  EXPECT_LE(ch.finish(), macs + 4 * (64 * 2 + 3 * 32 + 8 * 2 + 8 * 4 + 64));
  // Register mode for WR_GB + WR_BIAS, out for the MACs, in for RD_MAC; the next row's WR_GB
  // finds it on: one TMOD to start and two per row.
  EXPECT_EQ(ch.stats()[hbm::AimCmd::tmod], 1u + 4u * 2u);
}
