// The default scenario end to end through the CLI: O against float64 (both the summary's own
// check and one recomputed here from the dumped tensors), the VCD's hierarchy, vcd2fst
// accepting it, the trace's schema, and byte-identical reruns.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "test_support.h"

using namespace ahbm;
using Json = nlohmann::json;

namespace {

// Minimal .npy reader for the 2-D float32 / bool arrays ahbm-sim writes.
struct Npy {
  std::string descr;
  size_t rows = 0, cols = 0;
  std::string data;
};
Npy read_npy(const std::string& path) {
  const std::string raw = test::read_file(path);
  Npy n;
  if (raw.size() < 10 || raw.compare(0, 6, "\x93NUMPY") != 0) return n;
  const size_t hlen = size_t(uint8_t(raw[8])) | (size_t(uint8_t(raw[9])) << 8);
  const std::string header = raw.substr(10, hlen);
  std::smatch m;
  if (std::regex_search(header, m, std::regex("'descr': '([^']+)'"))) n.descr = m[1];
  if (std::regex_search(header, m, std::regex("'shape': \\((\\d+), (\\d+)\\)"))) {
    n.rows = std::stoul(m[1]);
    n.cols = std::stoul(m[2]);
  }
  n.data = raw.substr(10 + hlen);
  return n;
}
float f32(const Npy& n, size_t r, size_t c) {
  float x;
  std::memcpy(&x, n.data.data() + 4 * (r * n.cols + c), 4);
  return x;
}

class DefaultScenario : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = test::temp_dir("default") + "/run";
    result_ = test::run_cli("run '" + test::source_path("traces/fanout_8x20.json") + "' --out '" + dir_ +
                            "' --dump-tensors");
  }
  static std::string dir_;
  static test::CliResult result_;
};
std::string DefaultScenario::dir_;
test::CliResult DefaultScenario::result_;

}  // namespace

TEST_F(DefaultScenario, RunsAndPassesItsNumericCheck) {
  ASSERT_EQ(result_.exit_code, 0) << result_.output;
  const Json s = Json::parse(test::read_file(dir_ + "/summary.json"));
  EXPECT_EQ(s["rows"], 160);
  EXPECT_GT(s["total_ns"].get<double>(), 0.0);
  EXPECT_LE(s["numerics"]["max_abs_err"].get<double>(), 1e-4);
  EXPECT_TRUE(s["numerics"]["pass"].get<bool>());
  EXPECT_EQ(s["config"]["hw"]["group"]["cubes"], 4);
  EXPECT_TRUE(s["busy_ns_by_component"].contains("group0.cube3.pe7"));
  EXPECT_TRUE(s["phases"].contains("fanout"));
  // The batching point of the note, as the summary reports it.
  EXPECT_DOUBLE_EQ(s["gemm_batching"]["batched"]["utilization"].get<double>(), 1.0);
  EXPECT_LT(s["gemm_batching"]["per_agent_runs"]["utilization"].get<double>(), 1.0);
  EXPECT_GT(s["gemm_batching"]["speedup"].get<double>(), 1.0);
}

TEST_F(DefaultScenario, DumpedTensorsReproduceOutputInFloat64) {
  ASSERT_EQ(result_.exit_code, 0) << result_.output;
  const Npy q = read_npy(dir_ + "/tensors/q.npy"), k = read_npy(dir_ + "/tensors/k.npy"),
            v = read_npy(dir_ + "/tensors/v.npy"), o = read_npy(dir_ + "/tensors/o.npy"),
            mask = read_npy(dir_ + "/tensors/mask.npy");
  EXPECT_EQ(q.descr, "<f4");
  EXPECT_EQ(mask.descr, "|b1");
  ASSERT_EQ(q.rows, 160u);
  ASSERT_EQ(q.cols, 128u);
  ASSERT_EQ(k.rows, 8192u + 160u);  // the shared prefix and each agent's own new tokens (private pages)
  ASSERT_EQ(mask.rows, 160u);
  ASSERT_EQ(mask.cols, 8192u + 160u);
  double worst = 0;
  const double scale = 1.0 / std::sqrt(128.0);
  for (size_t r = 0; r < q.rows; r += 7) {  // every 7th row keeps the test quick
    std::vector<double> s(k.rows);
    double mx = -INFINITY;
    for (size_t j = 0; j < k.rows; ++j) {
      double dot = 0;
      for (size_t i = 0; i < q.cols; ++i) dot += double(f32(q, r, i)) * f32(k, j, i);
      s[j] = mask.data[r * mask.cols + j] ? dot * scale : -INFINITY;
      mx = std::max(mx, s[j]);
    }
    double sum = 0;
    for (double& x : s) sum += (x = std::exp(x - mx));
    for (size_t i = 0; i < q.cols; ++i) {
      double ref = 0;
      for (size_t j = 0; j < k.rows; ++j) ref += s[j] / sum * f32(v, j, i);
      worst = std::max(worst, std::abs(ref - f32(o, r, i)));
    }
  }
  EXPECT_LE(worst, 1e-4);
}

