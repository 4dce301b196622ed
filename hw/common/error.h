#pragma once
// Errors a run can end with, each mapped to its own CLI exit code (tools/cli/main.cpp):
//   InputError   2  bad config, bad scenario, inconsistent sizes: the user can fix the input
//   NumericFault 3  a NaN or Inf appeared in the datapath (the message says where)
//   SimStall     4  simulated time stopped advancing (or advanced without progress) with work
//                   pending: a deadlock or livelock; the message lists which modules wait on what
//   InternalError 1 a broken invariant of the model: a SystemC error or fatal report (an
//                   SC_REPORT_FATAL of ours, a binding error, a kernel assertion), turned into
//                   an exception where the simulation is run (hw/common/sim_context.h)
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

}  // namespace ahbm
