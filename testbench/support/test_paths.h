#pragma once
// Where the tests find the source tree, the ahbm-sim binary and the e2e summary sink. Every test
// file sees this header (forced in by testbench/CMakeLists.txt) and the macros AHBM_SOURCE_DIR, AHBM_CLI and
// AHBM_TEST_SUMMARY_SINK, which call these functions. Only test_paths.cpp is compiled with the
// absolute paths, so the compile lines of the other test files are the same in every checkout
// and a compiler cache shared between worktrees hits for them.
namespace ahbm_test_paths {
const char* source_dir();    // the repository root
const char* cli();           // the ahbm-sim executable of this build
const char* summary_sink();  // build/test-summaries (testbench/support/test_summary_sink.h)
}  // namespace ahbm_test_paths
