#pragma once
// Integer arithmetic that cannot wrap silently (docs/reliability.md, "Ranges of time, counts
// and integers"). Two flavours:
//  - saturating (mul_sat, add_sat): cycle and byte counts of the model's closed forms; a result
//    beyond uint64 is held at UINT64_MAX, which the time conversions of timing.h turn into the
//    saturated time, and the watchdog into an error;
//  - checked (checked_mul, checked_add): counts that are reported (bytes, FLOPs of a join
//    plan); beyond int64 they are an InputError naming what was being counted.
#include <cstdint>
#include <string>

#include "hw/common/base/error.h"

namespace ahbm {

inline uint64_t mul_sat(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}
inline uint64_t add_sat(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

[[noreturn]] inline void count_overflow(const std::string& what, int64_t a, const char* op, int64_t b) {
  throw InputError(what + ": " + std::to_string(a) + " " + op + " " + std::to_string(b) +
                   " is beyond the range of a 64-bit count (2^63 - 1)");
}
inline int64_t checked_mul(int64_t a, int64_t b, const std::string& what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) count_overflow(what, a, "x", b);
  return r;
}
inline int64_t checked_add(int64_t a, int64_t b, const std::string& what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) count_overflow(what, a, "+", b);
  return r;
}

}  // namespace ahbm
