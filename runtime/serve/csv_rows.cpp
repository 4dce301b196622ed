#include "runtime/serve/csv_rows.h"

#include <sstream>

#include "hw/common/base/error.h"
#include "hw/common/base/input_file.h"
#include "hw/common/base/json_reader.h"
#include "runtime/serve/azure_csv.h"

namespace ahbm::serve::csv {

namespace {
constexpr const char* kBom = "\xEF\xBB\xBF";
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ')) s.pop_back();
  while (!s.empty() && s.front() == ' ') s.erase(s.begin());
  return s;
}

std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> col;
  std::stringstream ss(line);
  for (std::string c; std::getline(ss, c, ',');) col.push_back(trim(c));
  return col;
}

int token_count(const std::string& v, const std::string& column, const std::string& at) {
  try {
    size_t used = 0;
    const long long x = std::stoll(v, &used);
    if (used == v.size() && x >= 1 && x <= kMaxTokens) return int(x);
  } catch (const std::exception&) {
  }
  throw InputError(at + ": " + column + " \"" + printable(v) + "\" must be an integer in " +
                   range_text(int64_t(1), int64_t(kMaxTokens)));
}

std::string first_line(std::istream& in, const std::string& path, const std::string& expected, bool& bom) {
  std::string line;
  if (!std::getline(in, line)) throw InputError(path + ": file is empty (expected " + expected + ")");
  bom = line.compare(0, 3, kBom) == 0;  // a byte-order mark, as spreadsheet programs write
  if (bom) line.erase(0, 3);
  return trim(line);
}

void check_arrival(const std::string& at, const std::string& column, const std::string& cell, double after_first_s,
                   double at_ns, double last_ns) {
  if (!(at_ns <= kMaxArrivalNs))
    throw InputError(at + ": " + column + " \"" + printable(cell) + "\" is " + Json(after_first_s).dump() +
                     " s after the first row's (allowed: up to 1125899.906842624 s = 2^50 ns after it, where time in "
                     "double ns resolves 1/8 ns; split the trace)");
  if (last_ns >= 0 && at_ns < last_ns)
    throw InputError(at + ": " + column + " \"" + printable(cell) +
                     "\" is earlier than the row before (rows must be in time order)");
}

}  // namespace ahbm::serve::csv
