#include "runtime/serve/azure_csv.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "hw/common/base/error.h"
#include "hw/common/base/input_file.h"
#include "hw/common/base/json_reader.h"
#include "runtime/serve/csv_rows.h"

namespace ahbm::serve {

namespace {

constexpr const char* kHeader = "TIMESTAMP,ContextTokens,GeneratedTokens";

using csv::trim;

// "YYYY-MM-DD HH:MM:SS[.fraction]" as seconds since 1970-01-01 00:00:00 (the calendar's real
// month lengths and leap years), or false when `cell` does not have that shape. A date of that
// shape that does not exist (2023-11-31, 2023-02-29, hour 24) is an InputError naming the field.
bool date_seconds(const std::string& cell, const std::string& at, double& seconds) {
  int y, mo, d, h, mi;
  double sec;
  char tail = 0;
  if (std::sscanf(cell.c_str(), "%d-%d-%d %d:%d:%lf%c", &y, &mo, &d, &h, &mi, &sec, &tail) != 6) return false;
  const auto refuse = [&](const std::string& field, const std::string& value, const std::string& allowed) {
    throw InputError(at + ": TIMESTAMP \"" + printable(cell) + "\": " + field + " " + value +
                     " is out of range (allowed: " + allowed + ")");
  };
  if (y < 1 || y > 9999) refuse("year", std::to_string(y), "[1, 9999]");
  if (mo < 1 || mo > 12) refuse("month", std::to_string(mo), "[1, 12]");
  const int last = days_in_month(y, mo);
  if (d < 1 || d > last) {
    char ym[16];
    std::snprintf(ym, sizeof ym, "%04d-%02d", y, mo);
    refuse("day", std::to_string(d), "[1, " + std::to_string(last) + "] in " + ym);
  }
  if (h < 0 || h > 23) refuse("hour", std::to_string(h), "[0, 23]");
  if (mi < 0 || mi > 59) refuse("minute", std::to_string(mi), "[0, 59]");
  if (!(sec >= 0 && sec < 61)) refuse("second", printable(cell.substr(cell.rfind(':') + 1)), "[0, 61), 60 a leap second");
  seconds = double(days_from_civil(y, mo, d)) * 86400.0 + h * 3600.0 + mi * 60.0 + sec;
  return true;
}

double timestamp_seconds(const std::string& cell, const std::string& at) {
  double t_s = 0;
  if (date_seconds(cell, at, t_s)) return t_s;
  char* end = nullptr;
  t_s = std::strtod(cell.c_str(), &end);
  if (cell.empty() || *end != '\0' || !std::isfinite(t_s) || t_s < 0)
    throw InputError(at + ": TIMESTAMP \"" + printable(cell) +
                     "\" is neither \"YYYY-MM-DD HH:MM:SS[.fraction]\" nor seconds >= 0");
  return t_s;
}

void read_header(std::istream& in, const std::string& path) {
  bool bom = false;
  const std::string line = csv::first_line(in, path, std::string("the header ") + kHeader, bom);
  if (line != kHeader)
    throw InputError(path + ": line 1 must be the header " + kHeader + "; got \"" + printable(line) + "\"" +
                     (bom ? " after a UTF-8 byte-order mark" : ""));
}

}  // namespace

int days_in_month(long long y, int m) {
  static const int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

long long days_from_civil(long long y, int m, int d) {
  // Howard Hinnant, "chrono-Compatible Low-Level Date Algorithms": years start in March, so the
  // leap day is the last day of its year; eras of 400 years repeat exactly.
  y -= m <= 2;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const long long yoe = y - era * 400;                                 // [0, 399]
  const long long doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;  // [0, 365]
  const long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;          // [0, 146096]
  return era * 146097 + doe - 719468;
}

std::vector<TraceRow> parse_azure_csv(std::istream& in, const std::string& path, int max_rows) {
  read_header(in, path);
  std::vector<TraceRow> rows;
  double first_s = 0;
  std::string line;
  for (int n = 2; int(rows.size()) < max_rows && std::getline(in, line); ++n) {
    line = trim(line);
    if (line.empty()) continue;
    const std::vector<std::string> col = csv::cells(line);
    const std::string at = path + ": line " + std::to_string(n);
    if (col.size() != 3) throw InputError(at + ": expected 3 columns, got " + std::to_string(col.size()));
    const double t_s = timestamp_seconds(col[0], at);
    if (rows.empty()) first_s = t_s;
    const double at_ns = (t_s - first_s) * 1e9;
    csv::check_arrival(at, "TIMESTAMP", col[0], t_s - first_s, at_ns, rows.empty() ? -1.0 : rows.back().arrival_ns);
    TraceRow row;
    row.arrival_ns = at_ns;
    row.context_tokens = csv::token_count(col[1], "ContextTokens", at);
    row.generated_tokens = csv::token_count(col[2], "GeneratedTokens", at);
    rows.push_back(row);
  }
  if (rows.empty()) throw InputError(path + ": no request rows after the header");
  return rows;
}

std::vector<TraceRow> read_azure_csv(const std::string& path, int max_rows) {
  check_input_file(path, "an Azure trace CSV");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the Azure trace CSV");
  return parse_azure_csv(in, path, max_rows);
}

}  // namespace ahbm::serve
