#include "hw/common/sim/sim_shared.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace ahbm {

namespace {

// The Q source's send order. Tiles go round-robin over "streams" so concurrent groups start
// together. A streamed job (Policies A..B4) is a stream of its own: its tiles finish
// independently on each PE, so interleaving the heads of one group is harmless. The
// KV-broadcast jobs (B5) of one group form a single stream instead, in the order the group's
// KV mover serves them: job by job, and within a job pass by pass (broadcast_pass_of_tiles).
// A pass advances in lockstep and cannot finish before every one of its Q tiles is in its
// PE; a CUBE's Q buffer frees a tile only when its PE starts it. Interleaving (say) the 8 heads
// of a GQA group put tiles of later heads of PEs 0-4 into CUBE 0's Q buffer until it was full,
// before the first head's tiles for PEs 5-7 could arrive: deadlock. Pass order cannot do that:
// the earliest unsent tile's pass only waits for earlier passes, and those have all been sent.
std::vector<std::vector<std::pair<int, int>>> send_streams(const std::vector<AttentionJob>& jobs) {
  std::vector<std::vector<std::pair<int, int>>> streams;  // (job, tile index) in send order
  std::map<int, size_t> broadcast_stream_of_group;
  for (size_t jb = 0; jb < jobs.size(); ++jb) {
    const AttentionJob& job = jobs[jb];
    std::vector<int> order(job.tiles.size());
    std::iota(order.begin(), order.end(), 0);
    size_t s = streams.size();
    if (job.kv_broadcast) {
      const std::vector<int> pass = broadcast_pass_of_tiles(job);
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return pass[size_t(a)] < pass[size_t(b)]; });
      s = broadcast_stream_of_group.emplace(job.group, streams.size()).first->second;
    }
    if (s == streams.size()) streams.emplace_back();
    for (int i : order) streams[s].emplace_back(int(jb), i);
  }
  return streams;
}

// Job `job` of a GEMM or kernel run as every operator starts: its Y zero (values only), its
// counters named after it with one end time per chip PE, its interned name. Returns the counters.
template <class Run, class Job>
GemmOpStats& start_operator(Run& run, const Job& job, size_t pes, SpanRecorder& spans) {
  run.y.push_back(job.values() ? MatrixRM::Zero(job.m, job.n) : MatrixRM());
  GemmOpStats& st = run.stats.emplace_back();
  st.op = job.op;
  st.pe_end_ns.assign(pes, 0.0);
  run.op_ids.push_back(spans.intern(job.op));
  return st;
}

}  // namespace

RunContext::RunContext(const HwConfig& c, TraceSink& t, SpanRecorder& s)
    : cfg(c), clock(c.clock_ghz), trace(t), spans(s), guard(s) {
  none_agent = spans.intern("-");
}

void RunContext::begin_epoch(const std::vector<AttentionJob>& run_jobs, const sc_core::sc_time& run_epoch) {
  epoch = run_epoch;
  trace.set_epoch(epoch);
  spans.set_epoch(epoch);
  guard.begin_run(epoch);
  kernel_launched_.clear();
  for (size_t j = 0; j < run_jobs.size(); ++j)
    kernel_launched_.push_back(
        epoch + sc_core::sc_time(kernel_start_ns(run_jobs, j, cfg.host.kernel_launch_ns), sc_core::SC_NS));
}

void SimShared::begin_run(const std::vector<AttentionJob>& run_jobs, const sc_core::sc_time& run_epoch) {
  jobs.bind(run_jobs);
  begin_epoch(run_jobs, run_epoch);
  tiles.clear();
  tiles_of_group.assign(size_t(cfg.groups), {});
  const auto streams = send_streams(run_jobs);
  size_t most = 0;
  for (const auto& st : streams) most = std::max(most, st.size());
  for (size_t i = 0; i < most; ++i) {
    for (const auto& st : streams) {
      if (i >= st.size()) continue;
      const auto [jb, index] = st[i];
      const AttentionJob& job = jobs[size_t(jb)];
      const QTile& tile = job.tiles[size_t(index)];
      TileRef r;
      r.job = jb;
      r.index = index;
      r.row_begin = tile.row_begin;
      r.row_end = tile.row_end;
      r.group = job.group;
      r.phase_id = spans.intern(job.phase);
      int agent = job.rows.empty() ? -1 : job.rows[size_t(r.row_begin)].agent;
      for (int row = r.row_begin; row < r.row_end; ++row)
        if (job.rows[size_t(row)].agent != agent) agent = -1;
      r.agent_id = agent >= 0 && size_t(agent) < job.agents.size() ? spans.intern(job.agents[size_t(agent)])
                                                                 : spans.intern("*");
      tiles_of_group.at(size_t(job.group)).push_back(int(tiles.size()));
      tiles.push_back(r);
    }
  }
}

void SimShared::begin_gemms(const std::vector<GemmJob>& run_gemms) {
  gemm.jobs.bind(run_gemms);
  gemm.plans = gemm_pe_plans(cfg, run_gemms);
  gemm.columns.clear();
  gemm.x_chunks = gemm_x_chunks(cfg, run_gemms, gemm.plans);
  gemm.y.clear();
  gemm.stats.clear();
  gemm.op_ids.clear();
  gemm.blocks_left = 0;
  if (run_gemms.empty()) return;
  gemm.activity_in = spans.intern("w_in");
  gemm.activity_out = spans.intern("y_out");
  const size_t pes = size_t(cfg.groups) * size_t(cfg.pes_per_group());
  for (size_t j = 0; j < run_gemms.size(); ++j) {
    const GemmJob& job = run_gemms[j];
    GemmOpStats& st = start_operator(gemm, job, pes, spans);
    // A run is one operator (an MoE run: its experts as one grouped kernel): one launch.
    st.launch_ns = cfg.host.kernel_launch_ns;
    // w_stationary's X comes over the host link (gemm_job.h GemmXChunk), M·K·b once for every CUBE.
    if (!job.x_stationary()) st.x_link_bytes = uint64_t(job.m) * uint64_t(job.k) * job.elem_bytes();
    gemm.columns.push_back(job.x_stationary() ? gemm_column_groups(gemm_shards_of(job, int(pes))) : std::vector<GemmColumns>{});
    for (const GemmPePlan& pl : gemm.plans[j]) gemm.blocks_left += gemm_y_blocks(job, pl, gemm.columns[j]);
  }
}

void SimShared::begin_vector_kernels(const std::vector<VectorKernelJob>& run_kernels) {
  kernels.jobs.bind(run_kernels);
  kernels.plans = vector_kernel_plans(cfg, run_kernels);
  kernels.y.clear();
  kernels.stats.clear();
  kernels.op_ids.clear();
  kernels.blocks_left = 0;
  const size_t pes = size_t(cfg.groups) * size_t(cfg.pes_per_group());
  for (size_t j = 0; j < run_kernels.size(); ++j) {
    const VectorKernelJob& job = run_kernels[j];
    start_operator(kernels, job, pes, spans).launch_ns = double(j + 1) * cfg.host.kernel_launch_ns;
    for (const VectorKernelPlan& pl : kernels.plans[j]) kernels.blocks_left += uint64_t(pl.blocks(job.m));
  }
}

}  // namespace ahbm
