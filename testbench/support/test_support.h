#pragma once
// Helpers shared by the tests: run the CLI, read files, build small jobs by hand.
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include <sys/wait.h>

#include "hw/common/hw_config.h"
#include "hw/common/job.h"
#include "test_summary_sink.h"

namespace ahbm::test {

struct CliResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs a shell command and captures its stdout (and stderr when the command redirects it) and
// exit code.
inline CliResult run_shell(const std::string& cmd) {
  CliResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Runs `ahbm-sim ARGS` (a shell-quoted string) and captures its output and exit code.
// A summary.json the run writes is kept for the schema check (test_summary_sink.h).
inline CliResult run_cli(const std::string& args) {
  const auto started = std::filesystem::file_time_type::clock::now();
  CliResult r = run_shell(std::string("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 '") + AHBM_CLI + "' " + args + " 2>&1");
  keep_summaries(args, r.exit_code, started);
  return r;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string write_temp(const std::string& dir, const std::string& name, const std::string& text) {
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// A fresh, empty temporary directory unique to the running test.
inline std::string temp_dir(const std::string& tag) {
  const auto base = std::filesystem::temp_directory_path() / ("ahbm-test-" + tag + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(base);
  std::filesystem::create_directories(base);
  return base.string();
}

inline std::string source_path(const std::string& rel) { return std::string(AHBM_SOURCE_DIR) + "/" + rel; }

// Hardware of `cubes` CUBEs with `pes` PEs each, everything else default.
inline HwConfig small_hw(int cubes, int pes) {
  HwConfig c;
  c.group.cubes = cubes;
  c.cube.pes = pes;
  return c;
}

// A job of `rows` query rows over `tokens` shared-prefix keys spread evenly (contiguously) across
// the group's PEs, standard-normal values from `seed`, one Q tile of `tile_rows` rows (0 = all).
inline AttentionJob random_job(const HwConfig& hw, int rows, int tokens, int d, unsigned seed, int tile_rows = 0) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.f, 1.f);
  AttentionJob j;
  j.head_dim = d;
  j.agents = {"a"};
  for (int r = 0; r < rows; ++r) {
    j.rows.push_back({0, tokens + r});
    for (int i = 0; i < d; ++i) j.q.push_back(nd(rng));
  }
  const int pes = hw.pes_per_group();
  j.shards.resize(size_t(pes));
  int pos = 0;
  for (int p = 0; p < pes; ++p) {
    KvShard& s = j.shards[size_t(p)];
    s.tokens = tokens / pes + (p < tokens % pes ? 1 : 0);
    for (int t = 0; t < s.tokens; ++t, ++pos) {
      s.info.push_back({kSharedOwner, pos});
      for (int i = 0; i < d; ++i) s.k.push_back(nd(rng)), s.v.push_back(nd(rng));
    }
  }
  if (tile_rows <= 0) tile_rows = rows;
  for (int b = 0; b < rows; b += tile_rows) j.tiles.push_back({b, std::min(rows, b + tile_rows)});
  return j;
}

}  // namespace ahbm::test
