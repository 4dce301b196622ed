#pragma once
// Shared by the whole-model tests: the small dense model they run with values.
#include "runtime/model/config.h"

namespace ahbm::test {

// hidden 256, 4 heads of 64, 2 KV heads, FFN 512, 2 layers, vocab 1000 (31 or 32 LM-head columns
// per PE on the default chip: ragged shards).
inline ModelConfig small_model_config() {
  ModelConfig m;
  m.hidden_size = 256;
  m.intermediate_size = 512;
  m.num_attention_heads = 4;
  m.num_key_value_heads = 2;
  m.head_dim = 64;
  m.num_hidden_layers = 2;
  m.vocab_size = 1000;
  return m;
}

}  // namespace ahbm::test
