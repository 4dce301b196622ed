#pragma once
// NumPy .npy v1.0 files, little-endian: float32 ('<f4') and bool ('|b1') 2-D arrays.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace ahbm {

// The caller checks the stream (OutFile::close, runtime/io/output_dir.h).
void write_npy_f32(std::ostream& out, const float* data, uint64_t rows, uint64_t cols);
void write_npy_bool(std::ostream& out, const std::vector<uint8_t>& data, uint64_t rows, uint64_t cols);

// Reads back a 2-D array these writers produced ('<f4' or '|b1', C order); throws
// std::runtime_error on anything else.
struct NpyArray {
  uint64_t rows = 0, cols = 0;
  std::string descr;
  std::vector<unsigned char> bytes;
  std::vector<float> as_f32() const;
  std::vector<uint8_t> as_bool() const;
};
NpyArray read_npy(const std::string& path);

}  // namespace ahbm
