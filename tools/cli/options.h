#pragma once
// Numeric command-line values, checked the way config fields are: a bad one is a UsageError
// (exit 2) naming the option, the value and the allowed range. Options are taken as text and
// converted here because Boost's own conversion accepts "-1" for an unsigned (wrapping it to
// 2^64 - 1) and reports no range.
#include <cstdint>
#include <string>

#include "runtime/report/progress.h"

namespace ahbm::cli {

// The command's progress on stderr at verbosity `v` (verbosity_of, commands.h): live when stderr
// is a terminal, -v lines anywhere, nothing with -q (runtime/report/progress.h).
report::ProgressLine stderr_progress(report::Verbosity v);

uint64_t parse_uint_option(const std::string& option, const std::string& text, uint64_t lo, uint64_t hi);
double parse_double_option(const std::string& option, const std::string& text, double lo, double hi);

}  // namespace ahbm::cli