TEST_F(DefaultScenario, WaveformFollowsHardwareHierarchy) {
  ASSERT_EQ(result_.exit_code, 0) << result_.output;
  const std::string vcd = test::read_file(dir_ + "/waves.vcd");
  EXPECT_NE(vcd.find("$timescale 1 ns $end"), std::string::npos);
  std::set<std::string> cubes, pes;
  std::string cube;
  std::regex scope("\\$scope module (\\S+) \\$end");
  for (std::sregex_iterator it(vcd.begin(), vcd.end(), scope), end; it != end; ++it) {
    const std::string name = (*it)[1];
    if (std::regex_match(name, std::regex("cube\\d+"))) cube = name, cubes.insert(name);
    if (std::regex_match(name, std::regex("pe\\d+"))) pes.insert(cube + "." + name);
  }
  EXPECT_EQ(cubes.size(), 4u);
  EXPECT_EQ(pes.size(), 32u);
  EXPECT_NE(vcd.find("activity"), std::string::npos);
  EXPECT_NE(vcd.find("occupancy_bytes"), std::string::npos);
  EXPECT_NE(vcd.find("rows_merged"), std::string::npos);
  EXPECT_NE(vcd.find(" busy "), std::string::npos);
}

TEST_F(DefaultScenario, Vcd2fstAcceptsWaveform) {
  ASSERT_EQ(result_.exit_code, 0) << result_.output;
  const std::string fst = dir_ + "/../waves.fst";
  const int rc = std::system(("vcd2fst '" + dir_ + "/waves.vcd' '" + fst + "' > /dev/null 2>&1").c_str());
  EXPECT_EQ(rc, 0);
  EXPECT_GT(test::read_file(fst).size(), 100u);
}

TEST_F(DefaultScenario, LatencyTraceHasSchemaAndEverySpanIsOrdered) {
  ASSERT_EQ(result_.exit_code, 0) << result_.output;
  std::istringstream csv(test::read_file(dir_ + "/latency.csv"));
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line, "start_ns,end_ns,component,activity,phase,agent,rows,bytes");
  size_t n = 0;
  std::set<std::string> activities;
  double prev_start = 0;
  while (std::getline(csv, line)) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
    ASSERT_EQ(f.size(), 8u) << line;
    const double start = std::stod(f[0]), end = std::stod(f[1]);
    EXPECT_LE(start, end) << line;
    EXPECT_GE(start, prev_start) << "rows sorted by start";
    prev_start = start;
    activities.insert(f[3]);
    ++n;
  }
  EXPECT_GT(n, 32u * 4 * 3);  // at least the 3 compute spans per PE per KV tile
  for (const char* a : {"q_load", "q_write", "q_read", "dma_kv", "gemm_qk", "softmax", "gemm_pv", "send_state",
                        "merge", "link_xfer", "normalise", "attention"})
    EXPECT_TRUE(activities.count(a)) << a;
}

TEST_F(DefaultScenario, SameSeedGivesByteIdenticalOutputs) {
  ASSERT_EQ(result_.exit_code, 0) << result_.output;
  const std::string again = dir_ + "-again", other = dir_ + "-seed2";
  ASSERT_EQ(test::run_cli("run '" + test::source_path("traces/fanout_8x20.json") + "' --out '" + again +
                          "' --dump-tensors").exit_code, 0);
  for (const char* f : {"summary.json", "latency.csv", "waves.vcd", "tensors/o.npy"})
    EXPECT_EQ(test::read_file(dir_ + "/" + f), test::read_file(again + "/" + f)) << f;
  ASSERT_EQ(test::run_cli("run '" + test::source_path("traces/fanout_8x20.json") + "' --out '" + other +
                          "' --dump-tensors --seed 2").exit_code, 0);
  EXPECT_NE(test::read_file(dir_ + "/tensors/o.npy"), test::read_file(other + "/tensors/o.npy"));
  EXPECT_EQ(test::read_file(dir_ + "/latency.csv"), test::read_file(other + "/latency.csv"))
      << "timing must not depend on values";
}

TEST(Cli, HelpDocumentsEveryRunOption) {
  const test::CliResult r = test::run_cli("run --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* opt : {"--out", "--hw", "--seed", "--no-vcd", "--dump-tensors", "--no-values", "--check"})
    EXPECT_NE(r.output.find(opt), std::string::npos) << opt;
  EXPECT_EQ(test::run_cli("--help").exit_code, 0);
}

TEST(Cli, NoVcdWritesNoWaveform) {
  const std::string dir = test::temp_dir("novcd") + "/run";
  ASSERT_EQ(test::run_cli("run '" + test::source_path("traces/fanout_8x20.json") + "' --out '" + dir + "' --no-vcd")
                .exit_code, 0);
  EXPECT_TRUE(std::filesystem::exists(dir + "/summary.json"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/waves.vcd"));
}

TEST(Cli, DefaultHwConfigFileEqualsBuiltInDefaults) {
  // hw/configs/default.json documents the defaults; it must not drift from the code.
  const test::CliResult builtin = test::run_cli("hw-config");
  const test::CliResult file = test::run_cli("hw-config '" + test::source_path("hw/configs/default.json") + "'");
  ASSERT_EQ(builtin.exit_code, 0);
  ASSERT_EQ(file.exit_code, 0) << file.output;
  EXPECT_EQ(Json::parse(builtin.output), Json::parse(file.output));
  EXPECT_EQ(Json::parse(builtin.output), Json::parse(test::read_file(test::source_path("hw/configs/default.json"))));
}
