#pragma once
// The tests' one set of file and CLI helpers: read and write a file, quote for the shell, a
// scratch directory per test, and the ahbm-sim binary run with its exit code, stdout and stderr.
// Every other support header builds on these (no second reader, temp-dir maker or CLI runner).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "test_summary_sink.h"

namespace ahbm::test {

namespace fs = std::filesystem;

// The whole file, bytes as they are; "" when it cannot be read.
inline std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// `text` written to DIR/NAME (DIR created); returns the file's path.
inline std::string write_temp(const std::string& dir, const std::string& name, const std::string& text) {
  fs::create_directories(dir);
  const std::string path = dir + "/" + name;
  write_file(path, text);
  return path;
}

// `s` single-quoted for /bin/sh.
inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// A fresh, empty directory "ahbm-test-TAG-PID" under the system's temp directory. It outlives
// the test (a static path a test's helpers hand out keeps working); ScratchDir removes its own.
inline std::string temp_dir(const std::string& tag) {
  const fs::path base = fs::temp_directory_path() / ("ahbm-test-" + tag + "-" + std::to_string(getpid()));
  fs::remove_all(base);
  fs::create_directories(base);
  return base.string();
}

// A fresh directory for one test, removed with the object. Without a tag it is named after the
// running test ("Suite.Name", '/' of parameterised names replaced).
class ScratchDir {
 public:
  explicit ScratchDir(std::string tag = "") {
    if (tag.empty()) {
      const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
      tag = std::string(info->test_suite_name()) + "." + info->name();
      for (char& c : tag)
        if (c == '/') c = '_';
    }
    path_ = temp_dir(tag);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }
  std::string path(const std::string& rel) const { return (path_ / rel).string(); }
  std::string operator/(const std::string& rel) const { return path(rel); }

 private:
  fs::path path_;
};

struct CliResult {
  int exit_code = -1;  // -1: killed by a signal
  std::string out, err;
  std::string output;  // out, then err
};

// Runs `PREFIX ahbm-sim ARGS` through /bin/sh (ARGS shell-quoted by the caller; PREFIX e.g.
// "ulimit -f 64;"), stdin closed, stdout and stderr captured through files in `dir` (a scratch
// directory of its own when empty). A summary.json the run writes is kept for the schema check
// (test_summary_sink.h).
inline CliResult run_cli(const std::string& args, const fs::path& dir = {}, const std::string& prefix = "") {
  std::unique_ptr<ScratchDir> own;
  if (dir.empty()) own = std::make_unique<ScratchDir>("cli-capture");
  const fs::path where = dir.empty() ? own->path() : dir;
  const fs::path out = where / ".cli.stdout", err = where / ".cli.stderr";
  const std::string cmd = prefix + " SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 " + quote(AHBM_CLI) + " " + args + " >" +
                          quote(out.string()) + " 2>" + quote(err.string()) + " </dev/null";
  const auto started = fs::file_time_type::clock::now();
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  keep_summaries(args, r.exit_code, started);
  r.out = read_file(out);
  r.err = read_file(err);
  r.output = r.out + r.err;
  fs::remove(out);
  fs::remove(err);
  return r;
}

}  // namespace ahbm::test
