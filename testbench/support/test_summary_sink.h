#pragma once
// The e2e tests' CLI runs keep a copy of each summary.json they write in AHBM_TEST_SUMMARY_SINK
// (a folder of the build tree), so that CTest's SummarySchemas.EveryE2eSummaryValidates, which
// runs after the e2e tests (a fixture cleanup), validates every one of them against
// docs/schema/{summary,serve_summary}.schema.json. A summary outside the schema (a field a probe
// run never writes, a type that changed) then fails that check, naming the test that wrote it.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include <gtest/gtest.h>

namespace ahbm::test {

// The output directories an `ahbm-sim` argument string names (--out DIR, --out=DIR, -o DIR),
// shell quotes removed.
inline std::vector<std::string> out_dirs_of(const std::string& args) {
  std::vector<std::string> words;
  std::string w;
  char quote = 0;
  bool in_word = false;
  for (char c : args) {
    if (quote) {
      if (c == quote) quote = 0;
      else w += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(w);
      w.clear();
      in_word = false;
    } else {
      w += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(w);
  std::vector<std::string> dirs;
  for (size_t i = 0; i < words.size(); ++i) {
    if ((words[i] == "--out" || words[i] == "-o") && i + 1 < words.size()) dirs.push_back(words[i + 1]);
    if (words[i].rfind("--out=", 0) == 0) dirs.push_back(words[i].substr(6));
  }
  return dirs;
}

// After a run of `ahbm-sim ARGS` that began at `started` and exited 0: copies each summary.json
// it wrote (newer than `started`) into the sink, with a note of the test and the arguments.
inline void keep_summaries(const std::string& args, int exit_code, std::filesystem::file_time_type started) {
#ifdef AHBM_TEST_SUMMARY_SINK
  namespace fs = std::filesystem;
  if (exit_code != 0) return;
  for (const std::string& dir : out_dirs_of(args)) {
    const fs::path summary = fs::path(dir) / "summary.json";
    std::error_code ec;
    if (!fs::is_regular_file(summary, ec) || fs::last_write_time(summary, ec) < started || ec) continue;
    const fs::path sink = AHBM_TEST_SUMMARY_SINK;
    fs::create_directories(sink, ec);
    const auto* t = ::testing::UnitTest::GetInstance()->current_test_info();
    const std::string test = t ? std::string(t->test_suite_name()) + "." + t->name() : "?";
    const std::string stem = std::to_string(getpid()) + "-" +
                             std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
    fs::copy_file(summary, sink / (stem + ".json"), fs::copy_options::overwrite_existing, ec);
    std::ofstream(sink / (stem + ".from")) << test << ": ahbm-sim " << args << "\n";
  }
#else
  (void)args, (void)exit_code, (void)started;
#endif
}

}  // namespace ahbm::test
