// The tools/roofline script prints THInfer's worked example exactly (the same numbers as
// unit/test_roofline.cpp computes in C++).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "test_support.h"

using namespace ahbm;

TEST(Roofline, ToolPrintsTheThinferNumbersExactly) {
  const std::string cmd = "/usr/bin/python3 '" + test::source_path("tools/roofline") + "' --thinfer 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) out += buf;
  ASSERT_EQ(pclose(p), 0) << out;
  EXPECT_NE(out.find("= 192/13 = 14.7692 MAC/byte"), std::string::npos) << out;
  EXPECT_NE(out.find("= 4.05e12 / 30e9 = 135\n"), std::string::npos) << out;
  EXPECT_NE(out.find("bandwidth-bound"), std::string::npos) << out;
}
