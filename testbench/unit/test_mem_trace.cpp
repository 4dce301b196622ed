// Issue 44 item 3 (b, c): hbm-bench's memory-trace replay (DRAMSys STL, Ramulator memory trace) and
// the DRAMPower command trace it writes (hw/bench/mem_trace.h, docs/hbm.md).
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>

#include "hw/bench/hbm_bench.h"
#include "hw/bench/mem_trace.h"
#include "hw/common/base/error.h"

namespace ahbm::hbm {
namespace {

constexpr uint64_t kCap = uint64_t(1) << 29;

std::vector<MemTraceRequest> parse(const std::string& text, const std::string& format, uint64_t cap = kCap) {
  std::istringstream in(text);
  return parse_mem_trace(in, "t.trace", format, cap, 32);
}

std::string error(const std::string& text, const std::string& format) {
  try {
    parse(text, format);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(MemTrace, ReadsDramsysStlLines) {
  const auto q = parse("# comment\n\n31: read 0x400140\n33: read 0x400160\n56: write 0x7fff8000 0x123456789abcdef\n"
                       "81: (128) read 0x400180\n",
                       "dramsys", uint64_t(1) << 32);
  ASSERT_EQ(q.size(), 4u);
  EXPECT_EQ(q[0].cycle, 31);
  EXPECT_EQ(q[0].addr, 0x400140u);
  EXPECT_EQ(q[0].bytes, 32u);
  EXPECT_FALSE(q[0].write);
  EXPECT_EQ(q[0].line, 3);
  EXPECT_TRUE(q[2].write);
  EXPECT_EQ(q[2].addr, 0x7fff8000u);
  EXPECT_EQ(q[3].bytes, 128u);
  EXPECT_EQ(q[3].cycle, 81);
}

TEST(MemTrace, ReadsRamulatorMemoryAndCpuTraceLines) {
  const auto q = parse("0x12345680 R\n0x4cbd56c0 W\n3 4096\n5 8192 12288\n", "ramulator", uint64_t(1) << 32);
  ASSERT_EQ(q.size(), 5u);
  EXPECT_EQ(q[0].addr, 0x12345680u);
  EXPECT_EQ(q[0].cycle, -1);
  EXPECT_TRUE(q[1].write);
  EXPECT_EQ(q[2].addr, 4096u);  // CPU trace: decimal, a read ...
  EXPECT_FALSE(q[2].write);
  EXPECT_EQ(q[3].addr, 8192u);
  EXPECT_FALSE(q[3].write);
  EXPECT_EQ(q[4].addr, 12288u);  // ... and its writeback
  EXPECT_TRUE(q[4].write);
}

TEST(MemTrace, BadLinesNameTheFileLineAndText) {
  EXPECT_NE(error("0: read 0x0\n5: fetch 0x40\n", "dramsys").find("t.trace: line 2: \"5: fetch 0x40\": expected read or write"),
            std::string::npos);
  EXPECT_NE(error("10: read 0x0\n5: read 0x40\n", "dramsys").find("line 2: \"5: read 0x40\": cycle 5 is earlier"),
            std::string::npos);
  EXPECT_NE(error("read 0x0\n", "dramsys").find("line 1: \"read 0x0\": expected \"<cycle>:"), std::string::npos);
  EXPECT_NE(error("0: (0) read 0x0\n", "dramsys").find("length \"(0)\" must be (N)"), std::string::npos);
  EXPECT_NE(error("0: read 0xzz\n", "dramsys").find("address \"0xzz\" is not a hexadecimal number"), std::string::npos);
  EXPECT_NE(error("0x20000000 R\n", "ramulator").find("line 1: \"0x20000000 R\": address 0x20000000 is beyond"),
            std::string::npos);
  EXPECT_NE(error("0x0 X\n", "ramulator").find("expected \"<hex address> R|W\""), std::string::npos);
  EXPECT_NE(error("# only\n", "ramulator").find("t.trace: no requests"), std::string::npos);
  EXPECT_NE(error("0x0 R\n", "usimm").find("--trace-format usimm: allowed dramsys, ramulator"), std::string::npos);
}

// A trace of the sequential pattern's own chunks replays to the same run, number for number.
TEST(MemTrace, ReplayOfThePatternsChunksMatchesThePattern) {
  HbmBenchOptions o;
  o.chunk_bytes = 256;
  o.bytes = 64 * 1024;
  o.write_bytes = 64;
  o.write_every = 4096;
  const HbmBenchResult pattern = run_hbm_bench(o);
  std::string text;
  const uint64_t write_base = o.spec.org.bytes() / 2;
  uint64_t since = 0, written = 0;
  for (uint64_t a = 0; a < o.bytes; a += 256) {
    text += "0: (256) read 0x" + (std::stringstream() << std::hex << a).str() + "\n";
    if ((since += 256) >= 4096) {
      text += "0: (64) write 0x" + (std::stringstream() << std::hex << (write_base + written)).str() + "\n";
      written += 64;
      since = 0;
    }
  }
  HbmBenchOptions t = o;
  std::istringstream in(text);
  t.trace = parse_mem_trace(in, "seq.stl", "dramsys", o.spec.org.bytes(), 32);
  t.trace_file = "seq.stl";
  t.trace_format = "dramsys";
  const HbmBenchResult replay = run_hbm_bench(t);
  EXPECT_EQ(replay.chunks, pattern.chunks);
  EXPECT_EQ(replay.bytes_read, pattern.bytes_read);
  EXPECT_EQ(replay.bytes_written, pattern.bytes_written);
  EXPECT_DOUBLE_EQ(replay.total_ns, pattern.total_ns);
  // Latency counts from the time stamp (0 for all here), so it takes in the wait for a place.
  EXPECT_GT(replay.chunk_ns_mean, pattern.chunk_ns_mean);
  EXPECT_EQ(replay.acts, pattern.acts);
  EXPECT_EQ(replay.to_json()["trace"]["requests"], t.trace.size());
  EXPECT_EQ(replay.to_json()["pattern"], "trace");
}

// Time stamps hold requests back: none starts before its cycle (of the trace clock).
TEST(MemTrace, TimeStampsAreIssueTimes) {
  HbmBenchOptions o;
  o.trace = parse("0: read 0x0\n8000: read 0x400000\n", "dramsys");
  o.trace_file = "t.stl";
  o.trace_format = "dramsys";
  o.inflight = 1024;
  const HbmBenchResult at_dram_clock = run_hbm_bench(o);
  EXPECT_GE(at_dram_clock.total_ns, 8000 * o.spec.t.tck_ns);
  EXPECT_LT(at_dram_clock.total_ns, 8000 * o.spec.t.tck_ns + 200);
  o.trace_clock_mhz = 200;  // 5 ns a cycle: the second read at 40 us
  const HbmBenchResult slow = run_hbm_bench(o);
  EXPECT_GE(slow.total_ns, 40000.0);
  EXPECT_LT(slow.total_ns, 40000.0 + 200);
  // Latency is measured from the time stamp: both reads find the channel idle.
  EXPECT_LT(slow.chunk_ns_mean, 200.0);
  // Back to back (Ramulator: no stamps) the same two reads take a fraction of that.
  HbmBenchOptions r = o;
  r.trace = parse("0x0 R\n0x400000 R\n", "ramulator");
  r.trace_format = "ramulator";
  EXPECT_LT(run_hbm_bench(r).total_ns, 200.0);
}

// The command trace: DRAMPower's "<cycle>,<command>,<bank>" lines, in time order, each command
// legal in its bank's state, and as many of each as the run's statistics count.
TEST(MemTrace, CommandTraceIsWellFormedOrderedAndMatchesTheCounts) {
  HbmBenchOptions o;
  o.trace = parse("0: read 0x0\n0: (1024) read 0x400000\n10: write 0x800000\n12000: (512) read 0x20\n"
                  "12004: write 0x400040\n30000: read 0xc00000\n",
                  "dramsys");
  o.trace_file = "t.stl";
  o.trace_format = "dramsys";
  o.keep_commands = true;
  const HbmBenchResult r = run_hbm_bench(o);
  std::ostringstream os;
  write_drampower_commands(os, r.commands);
  const std::regex line_re("^([0-9]+),(ACT|PRE|RD|WR|REF|REFB),([0-9]+)$");
  std::map<std::string, uint64_t> count;
  std::vector<int64_t> open(size_t(o.spec.org.banks()), -1);  // a bank's state: open (1) or closed (-1)
  int64_t last = -1;
  int lines = 0;
  std::istringstream in(os.str());
  for (std::string line; std::getline(in, line); ++lines) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, line_re)) << "line " << lines + 1 << ": " << line;
    const int64_t cycle = std::stoll(m[1]);
    const std::string cmd = m[2];
    const size_t bank = std::stoul(m[3]);
    ASSERT_LT(bank, open.size()) << line;
    EXPECT_GE(cycle, last) << line;
    last = cycle;
    ++count[cmd];
    if (cmd == "ACT") {
      EXPECT_EQ(open[bank], -1) << "ACT to an open bank: " << line;
      open[bank] = 1;
    } else if (cmd == "PRE") {
      EXPECT_EQ(open[bank], 1) << "PRE to a closed bank: " << line;
      open[bank] = -1;
    } else if (cmd == "RD" || cmd == "WR") {
      EXPECT_EQ(open[bank], 1) << cmd << " to a closed bank: " << line;
    } else if (cmd == "REF") {
      EXPECT_EQ(bank, 0u);
      for (int64_t s : open) EXPECT_EQ(s, -1) << "REF with a bank open: " << line;
    } else {
      EXPECT_EQ(open[bank], -1) << "REFB to an open bank: " << line;
    }
  }
  EXPECT_EQ(size_t(lines), r.commands.size());
  EXPECT_EQ(count["ACT"], r.acts);
  EXPECT_EQ(count["REF"] + count["REFB"], r.refreshes);
  EXPECT_GT(r.refreshes, 0u);  // the trace spans several refresh intervals
  EXPECT_EQ(count["RD"] * 32, r.bytes_read);
  EXPECT_EQ(count["WR"] * 32, r.bytes_written);
  EXPECT_GT(count["WR"], 0u);
  // The command log is one pseudo-channel's: more are refused.
  o.pseudo_channels = 2;
  EXPECT_THROW(run_hbm_bench(o), InputError);
}

}  // namespace
}  // namespace ahbm::hbm
