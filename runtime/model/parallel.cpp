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

void check_per_chip(const Parallelism& p, const std::function<void()>& check) {
  if (p.none()) return check();
  try {
    check();
  } catch (const InputError& e) {
    throw InputError("each chip of the split model.parallel.tp = " + std::to_string(p.tp) + " (1/" + std::to_string(p.tp) +
                     " of every layer, the numbers below are one chip's): " + e.what() +
                     "; or split over more chips (model.parallel.tp)");
  }
}

void check_split_fits_system(const Parallelism& p, int chips, const std::string& hw_file, const std::string& scenario_file) {
  if (p.tp <= chips) return;
  throw InputError(scenario_file + ": model.parallel.tp: value " + std::to_string(p.tp) + " needs " +
                   std::to_string(p.tp) + " chips, and " + hw_file + " has system.chips = " + std::to_string(chips) +
                   " (allowed: tp up to system.chips; give the hardware config a system block with more chips)");
}

}  // namespace ahbm
