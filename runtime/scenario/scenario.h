#pragma once
// A workload scenario (JSON, documented in docs/scenarios.md): the model dimensions and storage
// type, the KV paging and placement, the shared prefix, the sub-agents forked from it, and the
// phases run in order (prefill, fanout, decode, join).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hw/common/base/json_reader.h"
#include "hw/common/base/storage_type.h"
#include "runtime/kv/placement.h"
#include "runtime/model/config.h"
#include "runtime/model/parallel.h"

namespace ahbm {

namespace join {
struct JoinSpec;  // runtime/join/spec.h: the "join" block (strategy, results, options)
}

struct AgentSpec {
  std::string name;
  int new_tokens = 0;      // private instruction tokens prefilled at the fan-out
  int decode_tokens = -1;  // tokens it decodes before it finishes; -1: every decode step
};

// The model: either the attention-only fields (head_dim, num_q_heads, num_kv_heads, layers), or
// a whole model (`full`, from a config file or inline HuggingFace fields, docs/models.md) from
// which those four are derived. The attention core reads only the four.
struct ModelSpec {
  int head_dim = 128;
  int num_q_heads = 1;
  int num_kv_heads = 1;
  int layers = 1;  // the whole model's (a pipelined model's chips hold layers_per_chip() of them)
  DType dtype = DType::fp32;  // storage type of Q, K, V (and of the weights of a full model)
  // null: attention only. The model one chip runs: with model.parallel the tensor-parallel shard
  // with the largest pipeline stage's layers (runtime/model/parallel.h chip_model), whose heads
  // the fields above follow; `whole` is the model as given (the same object without a split).
  std::shared_ptr<const ModelConfig> full;
  std::shared_ptr<const ModelConfig> whole;
  Parallelism parallel;     // model.parallel (a whole model only); tp = 1 by default
  std::string config_file;  // the resolved model.config path ("" when inline or attention only)
  ModelFusion fusion;       // a whole model's fusion choices (model.fusion; all fused by default)
  int q_per_kv() const { return num_q_heads / num_kv_heads; }
  // The layers whose KV one chip keeps: all of them, or the largest pipeline stage's.
  int layers_per_chip() const { return full ? full->num_hidden_layers : layers; }
};

struct KvSpec {
  int page_tokens = 16;
  PrefixPlacement prefix_placement = PrefixPlacement::contiguous;
  std::string private_placement = "balanced";
};

enum class PhaseType { prefill, fanout, decode, join };
const char* phase_name(PhaseType t);

struct PhaseSpec {
  PhaseType type = PhaseType::fanout;
  // prefill: prefix tokens computed (the rest counts as cached); join: main-agent tokens (with a
  // "join" block: tokens the main agent decodes after the join prefill, its continuation)
  int tokens = 0;
  int steps = 0;   // decode
};

struct Scenario {
  std::string name;
  std::string description;
  ModelSpec model;
  KvSpec kv;
  int shared_prefix_tokens = 0;
  std::vector<AgentSpec> agents;
  std::vector<PhaseSpec> phases;  // in order; default: one fanout (the prefix is already cached)
  uint64_t seed = 1;
  std::shared_ptr<const join::JoinSpec> join;  // null: the join phase runs `tokens` plain tokens

  int total_rows() const;  // new tokens of every agent (rows per query head at the fan-out)
  const PhaseSpec* phase(PhaseType t) const;
};

// The name the main (parent) agent carries in traces and summaries; no sub-agent may use it.
inline const char* kMainAgentName = "main";

// `rec` (optional) records every field the parser reads (hw/common/base/json_reader.h SchemaRecorder).
Scenario parse_scenario(const Json& j, const std::string& file, SchemaRecorder* rec = nullptr);
// The scenario format's JSON Schema, generated from the parser's reads over `probes` (scenario
// files that between them contain every optional block; docs/schema/README.md).
Json scenario_schema(const std::vector<std::string>& probes);
Scenario load_scenario(const std::string& path);
Json to_json(const Scenario& s);

}  // namespace ahbm
