#pragma once
// How a whole model is split over the chips of a system (docs/system.md, "Tensor parallelism").
// Tensor parallelism (Megatron-LM style): every layer's Q/K/V and gate/up projections are split
// by columns (column-parallel), O and down projections by rows (row-parallel), so each of the tp
// chips holds 1/tp of every layer and computes 1/tp of its heads and of its FFN; the partial
// outputs of O and down are summed by an all-reduce over the tp chips (two per layer). The
// embedding and LM head are split by vocabulary rows (vocab-parallel), the logits gathered once
// per step. KV heads are split over the ranks; with fewer KV heads than ranks each KV head is
// replicated on tp / KV ranks (Megatron's rule), so every rank holds one.
#include <functional>
#include <string>

#include "runtime/model/config.h"

namespace ahbm {

struct Parallelism {
  int tp = 1;  // tensor-parallel ranks (chips) over which every layer is split
  bool none() const { return tp == 1; }
};

// Why `m` cannot be split over tp ranks ("" when it can): tp must divide the query heads and the
// FFN width, and KV heads and tp must be multiples of one another. The text follows "value <tp>".
std::string tensor_parallel_problem(const ModelConfig& m, int tp);
// The model one tensor-parallel rank runs: heads, KV heads, FFN width (per expert) and vocabulary
// divided by tp (the vocabulary rounded up: the last rank's rows are padding, as Megatron pads
// it); hidden size, head_dim and the layer count unchanged. tp = 1 returns `m`. Throws
// std::logic_error when tensor_parallel_problem is not empty (callers check it first and name
// their field).
ModelConfig tensor_parallel_shard(const ModelConfig& m, int tp);

// Runs `check` (a per-chip check such as check_weights_fit); with tp > 1 an InputError it throws
// is rethrown naming the split, since its numbers are then one chip's (every rank's alike).
void check_per_chip(const Parallelism& p, const std::function<void()>& check);

// The split needs tp chips: InputError naming model.parallel.tp in `scenario_file` and
// system.chips in `hw_file` when the system has fewer.
void check_split_fits_system(const Parallelism& p, int chips, const std::string& hw_file, const std::string& scenario_file);

}  // namespace ahbm
