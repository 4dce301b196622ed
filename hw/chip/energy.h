#pragma once
// Energy as a reading of the activity the timing already counts (docs/energy.md): the counters
// of a chip's statistics tree (chip_stats.h) times the per-activity costs of `energy.*`
// (hw_config.h), plus each component's static power over the elapsed time. There is no second
// bookkeeping: every count read here is a counter the module keeps where the activity happens,
// so energy cannot disagree with the timing and is the same with and without values.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hw/common/contract/gemm_job.h"
#include "hw/common/config/hw_config.h"
#include "hw/common/observe/stats.h"
#include "hw/common/base/storage_type.h"

namespace ahbm {

// What energy is broken down by: the dynamic energy of each kind of component, then the
// static energy of PEs, CUBEs (outside their PEs) and NoC routers.
enum class EnergyClass {
  hbm,        // HBM slices: activation, column access, bank-group path
  gemm,       // GEMM engines: MACs
  vector,     // PE vector units: element-ops
  pe_sram,    // PE SRAM: bytes staged (written and read once)
  q_buffer,   // CUBE Q buffers: bytes written and read
  reducer,    // CUBE reducers: merges (intra- and inter-CUBE), states staged
  noc,        // NoC: flit-hops and the stack I/O of delivered payload
  link,       // inter-CUBE reduction links
  host_link,  // the host link, both directions
  pe_static,
  cube_static,
  router_static,
  count
};
constexpr size_t kEnergyClasses = size_t(EnergyClass::count);
const char* energy_class_name(EnergyClass c);
inline bool is_static(EnergyClass c) { return c >= EnergyClass::pe_static; }
using ClassJoules = std::array<double, kEnergyClasses>;
inline double total_of(const ClassJoules& j) {
  double s = 0;
  for (double x : j) s += x;
  return s;
}

// Counted activity of one component (or of anything, summed); each field is a counter of the
// statistics tree or of GemmOpStats.
struct Activity {
  uint64_t hbm_bytes = 0;       // read from or written to an HBM slice
  uint64_t macs = 0;            // useful GEMM-engine MACs
  uint64_t vector_ops = 0;      // PE vector-unit element-ops
  uint64_t sram_bytes = 0;      // staged through a PE's SRAM (written once, read once)
  uint64_t q_buffer_bytes = 0;  // written into or read out of a CUBE's Q buffer
  uint64_t merge_ops = 0;       // reducer element-ops (merges, normalisation)
  uint64_t state_bytes = 0;     // PE states staged in a reducer (written once, read once)
  uint64_t flit_hops = 0;       // NoC flits through a router and its output link
  uint64_t noc_bytes = 0;       // NoC payload delivered (crosses a stack's I/O)
  uint64_t link_bytes = 0;      // sent over an inter-CUBE link
  uint64_t host_bytes = 0;      // over the host link, either direction
  Activity& operator+=(const Activity& o) {
    hbm_bytes += o.hbm_bytes, macs += o.macs, vector_ops += o.vector_ops, sram_bytes += o.sram_bytes;
    q_buffer_bytes += o.q_buffer_bytes, merge_ops += o.merge_ops, state_bytes += o.state_bytes;
    flit_hops += o.flit_hops, noc_bytes += o.noc_bytes, link_bytes += o.link_bytes, host_bytes += o.host_bytes;
    return *this;
  }
};

// The documented formulas (docs/energy.md), joules per class, for `a` with MACs in storage type
// `t`: hbm_bytes·8·(activate + access + bank_group); macs·mac(t); vector_ops·vector_op;
// sram_bytes·2·sram; q_buffer_bytes·sram; merge_ops·vector_op + state_bytes·2·sram;
// flit_hops·noc_flit_hop + noc_bytes·8·stack_io; link_bytes·8·link; host_bytes·8·host_link.
ClassJoules dynamic_energy(const Activity& a, const EnergyConfig& e, DType t);

// The activity of a weight-GEMM operator (hw/common/contract/gemm_job.h): W, Y and residual bytes in
// HBM and staged through the PEs' SRAM, X bytes out of the Q buffers (and staged), MACs,
// vector element-ops.
Activity gemm_activity(const GemmOpStats& s);

// Static power: static_power_w (hw/common/config/hw_config.h).

struct EnergyReading {
  ClassJoules by_class{};                      // J
  std::map<std::string, double> by_component;  // J per component instance (dynamic + static)
  double elapsed_ns = 0;

  double dynamic_j() const;
  double static_j() const;
  double total_j() const { return dynamic_j() + static_j(); }
  // Adds `o`'s joules and elapsed time.
  EnergyReading& operator+=(const EnergyReading& o);
  // Scales joules and elapsed time by `k` (an extrapolated step: k times the simulated one).
  EnergyReading& operator*=(double k);
  // Adds `j` joules per class on `component`.
  void add(const std::string& component, const ClassJoules& j);
};

// When energy is spent (power over time, runtime/report/power.h): the span activities that
// spend a class's energy, and what a span's share of it is proportional to: its bytes (data
// moved: DMA bursts, NoC deliveries, link and host transfers, Q buffer and SRAM staging) or its
// duration (engines that run at a fixed rate while busy: GEMM, vector unit, merges). The amounts
// themselves are the counters read_energy reads; the spans only say when they were spent.
struct SpanEnergyShare {
  EnergyClass c;
  bool by_bytes;  // false: by duration
};
// The classes a span of `activity` (its SpanRecorder activity name) spends energy in; empty for
// activities that spend none of their own (waits, launches, the runtime's annotations).
std::vector<SpanEnergyShare> span_energy_shares(const std::string& activity);

// The energy of a chip's statistics tree (one step, or steps merged) that ran `elapsed_ns`:
// per PE (its HBM slice, engine, vector unit, SRAM), per CUBE (Q buffer, reducer), per link,
// per group (inter-CUBE merges), the NoC and the host link; static power over `elapsed_ns`
// (groups of the chip not in the tree: component "idle_groups"). MACs are of storage type `t`.
// The tree's activity counts `repeats` times (a whole model's attention runs once per layer;
// 0: static energy alone, e.g. a host-side wait).
EnergyReading read_energy(const StatsNode& chip, const HwConfig& hw, DType t, double elapsed_ns, double repeats = 1.0);

}  // namespace ahbm
