#include "runtime/report/trace_time.h"

#include <charconv>
#include <cmath>

namespace ahbm::report {

int64_t whole_ns(double ns) { return std::llround(ns); }

void append_trace_us(std::string& out, int64_t ns) {
  // Digits of |ns| from integers only: no double ever stands for the decimal.
  uint64_t mag = ns < 0 ? uint64_t(0) - uint64_t(ns) : uint64_t(ns);
  if (ns < 0) out.push_back('-');
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, mag / 1000);
  out.append(buf, size_t(r.ptr - buf));
  unsigned frac = unsigned(mag % 1000);
  if (frac == 0) return;
  char digits[4] = {char('0' + frac / 100), char('0' + frac / 10 % 10), char('0' + frac % 10), 0};
  size_t n = 3;
  while (digits[n - 1] == '0') --n;  // 94.300 -> 94.3
  out.push_back('.');
  out.append(digits, n);
}

std::string trace_us_text(int64_t ns) {
  std::string s;
  append_trace_us(s, ns);
  return s;
}

}  // namespace ahbm::report
