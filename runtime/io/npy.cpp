#include "runtime/io/npy.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace ahbm {

namespace {
void write_npy(std::ostream& out, const char* descr, const void* data, uint64_t bytes, uint64_t rows,
               uint64_t cols) {
  std::string header = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (" +
                       std::to_string(rows) + ", " + std::to_string(cols) + "), }";
  // Magic (6) + version (2) + header length (2) + header, padded with spaces to a multiple of 64,
  // ending in a newline.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = uint16_t(header.size());
  const char len_le[2] = {char(len & 0xff), char(len >> 8)};
  out.write(len_le, 2);
  out.write(header.data(), std::streamsize(header.size()));
  out.write(static_cast<const char*>(data), std::streamsize(bytes));
}
}  // namespace

NpyArray read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[10];
  if (!in.read(head, 10) || std::string(head, 6) != "\x93NUMPY" || head[6] != 1)
    throw std::runtime_error(path + ": not a .npy v1 file");
  const size_t len = size_t(static_cast<unsigned char>(head[8])) | (size_t(static_cast<unsigned char>(head[9])) << 8);
  std::string header(len, ' ');
  in.read(header.data(), std::streamsize(len));
  NpyArray a;
  const auto field = [&](const std::string& key) {
    const size_t at = header.find(key);
    if (at == std::string::npos) throw std::runtime_error(path + ": header lacks " + key);
    return at + key.size();
  };
  const size_t d = field("'descr': '");
  a.descr = header.substr(d, header.find('\'', d) - d);
  if (header.find("'fortran_order': False") == std::string::npos) throw std::runtime_error(path + ": not C order");
  const size_t s = field("'shape': (");
  if (std::sscanf(header.c_str() + s, "%lu, %lu", &a.rows, &a.cols) != 2) throw std::runtime_error(path + ": not 2-D");
  const uint64_t elem = a.descr == "<f4" ? 4 : a.descr == "|b1" ? 1 : 0;
  if (!elem) throw std::runtime_error(path + ": unsupported dtype " + a.descr);
  a.bytes.resize(a.rows * a.cols * elem);
  if (!in.read(reinterpret_cast<char*>(a.bytes.data()), std::streamsize(a.bytes.size())))
    throw std::runtime_error(path + ": truncated");
  return a;
}

std::vector<float> NpyArray::as_f32() const {
  if (descr != "<f4") throw std::runtime_error("npy array is " + descr + ", not <f4");
  std::vector<float> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

std::vector<uint8_t> NpyArray::as_bool() const {
  if (descr != "|b1") throw std::runtime_error("npy array is " + descr + ", not |b1");
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

void write_npy_f32(std::ostream& out, const float* data, uint64_t rows, uint64_t cols) {
  static_assert(sizeof(float) == 4, "float32");
  write_npy(out, "<f4", data, rows * cols * 4, rows, cols);
}

void write_npy_bool(std::ostream& out, const std::vector<uint8_t>& data, uint64_t rows, uint64_t cols) {
  write_npy(out, "|b1", data.data(), rows * cols, rows, cols);
}

}  // namespace ahbm
