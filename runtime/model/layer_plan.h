#pragma once
// The weight GEMMs of one decoder layer as jobs for the hardware (hw/common/gemm_job.h), with
// the memory map's shards, and their values from the seeded generator (runtime/tensor_gen.h).
//
// A step's rows enter the layer together: M = Σ over the step's branches of their new tokens
// (THInfer's selective batching: the weight GEMMs of all branches run as one GEMM, attention
// stays per branch). The operators, in order (docs/design/decoder-layer.md §1):
//   qkv_proj      M × h · h × (H + 2·KV)·d     q_proj, k_proj, v_proj fused
//   (attention)                                 today's attention jobs
//   o_proj        M × H·d · H·d × h
//   gate_up_proj  M × h · h × 2f                gate_proj, up_proj fused
//   down_proj     M × f · f × h
// Each needs the previous one's Y (after the vector ops that need whole rows), so each is a run
// of its own (Simulator::run_gemms). A fused operator's shard on a PE is the columns the memory
// map gave that PE in each fused tensor, counted together (a PE's columns of q, k and v are one
// contiguous range of the fused N: any split of N's columns computes the same Y).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hw/chip/simulate.h"
#include "hw/common/gemm_job.h"
#include "runtime/model/config.h"
#include "runtime/model/memory_map.h"
#include "runtime/tensor_gen.h"

namespace ahbm {

// X (M × K) and W (K × N) of GEMM `op` from the seeded generator (TensorKind::activation and
// ::weight, head = op, pos = row, dim = column), rounded to the job's storage type.
void fill_gemm_values(GemmJob& j, uint64_t seed, int op);

// The fused tensors behind each operator of a dense layer, in order.
struct LayerOperator {
  std::string name;
  std::vector<std::string> tensors;  // HuggingFace names (memory_map layer0_columns keys)
};
std::vector<LayerOperator> layer_operators();

// One operator's GEMM for `rows` token rows, timing only, sharded as `map` places layer 0's
// tensors (the fused tensors' columns of a PE counted together).
GemmJob operator_gemm(const ModelConfig& m, DType t, const MemoryMap& map, const LayerOperator& op, int rows,
                      const std::string& phase);

// The weight GEMMs of one dense decoder layer for `rows` token rows, timing only, sharded as
// `map` places layer 0's tensors. Throws InputError for an MoE model (routing not modelled yet).
std::vector<GemmJob> layer_gemms(const ModelConfig& m, DType t, const MemoryMap& map, int rows, const std::string& phase);

// The weight GEMMs of one layer simulated for each step of a whole-model run (the attention of
// the step is simulated as before; the operators run on the same hardware configuration, a chip
// of their own, one run per operator). Steps with the same row count give the same runs, so each
// row count is simulated once. summary.json "operators" (docs/models.md).
class LayerOperatorReport {
 public:
  LayerOperatorReport(const ModelConfig& m, DType t, const MemoryMap& map, const HwConfig& hw, SimulatorPool& sims,
                      const SimOptions& opt);
  // The operators of one layer for a step of `rows` token rows (label: the step's label).
  void add_step(const std::string& label, const std::string& phase, int rows);
  Json json() const;

 private:
  struct OpTotals {
    std::string name;
    int k = 0, n = 0;
    uint64_t runs = 0, rows = 0, w_bytes_read = 0, y_bytes_written = 0, x_bytes_read = 0, macs = 0;
    double time_ns = 0, gemm_busy_ns = 0, dma_busy_ns = 0;
  };
  const std::vector<GemmOpStats>& simulate(int rows);
  const ModelConfig& m_;
  DType t_;
  const MemoryMap& map_;
  const HwConfig& hw_;
  SimulatorPool& sims_;
  SimOptions opt_;
  std::map<int, std::vector<GemmOpStats>> by_rows_;
  std::vector<OpTotals> totals_;
  Json steps_ = Json::array();
};

}  // namespace ahbm
