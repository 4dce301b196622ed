#pragma once
// Errors a run can end with, each mapped to its own CLI exit code (tools/cli/main.cpp):
//   InputError   2  bad config, bad scenario, inconsistent sizes: the user can fix the input
//   NumericFault 3  a NaN or Inf appeared in the datapath (the message says where)
//   SimStall     4  simulated time stopped advancing (or advanced without progress) with work
//                   pending: a deadlock or livelock; the message lists which modules wait on what
//   InternalError 1 a broken invariant of the model: a SystemC error or fatal report (an
//                   SC_REPORT_FATAL of ours, a binding error, a kernel assertion), turned into
//                   an exception where the simulation is run (hw/common/sim/sim_context.h)
//   OutputError  1  an output (a file of --out, standard output) could not be written: the
//                   message names the path and the OS reason (runtime/io/output_dir.h)
//   Interrupted     SIGINT/SIGTERM arrived while outputs were written: the partial output is
//                   removed, then the CLI dies of the same signal (exit status 128 + signal)
// Everything else is an internal error too (exit 1).
#include <stdexcept>
#include <string>

namespace ahbm {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class NumericFault : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class SimStall : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class InternalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(int sig) : std::runtime_error("interrupted by signal " + std::to_string(sig)), signal(sig) {}
  int signal;
};

}  // namespace ahbm
