// The only test translation unit compiled with absolute paths (testbench/CMakeLists.txt).
#include "test_paths.h"

namespace ahbm_test_paths {
const char* source_dir() { return AHBM_SOURCE_DIR_PATH; }
const char* cli() { return AHBM_CLI_PATH; }
const char* summary_sink() { return AHBM_TEST_SUMMARY_SINK_PATH; }
}  // namespace ahbm_test_paths
