#include "runtime/step/step_record.h"

#include <algorithm>
#include <cmath>

#include "hw/chip/chip_stats.h"

namespace ahbm {

KvSnapshot kv_snapshot(const KvPageManager& kv) {
  return {kv.in_use(), kv.shared_pages(), kv.private_pages(), kv.pages_saved()};
}

StepId identify(const Step& step, const KvPageManager& kv) {
  StepId id;
  id.phase = phase_name(step.phase);
  id.label = step.label();
  id.index = step.index;
  for (const StepAgent& a : step.agents) {
    id.agents.push_back(a.name);
    id.agent_tokens.push_back(a.new_tokens);
  }
  id.kv = kv_snapshot(kv);
  return id;
}

StepShape shape_of(const Plan& plan) {
  StepShape s;
  s.rows_per_kv_head = plan.rows_per_kv_head;
  s.jobs = int(plan.jobs.size());
  for (const AttentionJob& job : plan.jobs) {
    int64_t tokens = 0;
    for (const KvShard& sh : job.shards) tokens += sh.tokens;
    s.kv_tokens_per_job.push_back(tokens);
    s.macs_expected += 2 * uint64_t(job.row_count()) * uint64_t(tokens) * uint64_t(job.head_dim);
  }
  for (const KvShard& sh : plan.jobs.at(0).shards) s.max_shard_tokens = std::max(s.max_shard_tokens, sh.tokens);
  return s;
}

uint64_t hbm_bytes_read(const SimResult& sim) {
  uint64_t bytes = 0;
  for_each_pe(sim.stats, [&](int, const StatsNode& pe) { bytes += pe.get(HbmSliceStats::bytes_read); });
  return bytes;
}

StepTiming timing_of(const Step& step, const Plan& plan, const SimResult& sim) {
  StepTiming t;
  t.ns = sim.end_ns;
  t.hbm_bytes = hbm_bytes_read(sim);
  for_each_pe(sim.stats, [&](int, const StatsNode& pe) {
    t.macs_simulated += pe.get(PeStats::macs);
    t.macs_skipped += pe.get(PeStats::macs_skipped);
    t.dma_busy_max_ns = std::max(t.dma_busy_max_ns, pe.get(PeStats::dma_busy));
  });
  // Completion per agent: the last O tile holding one of its rows at the host.
  t.agent_done_ns.assign(step.agents.size(), 0.0);
  for (size_t gt = 0; gt < sim.tile_done_ns.size(); ++gt) {
    const auto [j, ti] = sim.tile_of[gt];
    const AttentionJob& job = plan.jobs[size_t(j)];
    const QTile& tile = job.tiles[size_t(ti)];
    for (int r = tile.row_begin; r < tile.row_end; ++r) {
      const int sa = plan.meta[size_t(j)].step_agents[size_t(job.rows[size_t(r)].agent)];
      t.agent_done_ns[size_t(sa)] = std::max(t.agent_done_ns[size_t(sa)], sim.tile_done_ns[gt]);
    }
  }
  return t;
}

StepCheck check_outputs(const Plan& plan, const std::vector<MatrixRM>& outputs, KvValues& values, uint64_t seed) {
  StepCheck c;
  for (size_t j = 0; j < plan.jobs.size(); ++j) {
    const AttentionJob& job = plan.jobs[j];
    const int d = job.head_dim;
    const double scale = 1.0 / std::sqrt(double(d));
    c.datapath = worst_of(c.datapath, compare_to_reference(outputs[j], reference_attention(job, scale)));
    if (job.dtype != DType::fp32) {
      const FlatKv ex = flatten_kv_exact(job, plan.meta[j], values);
      const NumericCheck s = compare_to_reference(
          outputs[j], reference_attention(q_exact(job, plan.meta[j], seed), job.rows, ex.k, ex.v, ex.info, d, scale));
      c.storage = c.storage ? worst_of(*c.storage, s) : s;
    }
  }
  return c;
}

void place_on_timeline(Timeline& tl, const SimResult& sim, const Step& step, const Plan& plan, const ModelSpec& model,
                       int groups, StepRecord& rec) {
  const sc_core::sc_time start = tl.append(sim);
  rec.timing.start_ns = to_ns(start);
  SpanRecorder& spans = tl.spans();
  auto at = [&](double ns) { return start + sc_core::sc_time(ns, sc_core::SC_NS); };
  const int phase = spans.intern(rec.id.phase);
  const int d = model.head_dim;
  // The step, each agent's part of it, and (GQA) which KV head each group served when: a group
  // works through its Q tiles in send order (the tiles of its heads interleave; B5 sends them
  // head by head), so each tile occupies its group from the previous tile's completion to its own.
  spans.record(start, at(rec.timing.ns), spans.intern("runtime.step"), spans.intern(rec.id.label), phase,
               spans.intern("*"), rec.shape.rows_per_kv_head, 0);
  for (size_t a = 0; a < step.agents.size(); ++a) {
    const int rows = step.agents[a].new_tokens * model.q_per_kv();
    spans.record(start, at(rec.timing.agent_done_ns[a]), spans.intern("agent." + step.agents[a].name),
                 spans.intern("attention"), phase, spans.intern(step.agents[a].name), rows,
                 int64_t(rows) * d * int64_t(dtype_bytes(model.dtype)));
  }
  std::vector<double> group_free(size_t(groups), 0.0);
  for (size_t gt = 0; gt < sim.tile_of.size(); ++gt) {
    const auto [j, ti] = sim.tile_of[gt];
    const AttentionJob& job = plan.jobs[size_t(j)];
    double& from = group_free[size_t(job.group)];
    const double done = sim.tile_done_ns[gt];
    spans.record(at(std::min(from, done)), at(done), spans.intern("runtime.group" + std::to_string(job.group)),
                 spans.intern("kv_head" + std::to_string(plan.meta[size_t(j)].kv_head)), phase, spans.intern("*"),
                 job.tiles[size_t(ti)].rows(), 0);
    from = std::max(from, done);
  }
}

}  // namespace ahbm
