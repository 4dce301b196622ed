#pragma once
// Roofline view (THInfer, seed 002): attainable = min(peak, intensity x bandwidth); the ridge
// point (intensity threshold) is peak / bandwidth. Intensity in MACs per byte, as THInfer's
// worked example: an fp32 GEMM M x K x N moving X, W and Y once has
// I = M K N / (4 (M K + K N + M N)).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hw/common/config/hw_config.h"
#include "hw/common/contract/job.h"
#include "hw/common/base/json_reader.h"
#include "hw/common/observe/stats.h"

namespace ahbm {

struct Roofline {
  double peak_macs_per_s = 0;
  double bandwidth_bytes_per_s = 0;
  double ridge() const { return peak_macs_per_s / bandwidth_bytes_per_s; }  // MAC per byte
  double attainable(double intensity) const { return std::min(peak_macs_per_s, intensity * bandwidth_bytes_per_s); }
  bool bandwidth_bound(double intensity) const { return intensity < ridge(); }
};

// THInfer's GEMM intensity for fp32 (4-byte) operands.
double gemm_intensity(double m, double k, double n, double elem_bytes = 4);

// One PE: GEMM engine peak (tile MACs / issue interval x clock) against its HBM slice.
Roofline pe_roofline(const HwConfig& hw);
// One KV-head group: pes_per_group PEs and slices.
Roofline group_roofline(const HwConfig& hw);

// One roofline point: `macs` over `hbm_bytes` in `seconds` against `r` (intensity, attained,
// attainable, bound).
Json roofline_point(const Roofline& r, double macs, double hbm_bytes, double seconds);

// What one kind of step did over a run: prefill (a prefill phase, or a join's prompt prefill),
// fanout, decode, join (the rest of a join).
struct StepKindWork {
  int steps = 0;
  double ns = 0, macs = 0, hbm_bytes = 0;
};
// A point per kind of step (summary.json "roofline"), on the roofline of the `groups` KV-head
// groups the steps use.
// `whole_model`: the steps' work is every layer's attention and operators (the "what" says so).
Json roofline_by_step_kind(const HwConfig& hw, int groups, const std::map<std::string, StepKindWork>& kinds,
                           bool whole_model = false);

// Roofline of the step per phase (job phase), per PE and per group, from the simulated MACs,
// HBM bytes and time (summary.json "roofline"). `stats` is SimResult::stats, `total_ns` the
// step's simulated time.
Json roofline_summary(const HwConfig& hw, const std::vector<AttentionJob>& jobs, const StatsNode& stats, double total_ns);

}  // namespace ahbm
