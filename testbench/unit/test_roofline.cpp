// Roofline: THInfer's worked example, exactly. (A simulated step against the bound:
// integration/test_roofline_sim.cpp; the tools/roofline script: e2e/test_roofline_tool.cpp.)
#include <gtest/gtest.h>

#include "runtime/policy/roofline.h"

using namespace ahbm;

TEST(Roofline, ThinferWorkedExample) {
  // 128*128*768 / (4*(128*128 + 128*768 + 128*768)) = 12582912 / 851968 = 192/13.
  EXPECT_DOUBLE_EQ(gemm_intensity(128, 128, 768), 192.0 / 13.0);
  Roofline r;
  r.peak_macs_per_s = 4.05e12;
  r.bandwidth_bytes_per_s = 30e9;
  EXPECT_DOUBLE_EQ(r.ridge(), 135.0);
  EXPECT_TRUE(r.bandwidth_bound(192.0 / 13.0));
  EXPECT_DOUBLE_EQ(r.attainable(192.0 / 13.0), 192.0 / 13.0 * 30e9);
}
