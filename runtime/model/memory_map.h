#pragma once
// Capacity planning (docs/models.md, "Memory map"): where a whole model's weights sit in the
// chip's HBM slices, how much HBM each PE has left for the KV cache, and the shortfall when the
// model does not fit.
//
// Placement: every weight tensor is split along its output dimension (N, the columns of
// y = x W; the vocabulary for the embedding and LM head; each expert separately) over every PE
// of the chip, groups x group.cubes x cube.pes of them, in contiguous column shards of
// floor(N / P) or ceil(N / P) columns. The N mod P extra columns of a tensor go to the PEs
// holding the fewest bytes so far (ties: lower index), so no PE holds more than the average plus
// one column of the tallest tensor (nor less than the average minus one). Weights are stored
// in the scenario's model.dtype. The KV cache takes what is left:
// the page pool of every PE is (pe.hbm.capacity_bytes - weight bytes of the most loaded PE)
// / page slot bytes.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hw/common/config/hw_config.h"
#include "hw/common/base/storage_type.h"
#include "runtime/model/config.h"

namespace ahbm {

struct TensorBytes {
  std::string name;
  bool per_layer = true;   // false: embedding, final norm, LM head (held once)
  int64_t elements = 0;    // one layer's (or the single copy's)
  uint64_t bytes = 0;      // elements x dtype bytes, over all layers for per-layer tensors
};

struct MemoryMap {
  int pes = 0;                      // chip PEs holding weights (groups x group.cubes x cube.pes)
  int pes_per_group = 0;
  uint64_t capacity_per_pe = 0;     // pe.hbm.capacity_bytes
  uint64_t bytes_per_element = 0;   // of the storage type
  std::vector<TensorBytes> tensors;
  int64_t params = 0;               // total_params of the model
  uint64_t weight_bytes = 0;        // params x bytes per element
  std::vector<uint64_t> weight_bytes_per_pe;  // chip PE (g * pes_per_group + p)
  uint64_t weight_bytes_max_pe = 0;
  uint64_t kv_bytes_per_token = 0;  // K and V of one token, all layers and KV heads
  int kv_heads = 0;                 // groups g >= kv_heads hold no KV
  // Per tensor of layer 0 (its first expert for an MoE layer; every expert e of an MoE layer's
  // FFN tensors also under expert_tensor(name, e)), the columns each chip PE holds:
  // the shards the weight GEMMs read (runtime/model/layer_plan.h).
  std::map<std::string, std::vector<int>> layer0_columns;
  // The same for every layer (layer_columns[0] = layer0_columns): the extra columns of a tensor
  // whose N is not a multiple of P go to other PEs in other layers.
  std::vector<std::map<std::string, std::vector<int>>> layer_columns;
  // The same for the tensors held once (embed_tokens, norm, lm_head unless tied): the LM head's
  // GEMM reads its shards from here (runtime/model/layer_plan.h lm_head_gemm).
  std::map<std::string, std::vector<int>> model_columns;

  uint64_t free_for_kv() const {
    return capacity_per_pe > weight_bytes_max_pe ? capacity_per_pe - weight_bytes_max_pe : 0;
  }
};

MemoryMap plan_memory(const ModelConfig& m, DType dtype, const HwConfig& hw);

// The name expert `e`'s copy of an FFN tensor has in layer_columns ("mlp.gate_proj", 3 ->
// "mlp.experts.3.gate_proj", HuggingFace's per-expert naming), and back (other names unchanged).
std::string expert_tensor(const std::string& name, int e);
std::string base_tensor(const std::string& name);

// Throws InputError when the weights leave less than one KV page slot (`slot_bytes`) on the
// most loaded PE: the message names the bytes that do not fit, by how much, and the parameters
// to change (pe.hbm.capacity_bytes, groups, model.dtype). `hw_file` and `scenario_file` name the
// inputs in the message.
void check_weights_fit(const MemoryMap& map, uint64_t slot_bytes, const std::string& hw_file,
                       const std::string& scenario_file);

// The memory map for summary.json: the weights by tensor and per PE, the KV cache's peak per
// PE (pages at peak of each PE of a group, the same in every group, x the slot bytes) and the
// room left on each PE.
Json memory_map_json(const MemoryMap& map, const std::string& config_file, uint64_t slot_bytes,
                     int64_t pages_per_pe, const std::vector<int64_t>& kv_peak_pages_per_group_pe);

}  // namespace ahbm
