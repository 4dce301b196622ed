#include "runtime/model/config.h"

#include <algorithm>
#include <cstdio>

#include "hw/common/base/recorded_schema.h"

namespace ahbm {

// Fields of HuggingFace config files that name or package the model but do not change its
// shape: accepted so that a downloaded config.json loads, and ignored.
const std::vector<std::string> kModelMetadataKeys = {"architectures", "model_type", "torch_dtype",
                                                     "transformers_version", "bos_token_id", "eos_token_id",
                                                     "max_position_embeddings"};

const std::vector<std::string>& model_config_keys() {
  static const std::vector<std::string> keys = {
      "hidden_size",  "intermediate_size", "num_attention_heads", "num_key_value_heads", "head_dim",
      "num_hidden_layers", "vocab_size",   "rms_norm_eps",        "rope_theta",          "hidden_act",
      "tie_word_embeddings", "attention_bias", "num_local_experts", "num_experts_per_tok"};
  return keys;
}

namespace {

// The parameter count in integers (total_params, int64) and its bytes in fp32 (uint64) must not
// wrap: each field is in range, but their product may not be (2^20 x 2^22 x 1024 experts x 1024
// layers printed a negative count). Counted in long double here, before anything multiplies.
void check_param_count(const JsonReader& r, const ModelConfig& m) {
  constexpr int64_t kMaxParams = int64_t(1) << 61;  // x 4 bytes (fp32) still fits uint64
  long double n = 0;
  for (const WeightTensor& t : layer_weights(m)) n += (long double)t.rows * t.cols * t.count;
  n *= m.num_hidden_layers;
  for (const WeightTensor& t : global_weights(m)) n += (long double)t.rows * t.cols * t.count;
  if (n <= (long double)kMaxParams) return;
  char about[32];
  std::snprintf(about, sizeof about, "%.3Lg", n);
  r.fail("hidden_size", "value " + std::to_string(m.hidden_size) + " with intermediate_size = " +
                            std::to_string(m.intermediate_size) + ", num_local_experts = " +
                            std::to_string(m.num_local_experts) + ", num_hidden_layers = " +
                            std::to_string(m.num_hidden_layers) + " and vocab_size = " + std::to_string(m.vocab_size) +
                            " gives about " + about + " parameters (allowed: up to 2^61 = " +
                            std::to_string(kMaxParams) + "; these fields multiply)");
}

}  // namespace

ModelConfig read_model_config(JsonReader& r) {
  ModelConfig m;
  // Bounds: head counts, head_dim and layers as the attention-only model block allows; widths
  // up to 2^20 (hidden) and 2^22 (FFN), vocabularies up to 2^24: far beyond public models, and
  // small enough that every byte count below stays well inside 64 bits.
  m.hidden_size = r.integer("hidden_size", 1, 1 << 20);
  m.num_attention_heads = int(r.integer("num_attention_heads", 1, 1024));
  // Bounds passed to the reader are fixed (they become the generated schema's); rules between
  // fields are checked after the reads.
  // Defaults given to the reader are constants (the schema shows them); this one is another field.
  m.num_key_value_heads =
      r.has("num_key_value_heads") ? int(r.integer("num_key_value_heads", 1, 1024)) : m.num_attention_heads;
  if (m.num_key_value_heads > m.num_attention_heads)
    r.fail("num_key_value_heads", "value " + std::to_string(m.num_key_value_heads) + " is out of range (allowed: " +
                                      range_text(int64_t(1), int64_t(m.num_attention_heads)) +
                                      "); at most num_attention_heads");
  if (m.num_attention_heads % m.num_key_value_heads != 0)
    r.fail("num_key_value_heads", "value " + std::to_string(m.num_key_value_heads) +
                                      " does not divide num_attention_heads = " + std::to_string(m.num_attention_heads) +
                                      " (each KV head serves the same number of query heads)");
  if (r.has("head_dim")) {
    m.head_dim = int(r.integer("head_dim", 1, 1024));
  } else {
    if (m.hidden_size % m.num_attention_heads != 0)
      r.fail("num_attention_heads", "value " + std::to_string(m.num_attention_heads) + " does not divide hidden_size = " +
                                        std::to_string(m.hidden_size) +
                                        " and head_dim is not given (give head_dim, or a head count dividing hidden_size)");
    const int64_t d = m.hidden_size / m.num_attention_heads;
    if (d > 1024)
      r.fail("hidden_size", "value " + std::to_string(m.hidden_size) + " gives head_dim = hidden_size / num_attention_heads = " +
                                std::to_string(d) + " (allowed: head_dim in " + range_text(int64_t(1), int64_t(1024)) + "; give head_dim)");
    m.head_dim = int(d);
  }
  m.intermediate_size = r.integer("intermediate_size", 1, 1 << 22);
  m.num_hidden_layers = int(r.integer("num_hidden_layers", 1, 1024));
  m.vocab_size = r.integer("vocab_size", 1, 1 << 24);
  m.rms_norm_eps = r.number("rms_norm_eps", m.rms_norm_eps, 1e-12, 1.0);
  m.rope_theta = r.number("rope_theta", m.rope_theta, 1.0, 1e12);
  const std::string act = r.string("hidden_act", hidden_act_name(m.hidden_act), hidden_act_names());
  m.hidden_act = HiddenAct(std::find(hidden_act_names().begin(), hidden_act_names().end(), act) - hidden_act_names().begin());
  m.tie_word_embeddings = r.boolean("tie_word_embeddings", m.tie_word_embeddings);
  m.attention_bias = r.boolean("attention_bias", m.attention_bias);
  m.num_local_experts = int(r.integer("num_local_experts", 1, 1, 1024));
  if (m.moe() && !r.has("num_experts_per_tok"))
    r.fail("num_experts_per_tok", "missing required field (a mixture of experts needs the experts per token)");
  m.num_experts_per_tok = int(r.integer("num_experts_per_tok", 1, 1, 1024));  // a dense FFN is one expert
  if (m.num_experts_per_tok > m.num_local_experts)
    r.fail("num_experts_per_tok", "value " + std::to_string(m.num_experts_per_tok) + " is out of range (allowed: " +
                                      range_text(int64_t(1), int64_t(m.num_local_experts)) +
                                      "); at most num_local_experts");
  for (const auto& k : kModelMetadataKeys) r.ignore(k);
  check_param_count(r, m);
  return m;
}

ModelConfig parse_model_config(const Json& j, const std::string& file, SchemaRecorder* rec) {
  JsonReader r(j, file);
  r.record_into(rec);
  ModelConfig m = read_model_config(r);
  r.finish();
  return m;
}

ModelConfig load_model_config(const std::string& path) { return parse_model_config(load_json_file(path), path); }

Json model_config_schema(const std::vector<std::string>& probes) {
  return recorded_schema(probes, "ahbm-sim model config",
                         "A HuggingFace-style config.json as the simulator reads it (docs/models.md): the fields it uses "
                         "and the metadata keys it accepts and ignores. Generated by `ahbm-sim schema model-config` from "
                         "runtime/model/config.cpp's reads.",
                         [](const Json& j, const std::string& f, SchemaRecorder* r) { parse_model_config(j, f, r); });
}

Json to_json(const ModelConfig& m) {
  Json j = {{"hidden_size", m.hidden_size},
            {"intermediate_size", m.intermediate_size},
            {"num_attention_heads", m.num_attention_heads},
            {"num_key_value_heads", m.num_key_value_heads},
            {"head_dim", m.head_dim},
            {"num_hidden_layers", m.num_hidden_layers},
            {"vocab_size", m.vocab_size},
            {"rms_norm_eps", m.rms_norm_eps},
            {"rope_theta", m.rope_theta},
            {"hidden_act", hidden_act_name(m.hidden_act)},
            {"tie_word_embeddings", m.tie_word_embeddings},
            {"attention_bias", m.attention_bias}};
  if (m.moe()) j.update({{"num_local_experts", m.num_local_experts}, {"num_experts_per_tok", m.num_experts_per_tok}});
  return j;
}

const std::vector<std::string>& model_fusion_keys() {
  static const std::vector<std::string> keys{"linear_rope", "norm", "attention"};
  return keys;
}

Json to_json(const ModelFusion& f) {
  return {{"linear_rope", f.linear_rope}, {"norm", f.norm}, {"attention", f.attention}};
}

std::vector<WeightTensor> layer_weights(const ModelConfig& m) {
  const int64_t h = m.hidden_size, q = m.q_dim(), kv = m.kv_dim(), f = m.intermediate_size;
  std::vector<WeightTensor> t = {{"input_layernorm", 1, h, 1},
                                 {"self_attn.q_proj", h, q, 1},
                                 {"self_attn.k_proj", h, kv, 1},
                                 {"self_attn.v_proj", h, kv, 1}};
  if (m.attention_bias)
    t.insert(t.end(), {{"self_attn.q_proj.bias", 1, q, 1}, {"self_attn.k_proj.bias", 1, kv, 1},
                       {"self_attn.v_proj.bias", 1, kv, 1}});
  t.insert(t.end(), {{"self_attn.o_proj", q, h, 1}, {"post_attention_layernorm", 1, h, 1}});
  const int64_t e = m.local_experts();  // an expert-parallel chip's share (the router scores all of them)
  if (m.moe()) t.push_back({"mlp.router", h, m.num_local_experts, 1});
  const bool x = m.moe();
  t.insert(t.end(), {{"mlp.gate_proj", h, f, e, x}, {"mlp.up_proj", h, f, e, x}, {"mlp.down_proj", f, h, e, x}});
  return t;
}

std::vector<WeightTensor> global_weights(const ModelConfig& m) {
  // The embedding table is vocab rows of hidden; held as (hidden x vocab) like the LM head so
  // that it is split along the vocabulary (a lookup reads one column).
  std::vector<WeightTensor> t = {{"embed_tokens", m.hidden_size, m.vocab_size, 1}, {"norm", 1, m.hidden_size, 1}};
  if (!m.tie_word_embeddings) t.push_back({"lm_head", m.hidden_size, m.vocab_size, 1});
  return t;
}

namespace {
int64_t sum(const std::vector<WeightTensor>& ts) {
  int64_t n = 0;
  for (const auto& t : ts) n += t.elements();
  return n;
}
}  // namespace

int64_t layer_params(const ModelConfig& m) { return sum(layer_weights(m)); }
int64_t total_params(const ModelConfig& m) { return layer_params(m) * m.num_hidden_layers + sum(global_weights(m)); }

int64_t active_params(const ModelConfig& m) {
  int64_t per_layer = 0;
  for (const auto& t : layer_weights(m)) per_layer += t.rows * t.cols * (t.expert ? m.num_experts_per_tok : 1);
  return per_layer * m.num_hidden_layers + sum(global_weights(m));
}

}  // namespace ahbm
