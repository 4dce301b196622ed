// ahbm-sim: command line entry point. Subcommands live one per file (cmd_*.cpp) and are listed
// in commands.h. Exit codes: 0 success, 2 bad input (message names the field and value),
// 3 numeric failure (run --check beyond tolerance, or a NaN/Inf in the datapath), 4 simulation
// stalled (deadlock or livelock; the message lists which modules wait on what), 1 internal error.
#include <dlfcn.h>
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <systemc>

#include <cblas.h>

#include "hw/common/base/error.h"
#include "runtime/io/output_dir.h"
#include "runtime/io/version.h"
#include "tools/cli/commands.h"

namespace {

// SystemC prints its banner when the library's first simulation context is made, before
// sc_main runs; the environment switch must be set during static initialisation to count.
const bool kQuietSystemC = setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0) == 0;

void print_usage(std::ostream& os) {
  os << "ahbm-sim: cycle-approximate SystemC/TLM-2.0 model of AHBM running agentic attention\n\n"
        "usage: ahbm-sim COMMAND [options]\n       ahbm-sim --version\n\ncommands:\n";
  for (const auto& c : ahbm::cli::commands()) os << "  " << c.name << std::string(12 - c.name.size(), ' ') << c.summary << "\n";
  os << "\n'ahbm-sim COMMAND --help' documents each command's options. Every command takes -q (no progress,\n"
        "only results and errors), -v (also a line per finished item) or --log-level quiet|info|debug; long\n"
        "commands show progress on stderr when it is a terminal.\n"
        "exit codes: 0 ok, 1 internal error, 2 bad input, 3 numeric failure (run --check, or NaN/Inf),\n"
        "            4 simulation stalled (deadlock or livelock)\n";
}

// Exit code after printing to stdout: 0, or 1 when the output was lost (a full disk, a closed
// pipe): a command's answer that did not arrive is not a success.
int stdout_written() {
  try {
    ahbm::check_stdout();
  } catch (const ahbm::OutputError& e) {
    std::cerr << "ahbm-sim: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

// One BLAS thread: PEs are simulated one block at a time and several runs or tests share the
// machine's cores. OpenBLAS starts its worker threads when the library loads, before any code
// of ours runs; an idle worker spins (sched_yield) for a while before it sleeps. Without an
// address-space or data limit, openblas_set_num_threads(1) keeps every BLAS call on this thread
// and blas_thread_shutdown_ (OpenBLAS's own pre-fork shutdown, exported) ends the workers at
// once. Under such a limit (ulimit -v / -d) each worker's 128 MiB buffer allocation can fail, and
// the worker retries it forever: it would never take the shutdown, and exit (which joins the
// workers) would hang. Only OPENBLAS_NUM_THREADS=1 in the environment at load time starts none,
// so then (or when the shutdown is not exported) this program runs again with it set (same
// pid, arguments and output), at the cost of loading every library twice (about 30 ms).
bool memory_limited() {
  rlimit r{};
  for (int which : {RLIMIT_AS, RLIMIT_DATA})
    if (getrlimit(which, &r) == 0 && r.rlim_cur != RLIM_INFINITY) return true;
  return false;
}

void use_one_blas_thread(int argc, char** argv) {
  openblas_set_num_threads(1);
  const char* n = std::getenv("OPENBLAS_NUM_THREADS");
  if (n && std::strcmp(n, "1") == 0) return;  // no worker was started
  using Shutdown = int (*)();
  const auto shutdown = reinterpret_cast<Shutdown>(dlsym(RTLD_DEFAULT, "blas_thread_shutdown_"));
  if (shutdown && !memory_limited()) {
    shutdown();
    return;
  }
  if (setenv("OPENBLAS_NUM_THREADS", "1", 1) != 0) return;
  std::vector<char*> args(argv, argv + argc);
  args.push_back(nullptr);
  execv("/proc/self/exe", args.data());
  // Not possible (no /proc): go on with one BLAS thread (set above) and the workers asleep.
}

// Memory touched for the first time costs a page fault, which on a virtual machine traps to the
// hypervisor (~10 µs per 4 KiB page measured here). By default glibc hands every block above a
// threshold that adapts up to 32 MiB straight back to the kernel, and trims the heap's free top
// above twice that, so a long run that builds, frees and rebuilds buffers (the cost model's
// candidates step after step, the report's per-activity samples) faults the same memory in again
// and again: 31,000 faults in the LLaMA-8B-sized timing-only run. Keeping freed memory in the
// process (the heap never shrinks; only blocks of 32 MiB or more are mapped and unmapped, and the
// few containers that grow that large map huge pages themselves, hw/common/base/huge_page_allocator.h)
// leaves 18,000. The price is a resident size that stays at the run's peak until exit.
void keep_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

}  // namespace

int sc_main(int argc, char** argv) {
  ahbm::guard_standard_streams();  // before any file is opened
  use_one_blas_thread(argc, argv);
  keep_freed_memory();
  if (argc < 2) {
    print_usage(std::cerr);
    return 2;
  }
  const std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    print_usage(std::cout);
    return stdout_written();
  }
  if (cmd == "--version" || cmd == "-V") return ahbm::cli::run_command(argc - 1, argv + 1, {}, std::cerr);
  const bool known = std::any_of(ahbm::cli::commands().begin(), ahbm::cli::commands().end(),
                                 [&](const ahbm::cli::Command& c) { return c.name == cmd; });
  if (known) {
    try {
      return ahbm::cli::run_command(argc - 1, argv + 1, {}, std::cerr);
    } catch (const ahbm::Interrupted& e) {
      // The unwinding removed the partial output; die of the signal as an uncaught one would.
      std::cerr << "ahbm-sim " << cmd << ": " << e.what() << "; partial output removed\n";
      std::signal(e.signal, SIG_DFL);
      std::raise(e.signal);
      return 128 + e.signal;
    }
  }
  std::cerr << "ahbm-sim: unknown command \"" << cmd << "\"\n";
  print_usage(std::cerr);
  return 2;
}
