// GoogleTest entry point. libsystemc provides main() and calls sc_main().
#include <cstdlib>

#include <gtest/gtest.h>
#include <systemc>

#include <cblas.h>

namespace {
// SystemC prints its banner when its first context is made, before sc_main: silence it during
// static initialisation (test discovery runs this binary at build time too).
const bool kQuietSystemC = setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0) == 0;
}  // namespace

int sc_main(int argc, char** argv) {
  // One BLAS thread: PEs are simulated one block at a time and several runs or tests share the
  // machine's cores. (OpenBLAS reads its environment before our static initialisers run.)
  openblas_set_num_threads(1);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
