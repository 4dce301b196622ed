#pragma once
// Numeric command-line values, checked the way config fields are: a bad one is a UsageError
// (exit 2) naming the option, the value and the allowed range. Options are taken as text and
// converted here because Boost's own conversion accepts "-1" for an unsigned (wrapping it to
// 2^64 - 1) and reports no range.
#include <cstdint>
#include <string>

#include "runtime/report/progress.h"

namespace ahbm::cli {

// The verbosity the command line asked for (-q/--quiet, -v/--verbose, --log-level; every command
// accepts them: parse_command_line), info when none.
report::Verbosity verbosity();
void set_verbosity(report::Verbosity v);
// The command's progress on stderr: live when stderr is a terminal, -v lines anywhere, nothing
// with -q (runtime/report/progress.h).
report::ProgressLine stderr_progress();

uint64_t parse_uint_option(const std::string& option, const std::string& text, uint64_t lo, uint64_t hi);
double parse_double_option(const std::string& option, const std::string& text, double lo, double hi);

}  // namespace ahbm::cli
