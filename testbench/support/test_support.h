#pragma once
// Helpers shared by the tests: run the CLI, read files, build small jobs by hand.
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>

#include <sys/wait.h>

#include "hw/common/base/error.h"
#include "hw/common/config/hw_config.h"
#include "hw/common/contract/job.h"
#include "test_files.h"

namespace ahbm::test {

// Runs a shell command and captures its stdout (and stderr when the command redirects it) and
// exit code (`output`).
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

inline std::string source_path(const std::string& rel) { return std::string(AHBM_SOURCE_DIR) + "/" + rel; }

// The message of the InputError `f` throws; "" when it throws none.
inline std::string input_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

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
