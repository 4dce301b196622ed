#include "runtime/join/shape.h"

#include <string>

#include "hw/common/base/checked_math.h"

namespace ahbm::join {

int64_t ModelDims::kv_bytes_per_token() const {
  return int64_t(2) * head_dim * bytes_per_element * num_kv_heads * layers;  // at most 2^34
}

ModelDims read_model_dims(JsonReader m) {
  ModelDims d;
  d.num_q_heads = int(m.integer("num_q_heads", d.num_q_heads, 1, 1024));
  d.num_kv_heads = int(m.integer("num_kv_heads", d.num_kv_heads, 1, 1024));
  if (d.num_q_heads % d.num_kv_heads != 0)
    m.fail("num_kv_heads", "value " + std::to_string(d.num_kv_heads) + " does not divide num_q_heads " +
                               std::to_string(d.num_q_heads) + " (allowed: divisors of num_q_heads)");
  d.head_dim = int(m.integer("head_dim", d.head_dim, 1, 1024));
  d.layers = int(m.integer("layers", d.layers, 1, 1024));
  d.bytes_per_element = int(m.integer("bytes_per_element", d.bytes_per_element, 1, 8));
  d.context_window = m.integer("context_window", 0, 0, int64_t(1) << 40);
  m.finish();
  return d;
}

// Token counts reach kMaxTokens (2^30) and a token's KV 2^34 bytes, so bytes and FLOPs are
// counted with checked_mul/checked_add: beyond int64 they are an InputError, never wrapped.
PrefillShape prefill_shape(const ModelDims& m, int64_t prefix_tokens, int64_t new_tokens) {
  const std::string of = " of a prefill of " + std::to_string(new_tokens) + " tokens after " +
                         std::to_string(prefix_tokens) + " (num_q_heads = " + std::to_string(m.num_q_heads) +
                         ", head_dim = " + std::to_string(m.head_dim) + ", layers = " + std::to_string(m.layers) + ")";
  PrefillShape s;
  s.prefix_tokens = prefix_tokens;
  s.new_tokens = new_tokens;
  s.q_rows_per_kv_head = checked_mul(new_tokens, m.q_per_kv(), "Q rows" + of);
  s.q_rows_total = checked_mul(s.q_rows_per_kv_head, m.num_kv_heads, "Q rows" + of);
  s.visible_pairs_per_q_head = checked_add(checked_mul(new_tokens, prefix_tokens, "visible pairs" + of),
                                           checked_mul(new_tokens, new_tokens + 1, "visible pairs" + of) / 2,
                                           "visible pairs" + of);
  int64_t flops = checked_mul(int64_t(4) * m.head_dim, s.visible_pairs_per_q_head, "attention FLOPs" + of);
  s.attention_flops = checked_mul(checked_mul(flops, m.num_q_heads, "attention FLOPs" + of), m.layers, "attention FLOPs" + of);
  s.new_kv_bytes = checked_mul(new_tokens, m.kv_bytes_per_token(), "new KV bytes" + of);
  s.context_tokens = checked_add(prefix_tokens, new_tokens, "context tokens" + of);
  s.kv_read_per_decode_token_bytes = checked_mul(s.context_tokens, m.kv_bytes_per_token(), "KV bytes per decode token" + of);
  s.kv_read_added_per_decode_token_bytes = s.new_kv_bytes;
  if (m.context_window > 0) s.context_window_fraction = double(s.context_tokens) / double(m.context_window);
  return s;
}

int64_t decode_kv_read_bytes(const ModelDims& m, int64_t context_tokens, int64_t steps) {
  const std::string what = "KV bytes read by " + std::to_string(steps) + " decode steps after " +
                           std::to_string(context_tokens) + " tokens";
  const int64_t reads = checked_add(checked_mul(steps, context_tokens, what), checked_mul(steps, steps - 1, what) / 2, what);
  return checked_mul(reads, m.kv_bytes_per_token(), what);
}

}  // namespace ahbm::join
