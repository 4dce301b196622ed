#include "tools/cli/options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include <unistd.h>

#include "tools/cli/commands.h"

namespace ahbm::cli {

namespace {

template <class T>
[[noreturn]] void bad(const std::string& option, const std::string& text, const char* kind, T lo, T hi) {
  std::ostringstream os;
  os << "--" << option << ": value \"" << text << "\" is not " << kind << " in [" << lo << ", " << hi << "]";
  throw UsageError(os.str());
}

}  // namespace

report::ProgressLine stderr_progress(report::Verbosity v) { return report::ProgressLine::on(std::cerr, STDERR_FILENO, v); }

uint64_t parse_uint_option(const std::string& option, const std::string& text, uint64_t lo, uint64_t hi) {
  // Digits only: no sign, no spaces, no exponent, no hex.
  if (text.empty() || text.size() > 20 || text.find_first_not_of("0123456789") != std::string::npos)
    bad(option, text, "an integer", lo, hi);
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE || v < lo || v > hi) bad(option, text, "an integer", lo, hi);
  return v;
}

double parse_double_option(const std::string& option, const std::string& text, double lo, double hi) {
  char* end = nullptr;
  errno = 0;
  // Decimal only: strtod also reads hexadecimal ("0x10" is 16), "inf" and "nan".
  const bool decimal = !text.empty() && text.find_first_not_of("0123456789+-.eE") == std::string::npos;
  const double v = decimal ? std::strtod(text.c_str(), &end) : NAN;
  if (!decimal || *end != '\0' || errno == ERANGE || !std::isfinite(v) || v < lo || v > hi)
    bad(option, text, "a number", lo, hi);
  return v;
}

}  // namespace ahbm::cli
