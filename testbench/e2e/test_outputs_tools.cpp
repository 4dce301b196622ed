// The Python tools on real runs: tools/plot (PNG sizes) and tools/sweep (local grid, failures,
// re-runs, a Slurm array task run by hand; testbench/e2e/sweep_slurm_test.py uses a real cluster).
// Run with /usr/bin/python3 (Debian numpy/matplotlib).
#include <gtest/gtest.h>

#include <cstdint>
#include <regex>
#include <set>
#include <vector>

#include "test_outputs_common.h"

using namespace ahbm;
using ahbm::test::ScratchDir;
using ahbm::test::read_file;

namespace {

const std::string kRoot = AHBM_SOURCE_DIR;

int sh(const std::string& cmd) {
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// Width and height from a PNG's IHDR chunk (bytes 16..23, big endian).
std::pair<uint32_t, uint32_t> png_size(const std::string& path) {
  const std::string b = read_file(path);
  if (b.size() < 24 || b.compare(1, 3, "PNG") != 0) return {0, 0};
  auto be = [&](size_t o) {
    return uint32_t(uint8_t(b[o])) << 24 | uint32_t(uint8_t(b[o + 1])) << 16 | uint32_t(uint8_t(b[o + 2])) << 8 |
           uint32_t(uint8_t(b[o + 3]));
  };
  return {be(16), be(20)};
}

std::vector<std::vector<std::string>> read_csv(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(read_file(path));
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::string cell;
    bool quoted = false;
    for (char c : line) {
      if (c == '"') quoted = !quoted;
      else if (c == ',' && !quoted) cells.push_back(cell), cell.clear();
      else cell += c;
    }
    cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

size_t column(const std::vector<std::string>& header, const std::string& name) {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return i;
  ADD_FAILURE() << "no column " << name;
  return 0;
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

const char* kGrid = R"({"scenario": "traces/fanout_8x20.json",
  "parameters": {"scenario.shared_prefix_tokens": [1024, 4096], "hw.pe.dma.buffers": [2, 3]},
  "run_args": ["--no-vcd"]})";

std::string sweep_cmd(const std::string& args) {
  return "cd " + kRoot + " && /usr/bin/python3 tools/sweep " + args + " --cli " + AHBM_CLI;
}

// Sweeps s/grid.json into s/out with 2 workers; the rows of results.csv (header first), or none
// when the sweep failed (its log then in the failure message).
std::vector<std::vector<std::string>> sweep_rows(const ScratchDir& s) {
  const int rc = sh(sweep_cmd(s.path("grid.json") + " --out " + s.path("out") + " -j 2 >" + s.path("log") + " 2>&1"));
  EXPECT_EQ(rc, 0) << read_file(s.path("log"));
  return rc == 0 ? read_csv(s.path("out/results.csv")) : std::vector<std::vector<std::string>>{};
}

}  // namespace

TEST(OutputsTools, PlotMakesRunPngsOfTheExpectedSize) {
  ScratchDir s("plot");
  test::default_run(s.path("run"));
  ASSERT_EQ(sh("/usr/bin/python3 " + kRoot + "/tools/plot " + s.path("run") + " --out " + s.path("png") + " >" +
               s.path("log") + " 2>&1"), 0) << read_file(s.path("log"));
  // Minimum sizes; the Gantt chart and utilisation grow by 12 px per row beyond them (71 Gantt
  // rows: 32 PEs, their DMAs, 4 reducers, 3 links; 120 px of margins), so labels never overprint.
  const std::vector<std::tuple<std::string, uint32_t, uint32_t>> expected = {
      {"latency_breakdown.png", 1200, 600}, {"pe_gantt.png", 1400, 71 * 12 + 120}, {"utilisation.png", 1200, 900}};
  for (const auto& [name, w, h] : expected) {
    const auto [width, height] = png_size(s.path("png/" + name));
    EXPECT_EQ(width, w) << name;
    EXPECT_GE(height, h) << name;
    EXPECT_GT(std::filesystem::file_size(s.path("png/" + name)), 10000u) << name << " has content";
  }
  EXPECT_TRUE(std::filesystem::exists(s.path("png/latency_breakdown.csv")));
}

TEST(OutputsTools, SweepRunsA2x2GridSkipsDonePointsAndPlotsCurves) {
  ScratchDir s("sweep");
  write(s.path("grid.json"), kGrid);
  const auto rows = sweep_rows(s);
  ASSERT_EQ(rows.size(), 5u) << "header + one row per point";
  const auto& h = rows[0];
  const size_t st = column(h, "status"), prefix = column(h, "scenario.shared_prefix_tokens"),
               bufs = column(h, "hw.pe.dma.buffers"), total = column(h, "total_ns");
  std::set<std::pair<std::string, std::string>> params;
  for (size_t r = 1; r < rows.size(); ++r) {
    EXPECT_EQ(rows[r][st], "ok");
    params.insert({rows[r][prefix], rows[r][bufs]});
  }
  EXPECT_EQ(params.size(), 4u) << "every combination once";
  // 4x the prefix is 4x the KV per PE: the run takes longer (grid order: prefix varies slowest).
  EXPECT_LT(std::stod(rows[1][total]), std::stod(rows[3][total]));

  ASSERT_EQ(sh(sweep_cmd(s.path("grid.json") + " --out " + s.path("out") + " >" + s.path("log2") + " 2>&1")), 0);
  EXPECT_NE(read_file(s.path("log2")).find("4 already done (skipped), running 0"), std::string::npos) << read_file(s.path("log2"));

  ASSERT_EQ(sh("/usr/bin/python3 " + kRoot + "/tools/plot --sweep " + s.path("out/results.csv") +
               " --x scenario.shared_prefix_tokens --out " + s.path("png") + " >" + s.path("log3") + " 2>&1"), 0)
      << read_file(s.path("log3"));
  EXPECT_EQ(png_size(s.path("png/sweep.png")), std::make_pair(1000u, 600u));
}

TEST(OutputsTools, SweepReportsFailedPoints) {
  ScratchDir s("sweepfail");
  // A scenario value the parser refuses fails its point (a verdict, kept with its row).
  write(s.path("grid.json"), R"({"scenario": "traces/fanout_8x20.json",
      "parameters": {"scenario.shared_prefix_tokens": [8192, -1]}, "run_args": ["--no-vcd"]})");
  EXPECT_EQ(sh(sweep_cmd(s.path("grid.json") + " --out " + s.path("out") + " >" + s.path("log") + " 2>&1")), 1);
  const auto rows = read_csv(s.path("out/results.csv"));
  ASSERT_EQ(rows.size(), 3u) << "the failed point keeps its row";
  const size_t st = column(rows[0], "status"), err = column(rows[0], "error");
  EXPECT_EQ(rows[1][st], "ok");
  EXPECT_EQ(rows[2][st], "failed");
  EXPECT_NE(rows[2][err].find("shared_prefix_tokens"), std::string::npos) << rows[2][err];
  EXPECT_NE(read_file(s.path("log")).find("p0001 failed"), std::string::npos);
  // A hardware value reaches ahbm-sim as --set, checked by `ahbm-sim hw-config` before any point
  // runs: exit 2 with its message, nothing written.
  write(s.path("hwgrid.json"), R"({"scenario": "traces/fanout_8x20.json",
      "parameters": {"hw.pe.dma.buffers": [2, 0]}, "run_args": ["--no-vcd"]})");
  EXPECT_EQ(sh(sweep_cmd(s.path("hwgrid.json") + " --out " + s.path("hwout") + " >" + s.path("hwlog") + " 2>&1")), 2);
  EXPECT_NE(read_file(s.path("hwlog")).find("pe.dma.buffers: value 0 is out of range (allowed: [1, 8])"), std::string::npos)
      << read_file(s.path("hwlog"));
  EXPECT_FALSE(std::filesystem::exists(s.path("hwout")));
}

