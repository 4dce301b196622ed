// The watchdog's building blocks on their own: the wait report that names what each stalled
// module waits for, and the numeric guard that locates the first non-finite value.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "hw/chip/watchdog.h"
#include "hw/common/observe/span_recorder.h"

using namespace ahbm;

TEST(NumericGuard, ChecksStatesAndOutputs) {
  SpanRecorder names;
  const int pe = names.intern("group0.cube0.pe3");
  AttnState s = AttnState::empty(2, 3);  // m = -inf, l = 0: a row with no visible key is fine
  NumericGuard g(names);
  EXPECT_TRUE(g.check(s, pe, 7));
  s.m[1] = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(g.check(s, pe, 7));
  EXPECT_EQ(g.fault().rfind("+Inf in softmax state m at row 1 of tile 7 in group0.cube0.pe3", 0), 0u) << g.fault();
  NumericGuard g2(names);
  MatrixRM o = MatrixRM::Zero(2, 3);
  o(1, 2) = -std::numeric_limits<float>::infinity();
  EXPECT_FALSE(g2.check(o, pe, 1));
  EXPECT_EQ(g2.fault().rfind("-Inf in o at row 1, column 2 of tile 1", 0), 0u) << g2.fault();
  EXPECT_FALSE(g2.check(MatrixRM::Constant(1, 1, std::nanf("")), pe, 2));
  EXPECT_NE(g2.fault().find("tile 1"), std::string::npos) << "the first fault is the one kept";
}

TEST(WaitReport, IdListsCollapseRuns) {
  EXPECT_EQ(id_list({}), "");
  EXPECT_EQ(id_list({3}), "3");
  EXPECT_EQ(id_list({9, 2, 3, 4, 7, 3}), "2-4, 7, 9");
}

TEST(WaitReport, ModulesWithTheSameWaitShareALine) {
  WaitRegistry w;
  w.add("a", [] { return std::string("waits for x"); });
  w.add("b", [] { return std::string(); });  // nothing outstanding: not listed
  w.add("c", [] { return std::string("waits for y"); });
  w.add("d", [] { return std::string("waits for x"); });
  EXPECT_EQ(w.report(), (std::vector<std::string>{"a, d: waits for x", "c: waits for y"}));
}
