#include "runtime/validate/csv_table.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include "hw/common/base/error.h"

#ifndef AHBM_PRESET_DIR
#define AHBM_PRESET_DIR "hw/configs"
#endif

namespace ahbm::validate {

namespace {

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::stringstream in(line);
  while (std::getline(in, cell, ',')) out.push_back(cell);
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  return s.substr(i);
}

}  // namespace

std::string default_preset_dir() { return AHBM_PRESET_DIR; }

CsvTable read_csv_table(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot read");
  CsvTable t;
  t.path = path;
  std::string line;
  if (!std::getline(in, line)) throw InputError(path + ": empty (needs a header row)");
  for (const std::string& h : split_csv_line(trim(line))) t.header.push_back(trim(h));
  for (size_t i = 0; i < t.header.size(); ++i) t.column[t.header[i]] = i;
  int line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    line = trim(line);
    if (line.empty()) continue;
    CsvTable::Row row;
    row.line = line_no;
    for (const std::string& c : split_csv_line(line)) row.cells.push_back(trim(c));
    if (row.cells.size() != t.header.size())
      throw InputError(t.where(row) + ": " + std::to_string(row.cells.size()) + " cells, the header has " +
                       std::to_string(t.header.size()));
    t.rows.push_back(std::move(row));
  }
  if (t.rows.empty()) throw InputError(path + ": no rows after the header");
  return t;
}

void CsvTable::require(const std::vector<std::string>& needed) const {
  std::string all;
  for (const std::string& n : needed) all += (all.empty() ? "" : ", ") + n;
  for (const std::string& n : needed)
    if (!has(n)) throw InputError(path + ": column " + n + " missing (needed: " + all + ")");
}

int64_t CsvTable::integer(const Row& r, const std::string& c, int64_t lo, int64_t hi) const {
  const std::string& v = cell(r, c);
  size_t used = 0;
  int64_t x = 0;
  try {
    x = std::stoll(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != v.size() || x < lo || x > hi)
    throw InputError(where(r) + ": column " + c + " = \"" + v + "\" (allowed: an integer in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "])");
  return x;
}

double CsvTable::positive(const Row& r, const std::string& c) const {
  const std::string& v = cell(r, c);
  size_t used = 0;
  double x = 0;
  try {
    x = std::stod(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != v.size() || !(x > 0) || !std::isfinite(x))
    throw InputError(where(r) + ": column " + c + " = \"" + v + "\" (allowed: a number > 0)");
  return x;
}

}  // namespace ahbm::validate
