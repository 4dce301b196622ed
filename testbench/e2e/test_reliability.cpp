// Reliability: the stall watchdog on deliberate deadlocks and livelocks, the NaN guard, the
// numeric check of `run --check`, all-or-nothing run directories, and byte-identical outputs
// for identical inputs. Faults come from the hardware config's "fault_injection" section
// (hw/common/config/fault_injection.h); every run goes through the CLI binary (AHBM_CLI). In-process
// parts: integration/test_watchdog_slicing.cpp (windowed runs), unit/test_watchdog_guard.cpp
// (wait report, numeric guard).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "hw/common/base/json_reader.h"
#include "test_reliability_support.h"

using namespace ahbm;
using namespace ahbm::test;

namespace {

const std::string kTrace = source_path("traces/fanout_8x20.json");

// 160 rows in 16-row Q tiles (10 tiles) through a Q buffer that holds two of them, so credits
// matter: a leaked credit stops the multicast after two tiles.
const char* kTightQBuffer = R"("q_tile_rows": 16, "cube": {"q_buffer": {"bytes": 16384}})";

std::string hw_with(const std::string& extra) { return std::string("{") + kTightQBuffer + extra + "}"; }

double stalled_at_ns(const std::string& err) {
  const std::string key = "stalled at ";
  const size_t at = err.find(key);
  return at == std::string::npos ? -1.0 : std::stod(err.substr(at + key.size()));
}

Json summary_of(const fs::path& dir) { return Json::parse(read_file(dir / "summary.json")); }

TEST(Watchdog, LeakedQBufferCreditIsReportedAsDeadlock) {
  ScratchDir dir;
  write_file(dir / "ok.json", hw_with(""));
  write_file(dir / "leak.json", hw_with(R"(, "fault_injection": {"leak_q_credit_cube": 1})"));
  const CliResult ok = run_cli("run " + quote(kTrace) + " --no-values --hw " + quote(dir / "ok.json") + " --out " +
                                   quote(dir / "ok"), dir.path());
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  const double normal_end = summary_of(dir / "ok")["total_ns"].get<double>();

  const CliResult r = run_cli("run " + quote(kTrace) + " --no-values --hw " + quote(dir / "leak.json") + " --out " +
                                  quote(dir / "out"), dir.path());
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("deadlock: no event is pending"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("2 of 10 Q tiles returned"), std::string::npos) << r.err;
  // Who waits on what: the full buffer, the multicast waiting for its credit, the PEs waiting
  // for the tile that never comes, the host waiting for its O tiles.
  EXPECT_NE(r.err.find("group0.cube1.q_buffer: 16384 of 16384 bytes in use"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("a reservation of 8192 bytes waits for space"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("q_source: waits for Q-buffer credit"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("group0.cube3.pe7"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("compute waits for its Q tile in the CUBE Q buffer (tile 2)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("host: waits for O of 8 of 10 Q tiles (tiles 2-9)"), std::string::npos) << r.err;
  // Detected when the last event ran, before a healthy run would even have finished.
  const double t = stalled_at_ns(r.err);
  EXPECT_GT(t, 0);
  EXPECT_LT(t, normal_end);
  EXPECT_FALSE(fs::exists(dir / "out"));
}

namespace {

// The credit leak with the --watchdog-ns `window`: a deadlock (exit 4 at its last event), and
// with polling a livelock reported after the last progress, within `within_ns` of that event.
void expect_credit_stalls(const std::string& window, double within_ns) {
  ScratchDir dir;
  write_file(dir / "leak.json", hw_with(R"(, "fault_injection": {"leak_q_credit_cube": 1})"));
  write_file(dir / "poll.json", hw_with(R"(, "fault_injection": {"leak_q_credit_cube": 1, "poll_q_credit": true})"));
  const std::string common = "run " + quote(kTrace) + " --no-values --watchdog-ns " + window + " --out " + quote(dir / "out");
  const CliResult dead = run_cli(common + " --hw " + quote(dir / "leak.json"), dir.path());
  ASSERT_EQ(dead.exit_code, 4) << dead.err;
  EXPECT_NE(dead.err.find("deadlock: no event is pending"), std::string::npos) << dead.err;
  const double last_progress = stalled_at_ns(dead.err);  // the deadlock stops at the last event
  EXPECT_GT(last_progress, 0);

  const CliResult r = run_cli(common + " --hw " + quote(dir / "poll.json"), dir.path());
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("livelock: processes kept running for " + window + " ns of simulated time without progress"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("group0.cube1.q_buffer"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("q_source: waits for Q-buffer credit"), std::string::npos) << r.err;
  const double t = stalled_at_ns(r.err);
  EXPECT_GT(t, last_progress);
  EXPECT_LE(t, last_progress + within_ns);
  EXPECT_FALSE(fs::exists(dir / "out"));
}

}  // namespace

TEST(Watchdog, PollingCreditLivelockIsCaughtWithinTwoWindows) { expect_credit_stalls("100000", 2 * 100000.0); }

// Issue 21: slow in-range hardware, or a window shorter than the first span, was reported as a
// livelock "at 0.000 ns". A wait for a scheduled event is never a stall, however short the
// window; the result does not depend on the window.
TEST(Watchdog, SlowHardwareWithAShortWindowRunsToCompletion) {
  ScratchDir dir;
  const std::string common = "run " + quote(kTrace) + " --no-values --no-vcd --set pe.hbm.bandwidth_gbps=0.001";
  const CliResult r = run_cli(common + " --watchdog-ns 100 --out " + quote(dir / "short"), dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const CliResult ref = run_cli(common + " --out " + quote(dir / "default"), dir.path());
  ASSERT_EQ(ref.exit_code, 0) << ref.err;
  const double total = summary_of(dir / "short")["total_ns"].get<double>();
  EXPECT_EQ(total, summary_of(dir / "default")["total_ns"].get<double>());
  // 8192 prefix tokens of 128 fp32 K and V rows on 32 PEs at 1 MB/s: at least 2.6e8 ns of DMA,
  // millions of 100 ns windows, each far shorter than one KV burst.
  EXPECT_GT(total, 2.0 * 8192 / 32 * 128 * 4 / 0.001);
}

// A window after the last progress, then kLivelockWakeups (1000) polls one 1 ns cycle apart.
TEST(Watchdog, InjectedStallsAreCaughtWithAShortWindowToo) { expect_credit_stalls("100", 100 + 1001.0); }

// Issue 21: with slow in-range hardware SystemC time saturated at 2^63 ps and a plausible
// 9.22e15 ns came out with exit 0 (on 4 PEs: bad-input case hw.too_slow_for_simulated_time,
// now refused before the run). On 32 PEs each step is in range (the fan-out 4.47e15 ns, just
// below 2^62 ps) but the 9 steps together pass 2^62 ps: the chip is replaced once its clock
// passed 2^61 ps, every step is simulated in full, and equal decode steps take equal times.
TEST(TimeRange, StepsLongerInTotalThanTheRangeRunInFull) {
  ScratchDir dir;
  const CliResult r = run_cli("run " + quote(source_path("traces/long_prefix_32k.json")) +
                                  " --no-values --no-vcd --set clock_ghz=0.01 --set pe.gemm.issue_interval=1048576"
                                  " --set pe.gemm.tile_m=1 --set pe.gemm.tile_n=1 --set pe.gemm.tile_k=1 --out " +
                                  quote(dir / "out"),
                              dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json summary = summary_of(dir / "out");
  const Json& steps = summary["steps"];
  ASSERT_EQ(steps.size(), 9u);
  // The fan-out: 160 rows x 1024 tokens x 128 per PE, Q K^T and P V, in 1x1x1 engine tiles of
  // 2^20 cycles at 100 ns: at least 4.398e15 ns.
  const double fanout = steps[0]["ns"].get<double>();
  EXPECT_GT(fanout, 2.0 * 160 * 1024 * 128 * 1048576 * 100);
  EXPECT_LT(fanout, 4611686018427387.904);
  double total = 0;
  for (const auto& st : steps) total += st["ns"].get<double>();
  EXPECT_GT(total, 4611686018427387.904);
  EXPECT_NEAR(summary["total_ns"].get<double>(), total, total * 1e-12);
  for (size_t i = 2; i < steps.size(); ++i)
    EXPECT_EQ(steps[i]["ns"].get<double>(), steps[1]["ns"].get<double>()) << steps[i]["label"];
}

TEST(Watchdog, ReductionWaitingForSilentCubeIsReported) {
  ScratchDir dir;
  write_file(dir / "drop.json", R"({"q_tile_rows": 16, "fault_injection": {"drop_state_cube": 2}})");
  const CliResult r = run_cli("run " + quote(kTrace) + " --hw " + quote(dir / "drop.json") + " --out " +
                                  quote(dir / "out"), dir.path());
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("0 of 10 Q tiles returned"), std::string::npos) << r.err;
  // Tree reduction over 4 CUBEs: 1 -> 0, 3 -> 2, 2 -> 0. CUBE 2 never passes its state on.
  EXPECT_NE(r.err.find("group0.reduction: CUBE 0 waits for the state of CUBE 2 for tiles 0-9"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("group0.cube2.reducer: 10 merged states withheld"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(NumericGuard, NanInPeStateIsReportedWhereItAppeared) {
  ScratchDir dir;
  // PE 13 of the group = CUBE 1, local PE 5.
  write_file(dir / "nan.json", R"({"fault_injection": {"nan_state_pe": 13}})");
  const CliResult r = run_cli("run " + quote(kTrace) + " --hw " + quote(dir / "nan.json") + " --out " +
                                  quote(dir / "out"), dir.path());
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("non-finite value in the datapath: NaN in o at row 0, column 0 of tile 0 in group0.cube1.pe5"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(Check, PerturbedOutputFailsCheckWithExitThree) {
  ScratchDir dir;
  write_file(dir / "perturb.json", R"({"fault_injection": {"perturb_output": 0.01}})");
  const std::string base = "run " + quote(kTrace) + " --no-vcd ";
  const CliResult clean = run_cli(base + "--check --out " + quote(dir / "clean"), dir.path());
  EXPECT_EQ(clean.exit_code, 0) << clean.err;

  const CliResult bad = run_cli(base + "--check --hw " + quote(dir / "perturb.json") + " --out " + quote(dir / "bad"),
                                dir.path());
  EXPECT_EQ(bad.exit_code, 3) << bad.err;
  const Json s = summary_of(dir / "bad");  // the run is still written, for inspection
  EXPECT_FALSE(s["numerics"]["pass"].get<bool>());
  EXPECT_NEAR(s["numerics"]["max_abs_err"].get<double>(), 0.01, 1e-4);
  EXPECT_EQ(s["config"]["hw"]["fault_injection"]["perturb_output"].get<double>(), 0.01);

  // Without --check the same wrong result is reported but does not fail the run.
  const CliResult unchecked = run_cli(base + "--hw " + quote(dir / "perturb.json") + " --out " + quote(dir / "bad2"),
                                      dir.path());
  EXPECT_EQ(unchecked.exit_code, 0) << unchecked.err;
  EXPECT_NE(unchecked.out.find("FAIL"), std::string::npos) << unchecked.out;
}

TEST(Determinism, SameInputsAndSeedGiveByteIdenticalOutputs) {
  ScratchDir dir;
  const std::string base = "run " + quote(kTrace) + " --dump-tensors --seed 7 --out ";
  ASSERT_EQ(run_cli(base + quote(dir / "a"), dir.path()).exit_code, 0);
  ASSERT_EQ(run_cli(base + quote(dir / "b"), dir.path()).exit_code, 0);
  const std::vector<std::string> files = files_under(dir.path() / "a");
  EXPECT_EQ(files, files_under(dir.path() / "b"));
  for (const char* must : {"summary.json", "latency.csv", "waves.vcd", "tensors/o.npy"})
    EXPECT_NE(std::find(files.begin(), files.end(), must), files.end()) << must;
  for (const auto& f : files)  // trace.json and any later output are covered the same way
    EXPECT_TRUE(read_file(dir.path() / "a" / f) == read_file(dir.path() / "b" / f)) << f << " differs";

  // The comparison can tell runs apart: another seed changes the tensors (not the timing).
  ASSERT_EQ(run_cli("run " + quote(kTrace) + " --dump-tensors --seed 8 --out " + quote(dir / "c"), dir.path()).exit_code,
            0);
  EXPECT_NE(read_file(dir.path() / "a/tensors/q.npy"), read_file(dir.path() / "c/tensors/q.npy"));
  EXPECT_EQ(summary_of(dir.path() / "a")["total_ns"], summary_of(dir.path() / "c")["total_ns"]);
}

TEST(RunDir, FailureWhileWritingLeavesNoHalfWrittenDirectory) {
  ScratchDir dir;
  const std::string run = "run " + quote(kTrace) + " --seed 3 --out " + quote(dir / "out");
  ASSERT_EQ(run_cli(run, dir.path()).exit_code, 0);
  const std::vector<std::string> files = files_under(dir.path() / "out");
  uintmax_t largest = 0;
  std::map<std::string, std::string> before;
  for (const auto& f : files) {
    largest = std::max(largest, fs::file_size(dir.path() / "out" / f));
    before[f] = read_file(dir.path() / "out" / f);
  }
  // A file-size limit below the largest output makes a write fail part-way through the run
  // directory (EFBIG with SIGXFSZ ignored). /bin/sh counts ulimit -f in 512-byte blocks.
  const std::string limit = "trap '' XFSZ; ulimit -f " + std::to_string(largest / 2 / 512) + ";";
  const CliResult failed = run_cli("run " + quote(kTrace) + " --seed 4 --out " + quote(dir / "out"), dir.path(), limit);
  EXPECT_EQ(failed.exit_code, 1) << failed.err;
  EXPECT_NE(failed.err.find("cannot write"), std::string::npos) << failed.err;
  // The previous run is intact, byte for byte, and no temporary directory is left behind.
  EXPECT_EQ(files_under(dir.path() / "out"), files);
  for (const auto& [f, text] : before) EXPECT_TRUE(read_file(dir.path() / "out" / f) == text) << f;
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().filename().string().find(".out.tmp"), std::string::npos) << e.path();

  // The same failure into a new directory creates nothing.
  const CliResult fresh = run_cli("run " + quote(kTrace) + " --out " + quote(dir / "new"), dir.path(), limit);
  EXPECT_EQ(fresh.exit_code, 1) << fresh.err;
  EXPECT_FALSE(fs::exists(dir / "new"));

  // Killed mid-write (SIGXFSZ not ignored): the target still never holds a partial run.
  const CliResult killed =
      run_cli("run " + quote(kTrace) + " --out " + quote(dir / "killed"), dir.path(),
              "ulimit -f " + std::to_string(largest / 2 / 512) + ";");
  EXPECT_NE(killed.exit_code, 0);
  EXPECT_FALSE(fs::exists(dir / "killed"));

  // And a healthy rerun replaces the previous run as a whole.
  ASSERT_EQ(run_cli("run " + quote(kTrace) + " --seed 4 --out " + quote(dir / "out"), dir.path()).exit_code, 0);
  EXPECT_EQ(summary_of(dir.path() / "out")["seed"].get<int>(), 4);
}

}  // namespace
