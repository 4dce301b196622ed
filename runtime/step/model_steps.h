#pragma once
// A whole dense model on the step timeline (docs/models.md "A whole model on the step
// timeline"): every step of a scenario runs L decoder layers, each
//   qkv_proj (input RMSNorm, RoPE fused) → attention → o_proj (+ residual)
//   → gate_up_proj (post-attention RMSNorm, activation fused) → down_proj (+ residual),
// one after another (each needs the previous one's whole rows), then once per step the final
// norm and LM head on the last row of each agent that emits a token (layer_plan.h lm_head_gemm). The operators of a step run on
// a chip of their own (same hardware config, timing only) for the step's M = Σ new tokens
// (selective batching); the attention is the step's simulated attention (every layer's
// attention has the same shape: the same KV tokens per head). The step's time is the sum.
//
// Layers whose operators have the same shards (the memory map splits every layer's tensors the
// same way when each N is a multiple of the PEs) run the same jobs: each distinct layer is
// simulated once per row count and reused (`every_layer` simulates each layer; a test checks
// the two agree), and the summary names the simulated layers. Every operator's GEMM (the LM
// head's too) runs in one mapping, w_stationary or x_stationary (gemm_job.h).
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "hw/chip/simulate.h"
#include "hw/system/collective_closed_form.h"
#include "runtime/model/config.h"
#include "runtime/model/layer_plan.h"
#include "runtime/model/memory_map.h"
#include "runtime/model/parallel.h"
#include "runtime/step/step_runner.h"

namespace ahbm {

// What collectives put on the system network: each link's bytes and busy time, and the energy
// of the bytes over links (a packet-level model's statistics; a model that reports none: zero).
struct NetworkUse {
  struct Link {
    uint64_t bytes = 0;
    double busy_ns = 0;
  };
  std::map<std::string, Link> links;  // by link name ("chip0->switch0")
  double energy_pj = 0;
  void add(const NetworkUse& u);
};

// How a step's work is split over the chips of a system (runtime/model/parallel.h) and the
// collectives between them, timed on the system network (runtime/step/system_collectives.h).
// No split: none, and every output is as without them. Each function gives the time of one
// collective of `bytes` per rank in the TP group of pipeline stage `stage`.
struct SplitCollectives {
  Parallelism split;
  std::function<double(int stage, uint64_t bytes)> all_reduce_ns;  // TP: after o_proj and after down_proj, every layer
  std::function<double(int stage, uint64_t bytes)> all_gather_ns;  // TP: the vocab-parallel logits, once per step
  std::function<double(int stage, uint64_t bytes)> send_ns;        // PP: a stage's output rows to the next stage
  std::function<double(int stage, uint64_t bytes)> all_to_all_ns;  // EP: an MoE layer's dispatch and combine
  // What one of the above put on the network (p2p: a stage boundary's sends, every rank's).
  std::function<const NetworkUse&(CollectiveKind kind, int stage, uint64_t bytes)> use;
  // What the collectives ran on, for the summary (e.g. the network model and its links).
  Json network;
};

class ModelSteps : public StepLayers {
 public:
  ModelSteps(const ModelConfig& m, DType t, const MemoryMap& map, const HwConfig& hw, SimulatorPool& sims,
             const SimOptions& opt, bool every_layer, uint64_t seed = 1,
             GemmMapping mapping = GemmMapping::w_stationary, const ModelFusion& fusion = {},
             SplitCollectives split = {}, int layers = 0);
  void before_attention(const Step& step, Timeline& tl) override;
  Json after_attention(const Step& step, Timeline& tl, double attention_ns) override;
  double step_ns(const Step& step, double attention_ns) override;
  int layers() const override { return int(stage_of_.size()); }
  EnergyReading operators_energy(const Step& step) override;
  Activity operators_activity(const Step& step) override;
  // A step timed off the timeline (serve, runtime/serve/engine.cpp), counted in the totals as
  // after_attention counts a run's step (json()'s by_operator, by_layer and attention_ns; not
  // by_step): its time (step_ns) and the weight bytes its operators read.
  struct Accounted {
    double ns = 0;
    uint64_t w_bytes_read = 0;
  };
  Accounted account(const Step& step, double attention_ns);
  // summary.json "operators": the operators' totals, per step, per layer, the simulated layers.
  Json json() const;
  // A split model: the energy of the whole system (summary energy.system) from the simulated
  // chip's reading `chip` over the run: every chip's dynamic and static energy and the network's.
  Json system_energy(const EnergyReading& chip) const;
  // Layer l (of the chip's model) runs the simulated operators of layer representative(l).
  int representative(int layer) const { return rep_[size_t(layer)]; }
  // Sampled serving's operator grid (docs/serving.md, "Sampled serving"): a dense layer's runs
  // for a row count above `exact_up_to` that is off the grid (`per_octave` points per power of
  // two) are interpolated linearly between the two grid points around it, each simulated;
  // a systematic sample of the interpolated counts (period `check_period`, doubling after every
  // 8 checks) is simulated too, to measure the interpolation's error. Off (per_octave 0, the
  // default): every row count is simulated.
  struct OperatorGrid {
    int per_octave = 0;
    int exact_up_to = 0;
    int check_period = 0;  // 0: never checked
  };
  void set_operator_grid(const OperatorGrid& g) {
    grid_ = g;
    next_check_ = uint64_t(g.check_period);
  }
  struct GridStats {
    uint64_t simulated = 0, interpolated = 0;  // dense layers' row counts (x representative layers)
    std::vector<std::pair<double, double>> checks;  // checked counts: the layer's time interpolated, simulated
  };
  const GridStats& grid_stats() const { return grid_stats_; }

