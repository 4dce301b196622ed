#include "tools/cli/interrupt.h"

#include <csignal>

namespace ahbm::cli {
namespace {

// A signal handler can only reach the program through an object of static storage of this type
// (C++17 [support.signal]): the one piece of process-wide state, written by the handler alone,
// and cleared when a scope starts.
volatile std::sig_atomic_t g_sigint = 0;
struct sigaction g_previous {};

extern "C" void on_sigint(int) { g_sigint = 1; }

}  // namespace

InterruptScope::InterruptScope() {
  g_sigint = 0;
  struct sigaction a {};
  a.sa_handler = on_sigint;
  sigemptyset(&a.sa_mask);
  a.sa_flags = SA_RESETHAND;  // a second Ctrl-C: the default action, the process ends
  sigaction(SIGINT, &a, &g_previous);
}

InterruptScope::~InterruptScope() { sigaction(SIGINT, &g_previous, nullptr); }

bool InterruptScope::requested() const { return g_sigint != 0; }

}  // namespace ahbm::cli
