#include "runtime/step_runner.h"

#include "hw/chip/chip_stats.h"

#include "runtime/policy/policy_report.h"

#include <algorithm>
#include <cmath>

namespace ahbm {

KvSnapshot kv_snapshot(const KvPageManager& kv) {
  return {kv.in_use(), kv.shared_pages(), kv.private_pages(), kv.pages_saved()};
}

namespace {

NumericCheck worst(const NumericCheck& a, const NumericCheck& b) {
  NumericCheck w;
  w.max_abs_err = std::max(a.max_abs_err, b.max_abs_err);
  w.max_rel_err = std::max(a.max_rel_err, b.max_rel_err);
  w.ref_max_abs = std::max(a.ref_max_abs, b.ref_max_abs);
  return w;
}

void read_pe_stats(const StatsNode& stats, StepRecord& rec) {
  for_each_pe(stats, [&](int, const StatsNode& pe) {
    rec.macs_simulated += pe.get(PeStats::macs);
    rec.hbm_bytes += pe.get(HbmSliceStats::bytes_read);
    rec.dma_busy_max_ns = std::max(rec.dma_busy_max_ns, pe.get(PeStats::dma_busy));
  });
}

// Rows of agent `i` (job agent order) in a batched job: a contiguous block.
std::pair<int, int> agent_rows(const AttentionJob& job, int i) {
  int b = 0;
  while (b < job.row_count() && job.rows[size_t(b)].agent != i) ++b;
  int e = b;
  while (e < job.row_count() && job.rows[size_t(e)].agent == i) ++e;
  return {b, e};
}

}  // namespace

SimResult simulate_step(const HwConfig& hw, const std::vector<AttentionJob>& jobs, const SimOptions& opt,
                        const StepSettings& set) {
  return set.sims ? set.sims->run(hw, jobs, opt) : simulate(hw, jobs, opt);
}

StepRecord begin_record(const Step& step, const KvPageManager& kv) {
  StepRecord rec;
  rec.phase = phase_name(step.phase);
  rec.label = step.label();
  rec.index = step.index;
  rec.kv = kv_snapshot(kv);
  return rec;
}

StepRun run_step(const Scenario& sc, const HwConfig& hw, const KvPageManager& kv, const Step& step,
                 const StepSettings& set, Timeline& timeline) {
  StepRun run;
  run.record = begin_record(step, kv);
  StepRecord& rec = run.record;
  run.plan = plan_step(sc, hw, kv, step, set.seed, set.values);
  // A, B1..B5 or auto; the NoC's estimate comes from the model the simulation will use.
  const PolicyDecision decision =
      decide_policy(run.plan.jobs, hw, set.policy, noc_estimate(hw, set.sim.nocs, set.sim.hw_file));
  run.plan.jobs = apply_decision(std::move(run.plan.jobs), hw, decision);
  const Plan& plan = run.plan;
  rec.rows_per_kv_head = plan.rows_per_kv_head;
  rec.jobs = int(plan.jobs.size());
  run.sim = simulate_step(hw, plan.jobs, set.sim, set);
  const SimResult& sim = run.sim;
  rec.policy = policy_summary(decision, hw, plan.jobs, sim);
  rec.ns = sim.end_ns;
  read_pe_stats(sim.stats, rec);

  for (const AttentionJob& job : plan.jobs) {
    int64_t tokens = 0;
    for (const KvShard& s : job.shards) tokens += s.tokens;
    rec.kv_tokens_per_job.push_back(tokens);
    rec.macs_expected += 2 * uint64_t(job.row_count()) * uint64_t(tokens) * uint64_t(job.head_dim);
  }
  for (const KvShard& s : plan.jobs[0].shards) rec.max_shard_tokens = std::max(rec.max_shard_tokens, s.tokens);

  // Completion per agent and per job (the job's last O tile at the host).
  for (const StepAgent& a : step.agents) {
    rec.agents.push_back(a.name);
    rec.agent_tokens.push_back(a.new_tokens);
  }
  rec.agent_done_ns.assign(step.agents.size(), 0.0);
  for (size_t gt = 0; gt < sim.tile_done_ns.size(); ++gt) {
    const auto [j, ti] = sim.tile_of[gt];
    const AttentionJob& job = plan.jobs[size_t(j)];
    const QTile& t = job.tiles[size_t(ti)];
    for (int r = t.row_begin; r < t.row_end; ++r) {
      const int sa = plan.meta[size_t(j)].step_agents[size_t(job.rows[size_t(r)].agent)];
      rec.agent_done_ns[size_t(sa)] = std::max(rec.agent_done_ns[size_t(sa)], sim.tile_done_ns[gt]);
    }
  }

  const sc_core::sc_time start = timeline.append(sim);
  rec.start_ns = to_ns(start);
  SpanRecorder& spans = timeline.spans();
  auto at = [&](double ns) { return start + sc_core::sc_time(ns, sc_core::SC_NS); };
  const int phase = spans.intern(rec.phase);
  const int d = sc.model.head_dim;
  // The step, each agent's part of it, and (GQA) which KV head each group served when: a group
  // works through its Q tiles in send order (the tiles of its heads interleave; B5 sends them
  // head by head), so each tile occupies its group from the previous tile's completion to its own.
  spans.record(start, at(rec.ns), spans.intern("runtime.step"), spans.intern(rec.label), phase, spans.intern("*"),
               rec.rows_per_kv_head, 0);
  for (size_t a = 0; a < step.agents.size(); ++a) {
    const int rows = step.agents[a].new_tokens * sc.model.q_per_kv();
    spans.record(start, at(rec.agent_done_ns[a]), spans.intern("agent." + step.agents[a].name), spans.intern("attention"),
                 phase, spans.intern(step.agents[a].name), rows,
                 int64_t(rows) * d * int64_t(dtype_bytes(sc.model.dtype)));
  }
  std::vector<double> group_free(size_t(hw.groups), 0.0);
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

  if (set.values) {
    rec.checked = true;
    const double scale = 1.0 / std::sqrt(double(d));
    for (size_t j = 0; j < plan.jobs.size(); ++j) {
      const AttentionJob& job = plan.jobs[j];
      rec.datapath = worst(rec.datapath, compare_to_reference(sim.outputs[j], reference_attention(job, scale)));
      if (job.dtype != DType::fp32) {
        const FlatKv ex = flatten_kv_exact(job, plan.meta[j], *set.values);
        const NumericCheck c = compare_to_reference(
            sim.outputs[j], reference_attention(q_exact(job, plan.meta[j], set.seed), job.rows, ex.k, ex.v, ex.info, d, scale));
        rec.storage = rec.storage ? worst(*rec.storage, c) : c;
      }
    }
  }

  if (set.compare_unbatched) {
    // The baseline: each agent's attention on its own (every KV head of it), agents in turn.
    SimOptions so = set.sim;
    so.vcd = false;
    rec.unbatched_ns = 0.0;
    for (int i = 0; i < int(step.agents.size()); ++i) {
      const Plan solo = plan_step(sc, hw, kv, step, set.seed, set.values, i);
      const SimResult u = simulate_step(hw, solo.jobs, so, set);
      *rec.unbatched_ns += u.end_ns;
      if (!set.values) continue;
      for (size_t h = 0; h < solo.jobs.size(); ++h) {  // job h of both plans is KV head h
        const auto [b, e] = agent_rows(plan.jobs[h], i);
        const MatrixRM& solo_o = u.outputs[h];
        const auto batched_o = sim.outputs[h].middleRows(b, e - b);
        if (solo_o.rows() != e - b) throw std::logic_error("unbatched baseline: row blocks differ");
        rec.unbatched_max_abs_diff = std::max(rec.unbatched_max_abs_diff,
                                              double((solo_o - batched_o).cwiseAbs().maxCoeff()));
        rec.unbatched_identical = rec.unbatched_identical && solo_o == batched_o;
      }
    }
  }
  return run;
}

}  // namespace ahbm
