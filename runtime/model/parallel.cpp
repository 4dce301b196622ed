#include "runtime/model/parallel.h"

#include <stdexcept>

#include "hw/common/base/error.h"

namespace ahbm {

std::string tensor_parallel_problem(const ModelConfig& m, int tp) {
  if (tp < 1) return "is not a rank count (allowed: 1 or more)";
  if (m.num_attention_heads % tp != 0)
    return "does not divide num_attention_heads = " + std::to_string(m.num_attention_heads) +
           " (each rank computes the same number of query heads)";
  const int kv = m.num_key_value_heads;
  if (kv % tp != 0 && tp % kv != 0)
    return "and num_key_value_heads = " + std::to_string(kv) +
           " are not multiples of one another (KV heads are split over the ranks, or each replicated on tp / KV ranks)";
  if (m.intermediate_size % tp != 0)
    return "does not divide intermediate_size = " + std::to_string(m.intermediate_size) +
           " (gate/up are split by columns, down by rows)";
  return "";
}

ModelConfig tensor_parallel_shard(const ModelConfig& m, int tp) {
  if (tp == 1) return m;
  const std::string problem = tensor_parallel_problem(m, tp);
  if (!problem.empty()) throw std::logic_error("tensor_parallel_shard: tp " + std::to_string(tp) + " " + problem);
  ModelConfig s = m;
  s.num_attention_heads = m.num_attention_heads / tp;
  const int kv = m.num_key_value_heads;
  s.num_key_value_heads = kv % tp == 0 ? kv / tp : 1;
  s.intermediate_size = m.intermediate_size / tp;
  s.vocab_size = (m.vocab_size + tp - 1) / tp;
  return s;  // head_dim is resolved in m already, so the shard keeps it
}

std::string Parallelism::name() const {
  std::vector<std::string> parts;
  if (dp > 1) parts.push_back("dp = " + std::to_string(dp));
  if (tp > 1 || (pp == 1 && dp == 1)) parts.push_back("tp = " + std::to_string(tp));
  if (pp > 1) parts.push_back("pp = " + std::to_string(pp));
  std::string s = "model.parallel.";
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? " x " : "") + parts[i];
  if (ep > 1) s += ", ep = " + std::to_string(ep);  // on the TP group's chips: not a factor of the chip count
  return s;
}

std::string pipeline_parallel_problem(const ModelConfig& m, int pp) {
  if (pp < 1) return "is not a stage count (allowed: 1 or more)";
  if (pp > m.num_hidden_layers)
    return "is more stages than num_hidden_layers = " + std::to_string(m.num_hidden_layers) +
           " (allowed: 1 to " + std::to_string(m.num_hidden_layers) + "; each stage holds at least one layer)";
  return "";
}

std::vector<int> pipeline_stage_layers(int layers, int pp) {
  std::vector<int> out(size_t(pp), layers / pp);
  for (int s = 0; s < layers % pp; ++s) ++out[size_t(s)];
  return out;
}

std::string expert_parallel_problem(const ModelConfig& m, int ep, int tp) {
  if (ep < 1) return "is not a rank count (allowed: 1 or more)";
  if (ep == 1) return "";
  if (!m.moe())
    return "needs an MoE model, and num_local_experts = " + std::to_string(m.num_local_experts) +
           " (a dense FFN has no experts to split; allowed: 1)";
  std::string divisors;
  for (int d = 1; d <= m.num_local_experts; ++d)
    if (m.num_local_experts % d == 0) divisors += (divisors.empty() ? "" : ", ") + std::to_string(d);
  if (m.num_local_experts % ep != 0)
    return "does not divide num_local_experts = " + std::to_string(m.num_local_experts) +
           " (each chip holds the same number of whole experts; allowed: " + divisors + ")";
  if (ep != tp)
    return "is not tp = " + std::to_string(tp) +
           " (the experts are split over the chips of the tensor-parallel group, which run the attention; allowed: 1, "
           "or ep = tp with tp one of " + divisors + ")";
  return "";
}

ModelConfig chip_model(const ModelConfig& m, const Parallelism& p) {
  ModelConfig c = tensor_parallel_shard(m, p.tp);
  if (p.ep > 1) {
    const std::string problem = expert_parallel_problem(m, p.ep, p.tp);
    if (!problem.empty()) throw std::logic_error("chip_model: ep " + std::to_string(p.ep) + " " + problem);
    c.intermediate_size = m.intermediate_size;  // whole experts, E/ep of them
    c.expert_parallel = p.ep;
  }
  if (p.pp == 1) return c;
  const std::string problem = pipeline_parallel_problem(m, p.pp);
  if (!problem.empty()) throw std::logic_error("chip_model: pp " + std::to_string(p.pp) + " " + problem);
  c.num_hidden_layers = pipeline_stage_layers(m.num_hidden_layers, p.pp).front();
  return c;
}

void check_per_chip(const Parallelism& p, const std::function<void()>& check) {
  if (p.none()) return check();
  try {
    check();
  } catch (const InputError& e) {
    std::string holds =
        p.pp == 1 ? "1/" + std::to_string(p.tp) + " of every layer"
                  : (p.tp == 1 ? std::string() : "1/" + std::to_string(p.tp) + " of ") + "the layers of the largest of " +
                        std::to_string(p.pp) + " stages, the embedding and the LM head";
    if (p.ep > 1) holds += ", its experts whole: 1/" + std::to_string(p.ep) + " of each MoE layer's experts";
    throw InputError("each chip of the split " + p.name() + " (" + holds + ", the numbers below are one chip's): " +
                     e.what() + "; or split over more chips (model.parallel.tp, model.parallel.pp" +
                     (p.ep > 1 ? ", model.parallel.ep" : "") + ")");
  }
}

void check_split_fits_system(const Parallelism& p, int chips, const std::string& hw_file, const std::string& scenario_file) {
  if (p.system_chips() <= chips) return;
  throw InputError(scenario_file + ": " + p.name() + " needs " + std::to_string(p.system_chips()) + " chips, and " +
                   hw_file + " has system.chips = " + std::to_string(chips) + " (allowed: " +
                   (p.dp > 1 ? "dp x " : "") +
                   "tp x pp up to system.chips; give the hardware config a system block with more chips)");
}

}  // namespace ahbm
