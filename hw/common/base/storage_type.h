#pragma once
// Storage type of Q, K and V (THInfer's "FP16 storage with FP32 accumulation"): what HBM holds,
// what DMA, the NoC and the Q buffer move, and what SRAM budgets count. Arithmetic, the softmax
// state (m, l, o) and the returned O stay fp32 whatever the storage type.
#include <cstdint>
#include <string>
#include <vector>

namespace ahbm {

enum class DType : uint8_t { fp32, fp16, bf16 };

inline uint64_t dtype_bytes(DType t) { return t == DType::fp32 ? 4 : 2; }
const char* dtype_name(DType t);
// The storage type called `name`, or false when there is none.
bool parse_dtype(const std::string& name, DType* out);
const std::vector<std::string>& dtype_names();

// Rounds to the nearest value the storage type can hold (ties to even) and back to fp32.
float round_to(DType t, float x);
// Packs n fp32 values into storage-type bytes (little-endian) and back. Encoding rounds.
void encode(DType t, const float* in, uint64_t n, unsigned char* out);
void decode(DType t, const unsigned char* in, uint64_t n, float* out);

}  // namespace ahbm
