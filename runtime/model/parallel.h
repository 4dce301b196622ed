#pragma once
// How a whole model is split over the chips of a system (docs/system.md, "Tensor parallelism").
// Tensor parallelism (Megatron-LM style): every layer's Q/K/V and gate/up projections are split
// by columns (column-parallel), O and down projections by rows (row-parallel), so each of the tp
// chips holds 1/tp of every layer and computes 1/tp of its heads and of its FFN; the partial
// outputs of O and down are summed by an all-reduce over the tp chips (two per layer). The
// embedding and LM head are split by vocabulary rows (vocab-parallel), the logits gathered once
// per step. KV heads are split over the ranks; with fewer KV heads than ranks each KV head is
// replicated on tp / KV ranks (Megatron's rule), so every rank holds one.
// Pipeline parallelism: the layers are split into pp stages of consecutive layers (the first
// L mod pp stages one layer more), each stage on its own tp chips; a step's rows pass the stages
// in order, each stage sending its last layer's output rows to the next. The chips are numbered
// stage-major: chip = stage x tp + rank, so a stage's TP group is consecutive chips.
// Data parallelism: dp replicas of that split (tp x pp chips each), replica r on chips
// [r x tp x pp, (r + 1) x tp x pp); serving routes each workflow to one replica (docs/system.md,
// "Data parallelism"). A replica's chips run as one replica's alone: the replicas share no chip.
// Expert parallelism (DeepSpeed-MoE inference's layout): an MoE layer's experts are split over
// the chips of a stage's TP group (ep = tp), rank r holding whole experts r x E/ep .. (r + 1) x
// E/ep - 1; attention and the router stay tensor-parallel. After o_proj's all-reduce each rank
// keeps its 1/ep of the rows, an all-to-all dispatches their top-k copies to the experts' chips,
// another brings the experts' outputs back, and an all-gather of the rows gives every rank the
// layer's output (docs/system.md, "Expert parallelism"). It adds no chips.
#include <functional>
#include <string>
#include <vector>

#include "hw/system/collective_closed_form.h"
#include "runtime/model/config.h"

namespace ahbm {

struct Parallelism {
  int tp = 1;  // tensor-parallel ranks (chips) over which every layer is split
  int pp = 1;  // pipeline stages, each tp chips holding consecutive layers
  int dp = 1;  // data-parallel replicas of the tp x pp split, each serving workflows of its own
  int ep = 1;  // expert-parallel ranks: the TP group's chips, each holding 1/ep of every MoE layer's experts
  // The tensor-parallel all-reduce's algorithm on the system network (hw/system/collectives.h).
  CollectiveAlgo all_reduce = CollectiveAlgo::ring;
  // The model is not split: one chip holds it (dp replicas may still copy it).
  bool none() const { return tp == 1 && pp == 1; }
  int chips() const { return tp * pp; }  // one replica's
  int system_chips() const { return dp * chips(); }
  // "model.parallel.tp = 8", "model.parallel.tp = 4 x pp = 2", "model.parallel.dp = 2 x tp = 4" or
  // "model.parallel.tp = 4, ep = 4" (ep takes no chips of its own): the split as error messages name it.
  std::string name() const;
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

// Why `m` cannot be split into pp stages ("" when it can): each stage holds at least one layer.
// The text follows "value <pp>".
std::string pipeline_parallel_problem(const ModelConfig& m, int pp);
// Layers per stage: L / pp each, the first L mod pp stages one more (sum L).
std::vector<int> pipeline_stage_layers(int layers, int pp);
// Why `m` cannot have its experts split over ep chips with tensor parallelism `tp` ("" when it
// can): only an MoE model, ep dividing num_local_experts, ep = tp (the TP group's chips hold the
// experts). The text follows "value <ep>".
std::string expert_parallel_problem(const ModelConfig& m, int ep, int tp);
// The model one chip of the split runs: the tensor-parallel shard with the layers of the
// largest stage (the memory model checks the chip that holds the most); with ep > 1 each expert
// whole (intermediate_size not divided) and expert_parallel = ep (the chip holds E/ep experts).
// Throws std::logic_error when a problem above is not empty.
ModelConfig chip_model(const ModelConfig& m, const Parallelism& p);

// Runs `check` (a per-chip check such as check_weights_fit); with tp > 1 an InputError it throws
// is rethrown naming the split, since its numbers are then one chip's (every rank's alike; with
// pp > 1 the chip of the largest stage, holding the embedding and the LM head both).
void check_per_chip(const Parallelism& p, const std::function<void()>& check);

// The split needs dp x tp x pp chips: InputError naming model.parallel in `scenario_file` and
// system.chips in `hw_file` when the system has fewer.
void check_split_fits_system(const Parallelism& p, int chips, const std::string& hw_file, const std::string& scenario_file);

}  // namespace ahbm
