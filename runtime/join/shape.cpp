#include "runtime/join/shape.h"

namespace ahbm::join {

int64_t ModelDims::kv_bytes_per_token() const {
  return int64_t(2) * head_dim * bytes_per_element * num_kv_heads * layers;
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

PrefillShape prefill_shape(const ModelDims& m, int64_t prefix_tokens, int64_t new_tokens) {
  PrefillShape s;
  s.prefix_tokens = prefix_tokens;
  s.new_tokens = new_tokens;
  s.q_rows_per_kv_head = new_tokens * m.q_per_kv();
  s.q_rows_total = s.q_rows_per_kv_head * m.num_kv_heads;
  s.visible_pairs_per_q_head = new_tokens * prefix_tokens + new_tokens * (new_tokens + 1) / 2;
  s.attention_flops = int64_t(4) * m.head_dim * s.visible_pairs_per_q_head * m.num_q_heads * m.layers;
  s.new_kv_bytes = new_tokens * m.kv_bytes_per_token();
  s.context_tokens = prefix_tokens + new_tokens;
  s.kv_read_per_decode_token_bytes = s.context_tokens * m.kv_bytes_per_token();
  s.kv_read_added_per_decode_token_bytes = s.new_kv_bytes;
  if (m.context_window > 0) s.context_window_fraction = double(s.context_tokens) / double(m.context_window);
  return s;
}

int64_t decode_kv_read_bytes(const ModelDims& m, int64_t context_tokens, int64_t steps) {
  return (steps * context_tokens + steps * (steps - 1) / 2) * m.kv_bytes_per_token();
}

}  // namespace ahbm::join
