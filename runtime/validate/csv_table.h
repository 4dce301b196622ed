#pragma once
// What `ahbm-sim validate attacc` and `validate cent` share: reading a reference CSV (header row,
// comma-separated cells, no quoting, as the artifacts write them), checking cells with errors that
// name the line, column, value and allowed range, and where the shipped presets live.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ahbm::validate {

// The directory of the presets shipped with the sources (hw/configs).
std::string default_preset_dir();

struct CsvTable {
  std::string path;
  std::vector<std::string> header;        // as written (trimmed)
  std::map<std::string, size_t> column;   // header name -> index
  struct Row {
    int line = 0;                         // 1-based line number in the file
    std::vector<std::string> cells;       // trimmed
  };
  std::vector<Row> rows;                  // blank lines skipped

  bool has(const std::string& c) const { return column.count(c) > 0; }
  // InputError naming the missing columns when one of `needed` is absent.
  void require(const std::vector<std::string>& needed) const;
  std::string where(const Row& r) const { return path + " line " + std::to_string(r.line); }
  const std::string& cell(const Row& r, const std::string& c) const { return r.cells[column.at(c)]; }
  // The cell as an integer in [lo, hi], or an InputError naming line, column, value and range.
  int64_t integer(const Row& r, const std::string& c, int64_t lo, int64_t hi) const;
  // The cell as a finite number > 0, or an InputError.
  double positive(const Row& r, const std::string& c) const;
};

// Reads `path`: a header row and at least one data row, every row as wide as the header.
CsvTable read_csv_table(const std::string& path);

}  // namespace ahbm::validate
