// The terminal progress line (runtime/report/progress.h) with a clock of the test's own: the
// run's share across steps, the ETA, the 0.2 s rate limit, joins beyond the plan, and the line
// cleared only when the run's last step is done.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "hw/chip/simulate.h"
#include "runtime/report/progress.h"

namespace ahbm {
namespace {

SimProgress at_step(int step, int steps, double fraction, const char* label = "decode[0]") {
  SimProgress p;
  p.phase = "decode";
  p.sim_ns = 1500;
  p.fraction = fraction;
  p.step = step;
  p.steps = steps;
  p.step_label = label;
  return p;
}

TEST(ProgressLine, RunShareAndEtaAcrossSteps) {
  std::ostringstream os;
  double now = 100.0;
  auto print = report::progress_printer(os, [&] { return now; });
  print(at_step(1, 4, 0.0));
  EXPECT_EQ(os.str(), "\r\033[Kstep 1/4 decode[0] | 1.5 us simulated | 0% of the run");  // no ETA yet
  os.str("");
  now = 110.0;  // 10 s later, step 3 of 4 at 60%: (2 + 0.6) / 4 = 65% of the run
  print(at_step(3, 4, 0.6, "decode[2]"));
  // ETA = 10 s x 0.35 / 0.65 = 5.38 s
  EXPECT_EQ(os.str(), "\r\033[Kstep 3/4 decode[2] | 1.5 us simulated | 65% of the run | ETA 5 s");
  os.str("");
  now = 110.1;  // within 0.2 s of the last line: nothing
  print(at_step(3, 4, 0.7));
  EXPECT_EQ(os.str(), "");
  now = 400.0;  // 300 s in, 25% of the run: 900 s to go
  print(at_step(2, 4, 0.0, "decode[1]"));
  EXPECT_NE(os.str().find("25% of the run | ETA 15 min 00 s"), std::string::npos) << os.str();
}

TEST(ProgressLine, ClearedOnlyWhenTheLastStepIsDone) {
  std::ostringstream os;
  double now = 0.0;
  auto print = report::progress_printer(os, [&] { return now; });
  print(at_step(1, 2, 0.5));
  os.str("");
  SimProgress done = at_step(1, 2, 1.0);
  done.done = true;
  print(done);  // step 1 of 2 ends: the run goes on, the line stays
  EXPECT_EQ(os.str(), "");
  now = 1.0;
  print(at_step(2, 2, 0.5, "decode[1]"));
  os.str("");
  done = at_step(2, 2, 1.0);
  done.done = true;
  print(done);
  EXPECT_EQ(os.str(), "\r\033[K");
}

TEST(ProgressLine, JoinStepsBeyondThePlanAndRunsWithoutSteps) {
  std::ostringstream os;
  double now = 0.0;
  auto print = report::progress_printer(os, [&] { return now; });
  print(at_step(5, 4, 0.3, "join.reduce_prefill"));
  EXPECT_EQ(os.str(), "\r\033[Kstep 5 join.reduce_prefill | 1.5 us simulated | joining");
  os.str("");
  now = 1.0;
  print(at_step(0, 0, 0.37));  // a simulation outside a run of steps: the phase and its work
  EXPECT_EQ(os.str(), "\r\033[Kphase decode | 1.5 us simulated | 37% of planned work");
}

TEST(ProgressLine, ReadableTimes) {
  EXPECT_EQ(report::time_text(812), "812 ns");
  EXPECT_EQ(report::time_text(45200), "45.2 us");
  EXPECT_EQ(report::time_text(2.17243e+06), "2.17 ms");
  EXPECT_EQ(report::time_text(2.55223e+07), "25.5 ms");
  EXPECT_EQ(report::time_text(1.49e9), "1.49 s");
  EXPECT_EQ(report::time_text(999.7), "1.00 us");  // the unit after rounding
  EXPECT_EQ(report::time_text(0), "0 ns");
  EXPECT_EQ(report::time_text(1.52e12), "1520 s");
  EXPECT_EQ(report::duration_text(65), "1 min 05 s");
}

TEST(ProgressLine, CountedLineWithEtaThrottledAndCleared) {
  std::ostringstream os;
  double now = 0.0;
  {
    report::ProgressLine line(os, report::Verbosity::info, true, [&] { return now; });
    line.update(0, 10, "serve: 0/10 workflows");
    EXPECT_EQ(os.str(), "\r\033[Kserve: 0/10 workflows | 0%");  // no ETA before anything is done
    os.str("");
    now = 0.1;  // within 0.2 s: nothing
    EXPECT_FALSE(line.due(1, 10));
    line.update(1, 10, "serve: 1/10 workflows");
    EXPECT_EQ(os.str(), "");
    now = 20.0;  // 4 of 10 in 20 s: 30 s to go
    EXPECT_TRUE(line.due(4, 10));
    line.update(4, 10, "serve: 4/10 workflows");
    EXPECT_EQ(os.str(), "\r\033[Kserve: 4/10 workflows | 40% | ETA 30 s");
    os.str("");
    line.note("a line of its own");
    EXPECT_EQ(os.str(), "\r\033[Ka line of its own\n");
    os.str("");
  }  // the last copy gone: the line is cleared (nothing shown since the note: nothing)
  EXPECT_EQ(os.str(), "");
  {
    report::ProgressLine line(os, report::Verbosity::info, true, [&] { return now; });
    line.update(1, 2, "x");
    os.str("");
  }
  EXPECT_EQ(os.str(), "\r\033[K");
}

TEST(ProgressLine, QuietPrintsNothingAndVerboseLinesWithoutATerminal) {
  std::ostringstream os;
  double now = 0.0;
  const report::ProgressLine quiet(os, report::Verbosity::quiet, true, [&] { return now; });
  EXPECT_FALSE(quiet.active());
  const report::ProgressLine pipe(os, report::Verbosity::info, false, [&] { return now; });
  EXPECT_FALSE(pipe.active());  // not a terminal: nothing unless -v
  report::ProgressLine verbose(os, report::Verbosity::debug, false, [&] { return now; });
  for (int i = 0; i <= 3; ++i) {
    now = i;
    verbose.update(i, 3, "point " + std::to_string(i) + "/3");
  }
  EXPECT_EQ(os.str(), "point 1/3 | 33% | 1 s elapsed\npoint 2/3 | 67% | 2 s elapsed\npoint 3/3 | 100% | 3 s elapsed\n");
  os.str("");
  report::ProgressLine many(os, report::Verbosity::debug, false, [&] { return now; });
  for (int i = 0; i <= 1000; ++i) many.update(i, 1000, "w");
  const std::string lines = os.str();
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 10);  // one per tenth
}

}  // namespace
}  // namespace ahbm
