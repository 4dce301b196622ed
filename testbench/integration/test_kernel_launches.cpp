// Kernel launches of a whole model's operators (host.kernel_launch_ns; THInfer's launch overhead):
// a weight GEMM is one kernel, nothing of it starts on the chip before the host has launched it
// (its W reads, its compute, the weight streamer), while the host's upload of its X overlaps the
// launch as an attention kernel's Q upload does. Checked against closed forms on one operator,
// and on LLaMA-3-8B's decode: TPOT grows by the launches of a step times the cost, less the
// uploads that hide part of each.
#include <gtest/gtest.h>

#include "hw/chip/simulate.h"
#include "runtime/run/driver.h"
#include "runtime/scenario/scenario.h"
#include "test_gemm_support.h"
#include "test_runtime_support.h"
#include "test_support.h"

using namespace ahbm;

namespace {

double end_ns(HwConfig c, const GemmJob& j, double launch_ns) {
  c.host.kernel_launch_ns = launch_ns;
  return Simulator(c).run_gemms({j}).gemms.at(0).end_ns;
}

}  // namespace

TEST(KernelLaunches, AWeightGemmStartsWhenItsKernelIsLaunched) {
  const HwConfig c = test::gemm_chip(2, 4);
  constexpr double kLaunch = 50000;  // 50 us: longer than any upload below
  // x_stationary: X is in the slices, so nothing precedes the launch: the whole operator moves by it.
  const GemmJob x = test::gemm_of(16, 256, 256, DType::fp16, GemmMapping::x_stationary);
  EXPECT_NEAR(end_ns(c, x, kLaunch) - end_ns(c, x, 0), kLaunch, test::kTimeTolNs);
  // w_stationary: the host uploads X and the Q source multicasts it into the CUBEs' Q buffers
  // while the kernel is being launched; W is read only after it. The operator moves by the launch
  // less at most the time X takes to be in every Q buffer.
  for (int m : {1, 16, 64}) {
    const GemmJob w = test::gemm_of(m, 256, 256);
    const double moved = end_ns(c, w, kLaunch) - end_ns(c, w, 0);
    EXPECT_LE(moved, kLaunch + test::kTimeTolNs) << "M = " << m;
    EXPECT_GE(moved, kLaunch - test::x_in_ns(c, w) - test::kTimeTolNs) << "M = " << m;
    EXPECT_LT(test::x_in_ns(c, w), 0.05 * kLaunch);
  }
}

TEST(KernelLaunches, DecodeTpotGrowsByTheStepsLaunches) {
  // LLaMA-3-8B (traces/llama3_8b.json): each decode step launches, per layer, its attention (one
  // unified kernel) and its 4 weight GEMMs (the norms and RoPE are fused), then the LM head.
  const Scenario sc = load_scenario(test::source_path("traces/llama3_8b.json"));
  RunOptions opt = test::in_memory_options();
  opt.values = false;
  auto tpot = [&](double launch_ns) {
    HwConfig hw;
    hw.host.kernel_launch_ns = launch_ns;
    return execute(sc, hw, opt).summary.operators->tpot_ns;
  };
  constexpr double kLaunch = 100000;
  const int launches = 32 * (1 + 4) + 1;
  const double grown = tpot(kLaunch) - tpot(0);
  EXPECT_LE(grown, launches * kLaunch);
  // Each GEMM's X upload (decode: a few rows of 4096 or 14336 fp16 values) hides under 25% of
  // its launch here.
  EXPECT_GE(grown, 0.75 * launches * kLaunch);
}
