#pragma once
// Closed forms for the main agent's continuation prefill after a join (AHBM note 5.4, 5.11)
// and for a reducer agent's work (5.9). Everything here is a function of the model
// dimensions and two token counts, so the runtime can size KV pages and hardware jobs from
// it and tests can check simulated numbers against it.
#include <cstdint>

#include "hw/common/base/json_reader.h"

namespace ahbm::join {

// Model dimensions the join needs (the runtime scenario's model block has the same fields).
// Defaults: a LLaMA-style GQA model (32 q heads, 8 KV heads, head_dim 128, 32 layers) with
// 2-byte (fp16/bf16) KV storage and no context window given.
struct ModelDims {
  int num_q_heads = 32;
  int num_kv_heads = 8;
  int head_dim = 128;
  int layers = 32;
  int bytes_per_element = 2;
  int64_t context_window = 0;  // tokens; 0 = not given (no fraction reported)

  int q_per_kv() const { return num_q_heads / num_kv_heads; }
  // K and V of one token over all KV heads and layers.
  int64_t kv_bytes_per_token() const;
};

// Reads {num_q_heads, num_kv_heads, head_dim, layers, bytes_per_element?, context_window?};
// num_q_heads must be a multiple of num_kv_heads.
ModelDims read_model_dims(JsonReader m);

// A prefill of `new_tokens` tokens on top of `prefix_tokens` already in the KV cache:
// each new token's query rows see the whole prefix and, causally, the new tokens up to and
// including themselves.
struct PrefillShape {
  int64_t prefix_tokens = 0;
  int64_t new_tokens = 0;
  int64_t q_rows_per_kv_head = 0;        // new_tokens * q heads per KV head (rows of one job)
  int64_t q_rows_total = 0;              // ... * num_kv_heads (per layer)
  int64_t visible_pairs_per_q_head = 0;  // new*prefix + new*(new+1)/2 (per layer)
  int64_t attention_flops = 0;           // 4*head_dim*pairs*num_q_heads*layers (QK^T and PV)
  int64_t new_kv_bytes = 0;              // new_tokens * 2*head_dim*bytes*kv_heads*layers
  int64_t context_tokens = 0;            // prefix + new after the prefill
  // KV bytes the next decode token reads (the whole context at the end of the prefill; each
  // later decode step reads one token more), and the part of it the new tokens added.
  int64_t kv_read_per_decode_token_bytes = 0;
  int64_t kv_read_added_per_decode_token_bytes = 0;
  double context_window_fraction = -1.0;  // context_tokens / window; -1 when no window given
};

PrefillShape prefill_shape(const ModelDims& m, int64_t prefix_tokens, int64_t new_tokens);

// KV bytes read by `steps` decode steps that start on a context of `context_tokens` tokens:
// step t (0-based) reads context_tokens + t tokens.
int64_t decode_kv_read_bytes(const ModelDims& m, int64_t context_tokens, int64_t steps);

}  // namespace ahbm::join