 private:
  struct OpTotals {
    std::string name;
    bool kernel = false;  // an unfused vector kernel (vector_kernel.h), not a GEMM
    int k = 0, n = 0;
    uint64_t runs = 0, rows = 0;
    GemmOpStats sum;  // counters summed over every layer of every step; end_ns: time
  };
  // One layer's runs for a step's rows: their counters (one per run, layer_run_names order) and,
  // for MoE, the rows each expert got.
  // Expert parallelism: ops' expert runs are the busiest rank's (`rank`, whose experts took
  // `rank_rows` rows): the combine waits for it.
  struct LayerStats {
    std::vector<GemmOpStats> ops;
    std::vector<int> expert_rows;
    int rank = 0, rank_rows = 0;
  };
  using RunKey = std::tuple<int, int, std::vector<int>>;  // rows, representative layer, expert rows
  // The runs of the whole model's layer `layer` (its chip's layer local_[layer]).
  const LayerStats& simulate(const Step& step, int layer);
  // A dense model's layer (representative `rep`) for `rows` rows: cached, simulated or
  // interpolated on the operator grid.
  const LayerStats& dense(int rows, int rep);
  // Simulates a layer's runs for `rows` rows (MoE: routed by `r`).
  LayerStats run_layer(int rows, int rep, const Routing* r);
  int grid_spacing(int rows) const;  // 0: simulate `rows` (on the grid, below it, or no grid)
  // What a step with `rows` rows adds to the totals (after_attention, account): per operator
  // its time over the layers (the LM head's last), the weight bytes read, MoE's routed rows.
  struct StepOps {
    std::vector<double> op_ns;
    double tp_ns = 0;  // the step's tensor-parallel collectives (every layer's all-reduces, the logits' all-gather)
    double pp_ns = 0;  // the step's sends between pipeline stages
    double ep_a2a_ns = 0, ep_gather_ns = 0;  // the MoE layers' dispatch and combine, and their rows' all-gather
    uint64_t w_bytes = 0;
    std::vector<int> expert_rows;
    int logits = 0;  // the LM head's rows
  };
  StepOps count(const Step& step, int rows, double attention_ns);
  // Each operator run of the step, every layer's then the head's (none for a step without rows).
  void for_each_operator(const Step& step, const std::function<void(const GemmOpStats&)>& f);
  Routing routing(const Step& step, int layer) const;  // MoE: the seeded router on the step's tokens
  // The runs after the last layer for `rows` logit rows: [final_norm (unfused norm),] lm_head.
  const std::vector<GemmOpStats>& head(int rows);
  // One run of a layer or of the head: a GEMM run's counters (an MoE run's experts summed) or a
  // kernel's.
  GemmOpStats run(const LayerRun& run);
  void place(Timeline& tl, const std::string& component, double ns, const Step& step, int rows, int layer);
  // The operator track's span of [start, tl.now()) (place: after advancing the timeline by it).
  void mark(Timeline& tl, const std::string& component, const sc_core::sc_time& start, const Step& step, int rows,
            int layer);
  // The split's collectives for a step's rows: an all-reduce or a stage's send moves rows x
  // hidden_size elements per rank, the logits' all-gather every rank's vocabulary rows; 0
  // without the split they belong to.
  uint64_t rows_bytes(int rows) const;
  uint64_t logits_bytes(int logit_rows) const;
  double all_reduce_ns(int rows, int stage);
  double logits_gather_ns(int logit_rows);
  double send_ns(int rows, int stage);
  // Expert parallelism (parallel.h): each rank dispatches the top-k copies of its 1/ep of the rows
  // (ceil(rows / ep), the slice) and gets them back (an all-to-all each, its send buffer per rank);
  // then every rank gathers the ep slices (rows padded to ep slices) for the next layer.
  bool expert_parallel() const { return split_.split.ep > 1 && m_.moe(); }
  uint64_t ep_all_to_all_bytes(int rows) const;
  uint64_t ep_gather_bytes(int rows) const;
  double ep_all_to_all_ns(int rows, int stage);
  double ep_gather_ns(int rows, int stage);
  // The EP collectives after operator `op` of an MoE layer: the dispatch after the router; the
  // combine and the rows' all-gather after down_proj.
  bool is_ep_dispatch(const std::string& op) const { return expert_parallel() && op == "router"; }
  bool is_ep_combine(const std::string& op) const { return expert_parallel() && op == "down_proj"; }
  bool is_tp_point(const std::string& op) const {
    // With expert parallelism each expert is whole on its chip: no down_proj partial sums to reduce.
    return split_.split.tp > 1 && (op == "o_proj" || (op == "down_proj" && !expert_parallel()));
  }
  // Pipeline: the stage of the whole model's layer `layer`, and whether it is its stage's last
  // with a stage after it (the rows are sent on).
  bool sends_after(int layer) const;
  // Counts one collective's network use in the run's totals.
  void count_use(CollectiveKind kind, int stage, uint64_t bytes);
  const ModelConfig& m_;
  DType t_;
  const MemoryMap& map_;
  const HwConfig& hw_;
  SimulatorPool& sims_;
  SimOptions opt_;
  std::vector<int> rep_;  // per layer, the layer whose simulated operators it reuses
  uint64_t seed_;
  GemmMapping mapping_;  // of every operator's GEMM (gemm_job.h)
  std::map<RunKey, LayerStats> runs_;
  OperatorGrid grid_;
  GridStats grid_stats_;
  uint64_t next_check_ = 0, checks_ = 0;  // the next interpolated count checked; checks so far
  // Expert parallelism: a rank's expert runs (gate_up_proj, down_proj) by representative layer and
  // the rows each of its experts took (ranks with the same counts run the same jobs).
  std::map<std::pair<int, std::vector<int>>, std::pair<GemmOpStats, GemmOpStats>> rank_experts_;
  ModelFusion fusion_;   // which operators are fused (unfused ones are kernels of their own)
  size_t before_attention_ = 1;  // the layer's runs before its attention (qkv_proj, [input_norm, rope])
  size_t layer_ops_ = 0;         // totals_: the layer's runs, then the head's
  std::map<int, std::vector<GemmOpStats>> heads_;                  // per logit rows
  std::vector<OpTotals> totals_;  // the layer operators in order, then the head's ([final_norm,] lm_head)
  std::vector<double> layer_ns_;  // per layer, Σ over steps (operators + attention)
  double attention_ns_ = 0;       // Σ over steps and layers
  std::vector<uint64_t> expert_rows_;  // MoE: rows routed to each expert, Σ over layers and steps
  SplitCollectives split_;
  // Per layer of the whole model: its pipeline stage and its index in the chip's model (the
  // layer of m_ whose runs it takes); one stage of m_'s layers without pipeline parallelism.
  std::vector<int> stage_of_, local_;
  std::vector<int> stage_first_;  // per stage, its first layer
  struct TpTotals {
    uint64_t all_reduces = 0, all_reduce_bytes = 0, all_gathers = 0, all_gather_bytes = 0;
    double all_reduce_ns = 0, all_gather_ns = 0;
  } tp_totals_;
  struct Tally {  // one kind of collective's calls, bytes and time, Σ over layers and steps
    uint64_t calls = 0, bytes = 0;
    double ns = 0;
  };
  struct EpTotals {
    Tally all_to_all, all_gather;
    std::vector<uint64_t> rank_rows;  // per rank, the rows its experts took, Σ over layers and steps
    uint64_t simulated_rank_rows = 0;  // the busiest rank's (the one timed) per layer, Σ
  } ep_totals_;
  static Json tally_json(const Tally& t);
  NetworkUse network_;  // every collective of every step counted (count())
  struct PpTotals {
    uint64_t sends = 0, send_bytes = 0;
    double send_ns = 0;
    std::vector<double> busy_ns;  // per stage: its layers' (and the last's head) time, Σ over steps
    double steps_ns = 0;          // Σ over steps of the step's time
  } pp_totals_;
  Json steps_ = Json::array();
};

}  // namespace ahbm
