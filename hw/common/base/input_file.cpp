#include "hw/common/base/input_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "hw/common/base/error.h"

namespace ahbm {

void check_input_file(const std::string& path, const std::string& kind) {
  // Say why a file cannot be used before opening it: opening a FIFO blocks until a writer
  // comes, and reading a device like /dev/zero never ends.
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st))
    throw InputError(path + ": cannot open file: " + (ec ? ec.message() : std::string("no such file or directory")));
  if (std::filesystem::is_directory(st)) throw InputError(path + ": is a directory, not " + kind);
  if (!std::filesystem::is_regular_file(st)) throw InputError(path + ": is not a regular file");
}

std::string read_input_file(const std::string& path, const std::string& kind, uintmax_t max_bytes) {
  check_input_file(path, kind);
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > max_bytes)
    throw InputError(path + ": file is " + std::to_string(size) + " bytes (allowed: up to " + std::to_string(max_bytes) +
                     ")");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open file: " + std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InputError(path + ": cannot read file: " + std::strerror(errno));
  return ss.str();
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", unsigned(u));
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace ahbm
