#pragma once
// Helpers for the reliability tests: the binary started directly under resource limits, files
// under a run directory (the CLI runner and scratch directories are test_files.h's).
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "test_files.h"

namespace ahbm::test {

namespace fs = std::filesystem;

// The regular files under `root` (hidden ones included), relative paths, sorted.
inline std::vector<std::string> files_under(const fs::path& root) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file()) out.push_back(fs::relative(e.path(), root).string());
  std::sort(out.begin(), out.end());
  return out;
}

// The binary started directly (no shell), stdout and stderr to files, extra environment
// variables, an optional file-size limit (bytes; SIGXFSZ ignored so writes fail with EFBIG) and
// other resource limits (setrlimit resource, bytes) set in the child before it starts.
struct Child {
  pid_t pid = -1;
  fs::path err;
};

inline Child spawn_cli(const std::vector<std::string>& args, const fs::path& dir, const std::string& tag,
                const std::vector<std::string>& env = {}, long fsize = -1,
                const std::vector<std::pair<int, rlim_t>>& limits = {}) {
  Child c;
  c.err = dir / (".cli." + tag + ".stderr");
  const fs::path out = dir / (".cli." + tag + ".stdout");
  c.pid = fork();
  if (c.pid == 0) {
    std::vector<std::string> a = {AHBM_CLI};
    a.insert(a.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& s : a) argv.push_back(s.data());
    argv.push_back(nullptr);
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
    for (const auto& kv : env) putenv(strdup(kv.c_str()));
    const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), e = open(c.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(o, 1);
    dup2(e, 2);
    if (fsize >= 0) {
      signal(SIGXFSZ, SIG_IGN);
      const rlimit r{rlim_t(fsize), rlim_t(fsize)};
      setrlimit(RLIMIT_FSIZE, &r);
    }
    for (const auto& [resource, bytes] : limits) {
      const rlimit r{bytes, bytes};
      setrlimit(resource, &r);
    }
    execv(argv[0], argv.data());
    _exit(127);
  }
  return c;
}

// Waits for the child; returns its exit code, or -SIGNAL when a signal ended it.
inline int wait_child(const Child& c) {
  int status = 0;
  waitpid(c.pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

// Waits up to `seconds` for the child (a hang fails the calling test instead of stalling the
// suite; no duration is asserted): its exit code or -SIGNAL, and its peak resident memory in
// `peak_kb` (getrusage of the child, through wait4); nullopt when it had not ended (it is killed).
inline std::optional<int> wait_child_for(const Child& c, int seconds, long* peak_kb = nullptr) {
  for (int i = 0; i < seconds * 20; ++i) {
    int status = 0;
    rusage ru{};
    if (wait4(c.pid, &status, WNOHANG, &ru) == c.pid) {
      if (peak_kb) *peak_kb = ru.ru_maxrss;
      return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(c.pid, SIGKILL);
  waitpid(c.pid, nullptr, 0);
  return std::nullopt;
}

inline std::string source_path(const std::string& rel) { return std::string(AHBM_SOURCE_DIR) + "/" + rel; }

}  // namespace ahbm::test
