#pragma once
// NumPy .npy v1.0 files, little-endian: float32 ('<f4') and bool ('|b1') 2-D arrays.
#include <cstdint>
#include <string>
#include <vector>

namespace ahbm {

void write_npy_f32(const std::string& path, const float* data, uint64_t rows, uint64_t cols);
void write_npy_bool(const std::string& path, const std::vector<uint8_t>& data, uint64_t rows, uint64_t cols);

}  // namespace ahbm
