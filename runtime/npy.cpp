#include "runtime/npy.h"

#include <fstream>
#include <stdexcept>

namespace ahbm {

namespace {
void write_npy(const std::string& path, const char* descr, const void* data, uint64_t bytes, uint64_t rows,
               uint64_t cols) {
  std::string header = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (" +
                       std::to_string(rows) + ", " + std::to_string(cols) + "), }";
  // Magic (6) + version (2) + header length (2) + header, padded with spaces to a multiple of 64,
  // ending in a newline.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error("cannot write " + path);
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = uint16_t(header.size());
  const char len_le[2] = {char(len & 0xff), char(len >> 8)};
  out.write(len_le, 2);
  out.write(header.data(), std::streamsize(header.size()));
  out.write(static_cast<const char*>(data), std::streamsize(bytes));
  out.close();  // flush now: a write error in the last buffer must not go unnoticed
  if (!out) throw std::runtime_error("cannot write " + path);
}
}  // namespace

void write_npy_f32(const std::string& path, const float* data, uint64_t rows, uint64_t cols) {
  static_assert(sizeof(float) == 4, "float32");
  write_npy(path, "<f4", data, rows * cols * 4, rows, cols);
}

void write_npy_bool(const std::string& path, const std::vector<uint8_t>& data, uint64_t rows, uint64_t cols) {
  write_npy(path, "|b1", data.data(), rows * cols, rows, cols);
}

}  // namespace ahbm