TEST(OutputsTools, SlurmScriptTaskRunsItsChunkOfPoints) {
  ScratchDir s("slurm");
  write(s.path("grid.json"), kGrid);
  ASSERT_EQ(sh(sweep_cmd(s.path("grid.json") + " --out " + s.path("out") +
                         " --executor slurm --script-only --points-per-task 2 --time=00:10:00 >" + s.path("log") +
                         " 2>&1")), 0) << read_file(s.path("log"));
  const std::string script = s.path("out/slurm/r01/sweep.sbatch");
  EXPECT_EQ(sh("bash -n " + script), 0);
  const std::string text = read_file(script);
  EXPECT_NE(text.find("#SBATCH --array=0-1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("#SBATCH --time=00:10:00\n"), std::string::npos);
  EXPECT_EQ(read_file(s.path("out/slurm/r01/tasks.json")),
            "[\n  [\n    \"p0000\",\n    \"p0001\"\n  ],\n  [\n    \"p0002\",\n    \"p0003\"\n  ]\n]\n");
  // Array task 1, run the way Slurm would, completes its two points and no other.
  ASSERT_EQ(sh("SLURM_ARRAY_TASK_ID=1 bash " + script + " >" + s.path("task.log") + " 2>&1"), 0) << read_file(s.path("task.log"));
  EXPECT_TRUE(std::filesystem::exists(s.path("out/points/p0002/run/summary.json")));
  EXPECT_TRUE(std::filesystem::exists(s.path("out/points/p0003/run/summary.json")));
  EXPECT_FALSE(std::filesystem::exists(s.path("out/points/p0001/run/summary.json")));
}

// A serve workload as the grid's base: two arrival rates of a small agentic workload, each point
// an `ahbm-sim serve`; then the plots of one serve run and of the rate sweep.
TEST(OutputsTools, ServeRateSweepAndServePlots) {
  ScratchDir s("servesweep");
  // "scenario" is relative: not next to this workload, so it resolves from the working directory
  // (the repository, as serve would) and must still resolve from each point's directory.
  write(s.path("workload.json"), R"({"name": "tiny_agentic", "scenario": "traces/serve/small_attn.json", "seed": 3,
      "arrival": {"process": "poisson", "rate_per_s": 1000, "count": 6},
      "templates": [{"name": "t", "prompt_tokens": 256, "rounds": 1,
                     "fanout": {"branches": 2, "new_tokens": 16, "decode_tokens": 4},
                     "join": {"tokens": 16}, "answer_tokens": 4}],
      "scheduler": {"policy": "fcfs"}})");
  // 100/s: arrivals 10 ms apart on a chip that serves one in well under that (idle between them);
  // 1e7/s: all at once (the chip never idles).
  write(s.path("grid.json"), R"({"workload": "workload.json",
      "parameters": {"workload.arrival.rate_per_s": [100, 10000000]}})");
  const auto rows = sweep_rows(s);
  ASSERT_EQ(rows.size(), 3u) << "header + one row per point";
  const auto& h = rows[0];
  const size_t st = column(h, "status"), rate = column(h, "workload.arrival.rate_per_s"),
               tput = column(h, "throughput.tokens_per_s"), busy = column(h, "steps.chip_busy_fraction"),
               generated = column(h, "requests.tokens_generated");
  for (const auto& c : h) EXPECT_NE(c.rfind("hw.", 0), 0u) << "the echoed hw config is left out: " << c;
  ASSERT_EQ(rows[1][st], "ok");
  ASSERT_EQ(rows[2][st], "ok");
  EXPECT_EQ(rows[1][rate], "100");
  EXPECT_EQ(rows[1][generated], rows[2][generated]) << "the same requests at either rate";
  // Throughput rises with the arrival rate (or stays at saturation), and so does the chip's load.
  EXPECT_LE(std::stod(rows[1][tput]), std::stod(rows[2][tput]));
  EXPECT_LT(std::stod(rows[1][busy]), std::stod(rows[2][busy]));
  EXPECT_LE(std::stod(rows[2][busy]), 1.0 + 1e-9);

  ASSERT_EQ(sh("/usr/bin/python3 " + kRoot + "/tools/plot " + s.path("out/points/p0001/run") + " --out " +
               s.path("png") + " >" + s.path("log2") + " 2>&1"), 0) << read_file(s.path("log2"));
  ASSERT_EQ(sh("/usr/bin/python3 " + kRoot + "/tools/plot --sweep " + s.path("out/results.csv") + " --out " +
               s.path("png") + " >" + s.path("log3") + " 2>&1"), 0) << read_file(s.path("log3"));
  const std::vector<std::tuple<std::string, uint32_t, uint32_t>> expected = {
      {"serve_timeline.png", 1400, 900}, {"serve_latency_cdf.png", 1200, 500}, {"serve_sweep.png", 1600, 600}};
  for (const auto& [name, w, hgt] : expected) {
    EXPECT_EQ(png_size(s.path("png/" + name)), std::make_pair(w, hgt)) << name;
    EXPECT_GT(std::filesystem::file_size(s.path("png/" + name)), 10000u) << name << " has content";
  }
}
