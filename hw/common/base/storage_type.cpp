#include "hw/common/base/storage_type.h"

#include <cstring>

#include <Eigen/Core>

namespace ahbm {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::fp16: return "fp16";
    case DType::bf16: return "bf16";
    default: return "fp32";
  }
}

const std::vector<std::string>& dtype_names() {
  static const std::vector<std::string> names = {"fp32", "fp16", "bf16"};
  return names;
}

bool parse_dtype(const std::string& name, DType* out) {
  for (DType t : {DType::fp32, DType::fp16, DType::bf16})
    if (name == dtype_name(t)) {
      *out = t;
      return true;
    }
  return false;
}

float round_to(DType t, float x) {
  switch (t) {
    case DType::fp16: return float(Eigen::half(x));
    case DType::bf16: return float(Eigen::bfloat16(x));
    default: return x;
  }
}

void encode(DType t, const float* in, uint64_t n, unsigned char* out) {
  if (t == DType::fp32) {
    if (n) std::memcpy(out, in, n * 4);  // an empty shard has null pointers: memcpy(nullptr) is UB
    return;
  }
  for (uint64_t i = 0; i < n; ++i) {
    const uint16_t bits = t == DType::fp16 ? Eigen::half_impl::raw_half_as_uint16(Eigen::half(in[i]))
                                           : Eigen::bfloat16_impl::raw_bfloat16_as_uint16(Eigen::bfloat16(in[i]));
    out[2 * i] = static_cast<unsigned char>(bits & 0xff);
    out[2 * i + 1] = static_cast<unsigned char>(bits >> 8);
  }
}

void decode(DType t, const unsigned char* in, uint64_t n, float* out) {
  if (t == DType::fp32) {
    if (n) std::memcpy(out, in, n * 4);  // an empty shard has null pointers: memcpy(nullptr) is UB
    return;
  }
  for (uint64_t i = 0; i < n; ++i) {
    const uint16_t bits = uint16_t(in[2 * i] | (uint16_t(in[2 * i + 1]) << 8));
    out[i] = t == DType::fp16 ? float(Eigen::half(Eigen::half_impl::raw_uint16_to_half(bits)))
                              : float(Eigen::bfloat16(Eigen::bfloat16_impl::raw_uint16_to_bfloat16(bits)));
  }
}

}  // namespace ahbm
