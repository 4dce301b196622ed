#pragma once
// Helpers for the reliability tests: run the ahbm-sim binary (AHBM_CLI) in a shell, capture its
// exit code, stdout and stderr, and give each test its own scratch directory.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace ahbm::testing {

namespace fs = std::filesystem;

struct CliResult {
  int exit_code = -1;  // -1: killed by a signal
  std::string out, err;
};

inline std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_text(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// A fresh directory named after the running test, removed when the object goes.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "." + info->name();
    for (char& c : name)
      if (c == '/') c = '_';
    path_ = fs::temp_directory_path() / ("ahbm-rel-" + name + "-" + std::to_string(getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

// Runs `prefix AHBM_CLI args` through /bin/sh (prefix: e.g. "ulimit -f 64;"), output captured in `dir`.
inline CliResult run_cli(const std::string& args, const fs::path& dir, const std::string& prefix = "") {
  const fs::path out = dir / ".cli.stdout", err = dir / ".cli.stderr";
  const std::string cmd = prefix + " SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 " + quote(AHBM_CLI) + " " + args + " >" +
                          quote(out.string()) + " 2>" + quote(err.string()) + " </dev/null";
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_text(out);
  r.err = read_text(err);
  fs::remove(out);
  fs::remove(err);
  return r;
}

// The regular files under `root` (hidden ones included), relative paths, sorted.
inline std::vector<std::string> files_under(const fs::path& root) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file()) out.push_back(fs::relative(e.path(), root).string());
  std::sort(out.begin(), out.end());
  return out;
}

inline std::string source_path(const std::string& rel) { return std::string(AHBM_SOURCE_DIR) + "/" + rel; }

}  // namespace ahbm::testing
