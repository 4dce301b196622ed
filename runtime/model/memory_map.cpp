#include "runtime/model/memory_map.h"

#include <algorithm>

#include "hw/common/base/error.h"
#include "hw/common/base/timing.h"

namespace ahbm {

MemoryMap plan_memory(const ModelConfig& m, DType dtype, const HwConfig& hw) {
  MemoryMap map;
  map.pes_per_group = hw.pes_per_group();
  map.pes = hw.groups * map.pes_per_group;
  map.capacity_per_pe = hw.pe.hbm.capacity_bytes;
  map.bytes_per_element = dtype_bytes(dtype);
  map.params = total_params(m);
  map.weight_bytes = uint64_t(map.params) * map.bytes_per_element;
  map.kv_heads = m.num_key_value_heads;
  map.kv_bytes_per_token = uint64_t(m.num_hidden_layers) * uint64_t(m.kv_dim()) * 2 * map.bytes_per_element;

  const uint64_t P = uint64_t(map.pes), b = map.bytes_per_element;
  std::vector<uint64_t>& load = map.weight_bytes_per_pe;
  load.assign(P, 0);
  std::vector<uint64_t> order(P);
  // Splits `cols` columns of `rows` elements over the PEs: floor(cols / P) each, and the cols mod
  // P extra columns to the least loaded PEs (ties: lower index). Giving each extra to a least
  // loaded PE keeps max - min load at most one column of the tallest tensor (list scheduling).
  const auto place = [&](uint64_t rows, uint64_t cols) {
    const uint64_t each = cols / P, extra = cols % P;
    std::vector<int> columns(P, int(each));
    if (extra > 0) {
      for (uint64_t p = 0; p < P; ++p) order[p] = p;
      const auto lighter = [&](uint64_t x, uint64_t y) { return load[x] != load[y] ? load[x] < load[y] : x < y; };
      std::nth_element(order.begin(), order.begin() + long(extra - 1), order.end(), lighter);
      // nth_element leaves the extra - 1 lightest before the extra-th: together the extra lightest.
      for (uint64_t i = 0; i < extra; ++i) {
        load[order[i]] += rows * b;
        ++columns[order[i]];
      }
    }
    for (uint64_t p = 0; p < P; ++p) load[p] += each * rows * b;
    return columns;
  };
  const auto add = [&](const WeightTensor& t, bool per_layer) {
    const uint64_t copies = per_layer ? uint64_t(m.num_hidden_layers) : 1;
    map.tensors.push_back({t.name, per_layer, t.elements(), uint64_t(t.elements()) * b * copies});
  };
  const std::vector<WeightTensor> layer = layer_weights(m), global = global_weights(m);
  for (const auto& t : layer) add(t, true);
  for (const auto& t : global) add(t, false);
  map.layer_columns.resize(size_t(m.num_hidden_layers));
  for (int l = 0; l < m.num_hidden_layers; ++l)
    for (const auto& t : layer)
      for (int64_t e = 0; e < t.count; ++e) {
        std::vector<int> columns = place(uint64_t(t.rows), uint64_t(t.cols));
        if (t.expert) map.layer_columns[size_t(l)][expert_tensor(t.name, int(e))] = columns;
        if (e == 0) map.layer_columns[size_t(l)][t.name] = std::move(columns);
      }
  map.layer0_columns = map.layer_columns.front();
  for (const auto& t : global) map.model_columns[t.name] = place(uint64_t(t.rows), uint64_t(t.cols));
  map.weight_bytes_max_pe = *std::max_element(map.weight_bytes_per_pe.begin(), map.weight_bytes_per_pe.end());
  return map;
}

std::string expert_tensor(const std::string& name, int e) {
  const size_t dot = name.find('.');
  return name.substr(0, dot) + ".experts." + std::to_string(e) + name.substr(dot);
}

std::string base_tensor(const std::string& name) {
  const size_t at = name.find(".experts.");
  if (at == std::string::npos) return name;
  const size_t end = name.find('.', at + 9);
  return end == std::string::npos ? name : name.substr(0, at) + name.substr(end);
}

void check_weights_fit(const MemoryMap& map, uint64_t slot_bytes, const std::string& hw_file,
                       const std::string& scenario_file) {
  const uint64_t need = map.weight_bytes_max_pe + slot_bytes;  // the weights and at least one KV page
  if (need <= map.capacity_per_pe) return;
  const uint64_t short_by = need - map.capacity_per_pe;
  // More PEs: the smallest group count whose even share of the weights leaves one page slot (the
  // slot shrinks with more groups, so this is an upper bound on what is needed).
  std::string more_groups;
  if (map.capacity_per_pe > slot_bytes) {
    const uint64_t room = map.capacity_per_pe - slot_bytes;
    const uint64_t groups = ceil_div(ceil_div(map.weight_bytes, room), uint64_t(map.pes_per_group));
    more_groups = ", or groups to about " + std::to_string(groups) + " (more PEs to spread the weights over)";
  }
  throw InputError(
      "model weights do not fit the chip's HBM: " + scenario_file + ": the model's " + std::to_string(map.params) +
      " parameters are " + std::to_string(map.weight_bytes) + " bytes over " + std::to_string(map.pes) +
      " PEs, the most loaded PE holds " + std::to_string(map.weight_bytes_max_pe) + " bytes of weights plus one KV page slot of " +
      std::to_string(slot_bytes) + " bytes, but " + hw_file + ": pe.hbm.capacity_bytes = " +
      std::to_string(map.capacity_per_pe) + ": short by " + std::to_string(short_by) + " bytes per PE; raise pe.hbm.capacity_bytes to at least " +
      std::to_string(need) + more_groups +
      // Halving the bytes helps only a model stored in fp32; fp16 and bf16 already are 16-bit.
      (map.bytes_per_element > 2 ? ", or store a 16-bit model.dtype" : "") +
      " (to simulate the attention core alone, give the attention-only model fields)");
}

Json memory_map_json(const MemoryMap& map, const std::string& config_file, uint64_t slot_bytes,
                     int64_t pages_per_pe, const std::vector<int64_t>& kv_peak_pages_per_group_pe) {
  Json tensors = Json::array();
  for (const auto& t : map.tensors)
    tensors.push_back({{"name", t.name}, {"scope", t.per_layer ? "per_layer" : "model"},
                       {"elements", t.elements}, {"bytes", t.bytes}});
  std::vector<uint64_t> kv_pe, free_pe;
  uint64_t kv_total = 0;
  for (int p = 0; p < map.pes; ++p) {
    const size_t gp = size_t(p % map.pes_per_group);
    const bool holds_kv = p / map.pes_per_group < map.kv_heads && gp < kv_peak_pages_per_group_pe.size();
    const uint64_t kv = holds_kv ? uint64_t(kv_peak_pages_per_group_pe[gp]) * slot_bytes : 0;
    const uint64_t used = map.weight_bytes_per_pe[size_t(p)] + kv;
    kv_pe.push_back(kv);
    free_pe.push_back(map.capacity_per_pe - std::min(map.capacity_per_pe, used));
    kv_total += kv;
  }
  const uint64_t capacity = map.capacity_per_pe * uint64_t(map.pes);
  return Json{
      {"config_file", config_file},
      {"params", map.params},
      {"bytes_per_element", map.bytes_per_element},
      {"pes", map.pes},
      {"pes_per_group", map.pes_per_group},
      {"capacity_bytes_per_pe", map.capacity_per_pe},
      {"capacity_bytes", capacity},
      {"weights", {{"bytes", map.weight_bytes},
                   {"max_bytes_on_one_pe", map.weight_bytes_max_pe},
                   {"tensors", tensors},
                   {"placement", "every tensor split along its output dimension over every PE of the chip"}}},
      {"kv", {{"bytes_per_token", map.kv_bytes_per_token},
              {"page_slot_bytes", slot_bytes},
              {"pages_per_pe_capacity", pages_per_pe},
              {"pe_peak_bytes_sum", kv_total}}},
      {"free_bytes", capacity - std::min(capacity, map.weight_bytes + kv_total)},
      {"free_bytes_min_pe", *std::min_element(free_pe.begin(), free_pe.end())},
      {"per_pe", {{"weight_bytes", map.weight_bytes_per_pe}, {"kv_peak_bytes", kv_pe}, {"free_bytes", free_pe},
                  {"note", "chip PE g x pes_per_group + p (group g, PE p of the group)"}}},
  };
}

}  // namespace ahbm
