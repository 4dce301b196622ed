#pragma once
// A whole decoder-only transformer model, described as a HuggingFace-style config.json
// (docs/models.md): the dimensions every decoder layer, the embedding and the LM head follow.
// The attention core (today's simulation) takes its head counts and head_dim from it; the
// capacity planner (memory_map.h) takes the weight shapes from it.
#include <cstdint>
#include <string>
#include <vector>

#include "hw/common/model/hidden_act.h"
#include "hw/common/base/json_reader.h"

namespace ahbm {

// The gate activation of the feed-forward block (HiddenAct, hw/common/model/hidden_act.h): every
// layer is LLaMA-style gated (down(act(gate(x)) * up(x))); the name only selects the activation.

struct ModelConfig {
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;  // per expert for MoE
  int num_attention_heads = 0;
  int num_key_value_heads = 0;
  int head_dim = 0;               // default hidden_size / num_attention_heads
  int num_hidden_layers = 0;
  int64_t vocab_size = 0;
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  HiddenAct hidden_act = HiddenAct::silu;
  bool tie_word_embeddings = false;  // LM head shares the embedding table
  bool attention_bias = false;       // Q, K, V projections carry a bias (Qwen2)
  int num_local_experts = 1;         // 1: a dense FFN; > 1: MoE with a router
  int num_experts_per_tok = 1;
  // Not a HuggingFace field: the expert-parallel split of a chip's model (runtime/model/parallel.h
  // chip_model). The chip holds num_local_experts / expert_parallel of every MoE layer's experts;
  // the router still scores all num_local_experts (it picks experts on every chip).
  int expert_parallel = 1;

  bool moe() const { return num_local_experts > 1; }
  int local_experts() const { return num_local_experts / expert_parallel; }  // the experts a chip holds
  int64_t q_dim() const { return int64_t(num_attention_heads) * head_dim; }    // Q projection outputs
  int64_t kv_dim() const { return int64_t(num_key_value_heads) * head_dim; }  // K (and V) projection outputs
};

// Which operators of a whole model run fused (docs/models.md "Fusion choices"; the scenario's
// model.fusion, THInfer's density-driven fusion). All true, the default, is the fused layer: an
// unfused operator runs as a kernel of its own with an HBM round trip and a launch.
struct ModelFusion {
  bool linear_rope = true;  // RoPE in qkv_proj's epilogue; false: a `rope` kernel after qkv_proj
  bool norm = true;         // each RMSNorm in the next GEMM's prologue; false: a norm kernel before it
  bool attention = true;    // phased attention fusion: the scores S stay in SRAM; false: each KV
                            // block's S is written to HBM and read back between two kernels
  bool all() const { return linear_rope && norm && attention; }
};
// model.fusion's keys in order, and the echo of a choice.
const std::vector<std::string>& model_fusion_keys();
Json to_json(const ModelFusion& f);

// Reads the HuggingFace fields from `r` (a config file's root, or the scenario's inline
// "model" object; other keys of that object are the caller's) and validates them: ranges and
// relations, each error naming the field, the value and the allowed range. Does not call
// r.finish(). Metadata keys of HuggingFace files that do not change the model's shape
// (kModelMetadataKeys) are accepted and ignored.
ModelConfig read_model_config(JsonReader& r);
extern const std::vector<std::string> kModelMetadataKeys;
// A config file: read_model_config on its root, unknown keys rejected (messages name `path`).
ModelConfig load_model_config(const std::string& path);
// The same on a parsed document; `rec` (optional) records every field read (SchemaRecorder).
ModelConfig parse_model_config(const Json& j, const std::string& file, SchemaRecorder* rec = nullptr);
// The model-config format's JSON Schema, generated from read_model_config's reads over `probes`.
Json model_config_schema(const std::vector<std::string>& probes);
// The HuggingFace keys read_model_config understands (for callers that tell them apart).
const std::vector<std::string>& model_config_keys();
Json to_json(const ModelConfig& m);  // every field, resolved (head_dim filled in)

// One weight tensor of the model: `count` matrices of rows x cols elements (count > 1: the
// experts of an MoE layer). cols is the output dimension (N of the GEMM y = x W), rows the
// input (K); vectors (norm weights, biases) have rows = 1.
struct WeightTensor {
  std::string name;
  int64_t rows = 0, cols = 0;
  int64_t count = 1;
  bool expert = false;  // one copy per expert (an MoE layer's FFN tensors), even when a chip holds one
  int64_t elements() const { return rows * cols * count; }
};

// The tensors of one decoder layer (every layer has the same) and those outside the layers
// (embedding, final norm, LM head unless tied), in the order the memory map lists them.
std::vector<WeightTensor> layer_weights(const ModelConfig& m);
std::vector<WeightTensor> global_weights(const ModelConfig& m);
int64_t layer_params(const ModelConfig& m);
int64_t total_params(const ModelConfig& m);
// Parameters one token touches: the layers with only num_experts_per_tok experts each.
int64_t active_params(const ModelConfig& m);

}  // namespace ahbm
