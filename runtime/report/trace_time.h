#pragma once
// The times of trace.json (run's, runtime/report/trace_json.h, and serve's,
// runtime/serve/serve_report.h) as text: one rule for both writers.
//
// The trace-event format counts ts and dur in microseconds; the simulator counts nanoseconds. A
// time is first taken in whole nanoseconds (whole_ns: the nearest; rounding is monotonic, so a
// slice that nests in another or follows it still does), then written as the exact decimal of
// ns / 1000 with at most three fractional digits (trace_us_text: 94329 ns -> "94.329", 94300 ->
// "94.3", 94000 -> "94"). A slice's dur is the difference of its rounded end and start, so ts +
// dur is the end's ts exactly for any reader that adds the decimals exactly (Python's Decimal,
// or the integer nanoseconds below).
//
// How Perfetto reads it (google/perfetto, src/trace_processor/importers/json/
// json_trace_tokenizer.cc, CoerceToTs, as of its 2025 JSON parser rewrite; read in that source):
// an integer token is taken as whole µs and multiplied by 1000; a number with a fraction is
// parsed by Perfetto's own StringToDouble (integer part plus the fraction's digits over a power
// of ten, util/json_parser.h) and converted with llround(value * 1000), the nearest ns. Both give
// back exactly the nanoseconds written here. displayTimeUnit does not change the unit of ts/dur
// (google/perfetto issue #274). Older trace processors (jsoncpp-based, json_utils.cc) truncated
// value * 1000 instead, which can read such a decimal 1 ns short (94.329 -> 94328).
#include <cstdint>
#include <string>

namespace ahbm::report {

// A time in (possibly fractional) nanoseconds to whole nanoseconds: the nearest.
int64_t whole_ns(double ns);

// Appends ns / 1000 as exact decimal text, shortest form (no trailing zeros, no '.' for whole µs).
void append_trace_us(std::string& out, int64_t ns);
std::string trace_us_text(int64_t ns);

}  // namespace ahbm::report
