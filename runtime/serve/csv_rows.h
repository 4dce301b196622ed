#pragma once
// What the request-trace readers share (azure_csv.cpp, request_csv.cpp): cells of a CSV line,
// token counts, the first line (a UTF-8 byte-order mark skipped), and the arrival checks.
#include <istream>
#include <string>
#include <vector>

namespace ahbm::serve::csv {

constexpr int kMaxTokens = 1 << 20;  // as the workload's token counts

// `s` without trailing '\r' and spaces and without leading spaces.
std::string trim(std::string s);
// The comma-separated cells of `line`, each trimmed (no quoting: the traces have none; a last,
// empty cell after a trailing comma is not one).
std::vector<std::string> cells(const std::string& line);
// `v` as a token count in [1, 2^20]; else an InputError "<at>: <column> "<v>" must be an integer in [1, 1048576]".
int token_count(const std::string& v, const std::string& column, const std::string& at);
// Line 1 without its byte-order mark (`bom` says whether it had one), trimmed; an empty file is an
// InputError "<path>: file is empty (expected <expected>)".
std::string first_line(std::istream& in, const std::string& path, const std::string& expected, bool& bom);
// A row's arrival, `after_first_s` seconds after the first row's and at `at_ns` ns (`last_ns`: the
// row before's, < 0 for the first row): within 2^50 ns of the first and not before the row before,
// else an InputError naming the line, the column and the cell.
void check_arrival(const std::string& at, const std::string& column, const std::string& cell, double after_first_s,
                   double at_ns, double last_ns);

}  // namespace ahbm::serve::csv
