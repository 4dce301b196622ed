#include "runtime/run/preflight.h"

#include <algorithm>
#include <set>

#include "hw/chip/elaboration_cost.h"
#include "hw/common/base/error.h"
#include "hw/common/base/timing.h"
#include "runtime/kv/page_manager.h"
#include "runtime/scenario/session.h"

namespace ahbm {

namespace {

// The process before the run: binary, libraries, SystemC kernel, parsed inputs (measured:
// about 18 MiB resident for the smallest timing-only run).
constexpr uint64_t kBaseBytes = uint64_t(20) << 20;
// One recorded span with its share of the timeline and the report built from it (latency.csv,
// trace.json are streamed from the spans).
constexpr uint64_t kSpanBytes = 96;
// A generated K/V row's entry in the KvValues index (hash node and bucket).
constexpr uint64_t kCacheEntryBytes = 64;
// The float64 reference's score block: at most 256 rows x 256 keys in float64 (runtime/numerics/reference.cpp).
constexpr uint64_t kReferenceScoreBytes = 256 * 256 * 8;

// The largest step of the run, replayed on page bookkeeping alone (no tensors).
struct RunShape {
  uint64_t rows = 0;         // Q rows per KV head of the largest step
  uint64_t kv_tokens = 0;    // KV tokens a job of the largest step reads
  uint64_t spans = 0;        // spans recorded over the whole run
  uint64_t generated = 0;    // distinct (owner, position) K/V rows generated per KV head
};

RunShape replay(const Scenario& sc, const HwConfig& hw) {
  RunShape s;
  const uint64_t qpk = uint64_t(sc.model.q_per_kv()), heads = uint64_t(sc.model.num_kv_heads);
  const uint64_t pes = uint64_t(hw.pes_per_group());
  const uint64_t elem = dtype_bytes(sc.model.dtype);
  KvPageManager kv(hw.pes_per_group(), -1, sc.kv.page_tokens);
  AgentSession session(sc, kv);
  s.generated = uint64_t(sc.shared_prefix_tokens);
  const auto on_step = [&](const Step& step) {
    uint64_t rows = 0, tokens = 0;
    std::set<PageId> pages;
    for (const StepAgent& a : step.agents) {
      rows += uint64_t(a.new_tokens) * qpk;
      s.generated += uint64_t(a.new_tokens);
      for (PageId p : kv.table(a.seq))
        if (pages.insert(p).second) tokens += uint64_t(kv.page(p).filled());
    }
    s.rows = std::max(s.rows, rows);
    s.kv_tokens = std::max(s.kv_tokens, tokens);
    // Per Q tile, every PE records a span per KV tile it loads and computes, and a few per tile
    // (Q read, state, reduction, transfers).
    const int tile = q_tile_rows(hw, hw.q_tile_rows, int64_t(rows), sc.model.head_dim, elem);
    const uint64_t q_tiles = tile > 0 ? ceil_div(std::max<uint64_t>(rows, 1), uint64_t(tile)) : 1;
    const uint64_t kv_tiles = ceil_div(ceil_div(std::max<uint64_t>(tokens, 1), pes), uint64_t(hw.pe.dma.kv_tile_tokens));
    s.spans += heads * q_tiles * pes * (2 * kv_tiles + 4);
  };
  session.run(on_step);
  return s;
}

uint64_t sum(const std::vector<std::pair<std::string, uint64_t>>& parts) {
  uint64_t t = 0;
  for (const auto& p : parts) t += p.second;
  return t;
}

}  // namespace

std::string ResourceEstimate::describe() const {
  std::string s;
  for (const auto& [name, bytes] : parts) {
    if (bytes < (uint64_t(1) << 20)) continue;
    s += (s.empty() ? "" : " + ") + name + " " + mib(bytes);
  }
  return s;
}

ResourceEstimate estimate_resources(const Scenario& sc, const HwConfig& hw, const RunOptions& opt) {
  ResourceEstimate e;
  const RunShape s = replay(sc, hw);
  const uint64_t d = uint64_t(sc.model.head_dim), heads = uint64_t(sc.model.num_kv_heads);
  const uint64_t stored = dtype_bytes(sc.model.dtype);
  if (opt.values) {
    // fp32 in memory whatever the storage type; a type that rounds keeps the generated rows too.
    const uint64_t copies = sc.model.dtype == DType::fp32 ? 1 : 2;
    e.parts.push_back({"K/V rows generated", heads * s.generated * (d * 8 * copies + kCacheEntryBytes)});
    // The step being run and the fan-out step kept for the report: Q, K, V per KV head, the
    // token metadata of each shard; the outputs of both.
    e.parts.push_back({"Q, K, V of the jobs", 2 * heads * (s.rows * d * 4 + s.kv_tokens * (d * 8 + 12))});
    e.parts.push_back({"O of the jobs", 2 * heads * s.rows * d * 4});
    e.parts.push_back({"K, V stored in the HBM slices", heads * s.kv_tokens * d * 2 * stored});
    // One job at a time: Q, the running sums and O in float64, one pass's K and V in float64 (256
    // keys), the generated K and V gathered, the score block.
    e.parts.push_back({"float64 reference", kReferenceScoreBytes + s.rows * d * 24 + 2 * 256 * d * 8 + s.kv_tokens * d * 8});
    if (opt.dump_tensors) e.parts.push_back({"tensor dump", s.kv_tokens * d * 8 + s.rows * s.kv_tokens});
  }
  e.tensor_bytes = sum(e.parts);
  e.parts.push_back({"spans", s.spans * kSpanBytes});
  e.active_groups = int(std::min<uint64_t>(uint64_t(hw.groups), heads));
  // The step's chip, and one more for the unbatched baseline or a join's probes (SimulatorPool).
  const uint64_t chips = (opt.compare_unbatched || opt.join_compare || sc.join) ? 2 : 1;
  const ElaborationCost chip = elaboration_cost(hw, e.active_groups);
  e.threads = chips * chip.threads;
  e.mappings = chips * chip.mappings;
  e.parts.push_back({"SystemC modules and stacks", chips * chip.resident_bytes});
  e.parts.push_back({"program", kBaseBytes});
  e.resident_bytes = sum(e.parts);
  e.virtual_bytes = e.resident_bytes + chips * chip.stack_bytes + (opt.values ? kBlasBufferBytes : 0);
  return e;
}

namespace {

// The scenario's parameters that size the tensors, for messages.
std::string tensor_parameters(const Scenario& sc, const RunOptions& opt) {
  return opt.scenario_file + ": shared_prefix_tokens = " + std::to_string(sc.shared_prefix_tokens) + ", " +
         std::to_string(sc.total_rows()) + " new tokens of " + std::to_string(sc.agents.size()) +
         " agents, model.num_kv_heads = " + std::to_string(sc.model.num_kv_heads) + " x " +
         std::to_string(sc.model.q_per_kv()) + " query heads each, model.head_dim = " +
         std::to_string(sc.model.head_dim);
}

}  // namespace

void check_resources(const ResourceEstimate& e, const HostLimits& host, const std::string& what, const HwConfig& hw,
                     const std::string& hw_file, bool values) {
  const std::string chip = hw_file + ": " + std::to_string(e.active_groups) + " of groups = " +
                           std::to_string(hw.groups) + " in use x group.cubes = " + std::to_string(hw.group.cubes) +
                           " x cube.pes = " + std::to_string(hw.cube.pes);
  const std::string hint = values ? "; run timing only with --no-values, or lower the parameters named" : "; lower the parameters named";
  if (host.mappings && e.mappings > host.mappings->value)
    throw InputError(chip + " need " + std::to_string(e.threads) + " SystemC processes, whose stacks take " +
                     std::to_string(e.mappings) + " memory mappings; " + host.mappings->what + " leaves " +
                     std::to_string(host.mappings->value) +
                     " (refused before elaboration; lower group.cubes, cube.pes or groups, or raise vm.max_map_count)");
  if (host.memory && e.resident_bytes > host.memory->value)
    throw InputError(what + "; " + chip + ": the run needs about " + mib(e.resident_bytes) + " of host memory (" +
                     e.describe() + "), more than the " + mib(host.memory->value) + " left by " + host.memory->what +
                     hint);
  if (host.address_space && e.virtual_bytes > host.address_space->value)
    throw InputError(what + "; " + chip + ": the run needs about " + mib(e.virtual_bytes) + " of address space (" +
                     e.describe() + ", coroutine stacks of " + std::to_string(e.threads) + " SystemC processes" +
                     (values ? ", the BLAS buffer " + mib(kBlasBufferBytes) : std::string()) +
                     "), more than the " + mib(host.address_space->value) + " left by " + host.address_space->what +
                     hint);
}

void preflight(const Scenario& sc, const HwConfig& hw, const RunOptions& opt) {
  // KV capacity is checked by the page manager (runtime/kv), which knows the storage type,
  // layers and heads a page holds.
  if (sc.model.parallel.dp > 1)
    throw InputError(opt.scenario_file + ": model.parallel.dp = " + std::to_string(sc.model.parallel.dp) +
                     ": data-parallel replicas serve separate workflows, and run simulates one batch on one replica "
                     "(allowed: dp = 1 for run; `ahbm-sim serve` routes a workload's workflows over the replicas)");
  check_split_fits_system(sc.model.parallel, hw.system.chips, opt.hw_file, opt.scenario_file);
  const ResourceEstimate e = estimate_resources(sc, hw, opt);
  if (e.tensor_bytes > kMaxTensorBytes)
    throw InputError(tensor_parameters(sc, opt) + ": the run needs about " + mib(e.resident_bytes) +
                     " of host memory (" + e.describe() + "), its tensors " + mib(e.tensor_bytes) +
                     " (allowed: up to " + mib(kMaxTensorBytes) + " on any machine); run timing only with --no-values");
  check_resources(e, read_host_limits(), tensor_parameters(sc, opt), hw, opt.hw_file, opt.values);
  // Checked to fit: take OpenBLAS's buffer now, before the run's allocations could leave it none.
  if (opt.values) reserve_blas_buffer();
}

void preflight_steps(const std::vector<PreflightStep>& steps, const HwConfig& hw, const std::string& hw_file) {
  RunOptions opt;
  opt.values = false;  // serve times its steps only
  const PreflightStep* largest = nullptr;
  ResourceEstimate most;
  for (const PreflightStep& s : steps) {
    ResourceEstimate e = estimate_resources(s.sc, hw, opt);
    if (!largest || e.resident_bytes > most.resident_bytes) {
      largest = &s;
      most = std::move(e);
    }
  }
  if (largest) check_resources(most, read_host_limits(), largest->what, hw, hw_file, false);
}

}  // namespace ahbm
