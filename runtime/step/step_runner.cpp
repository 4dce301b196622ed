#include "runtime/step/step_runner.h"

#include <algorithm>
#include <optional>

#include "runtime/plan/choose.h"
#include "runtime/plan/policy_report.h"

namespace ahbm {

namespace {

// Rows of agent `i` (job agent order) in a batched job: a contiguous block.
std::pair<int, int> agent_rows(const AttentionJob& job, int i) {
  int b = 0;
  while (b < job.row_count() && job.rows[size_t(b)].agent != i) ++b;
  int e = b;
  while (e < job.row_count() && job.rows[size_t(e)].agent == i) ++e;
  return {b, e};
}

// A serve part's layout when the choice has one answer: a requested policy (not auto) with one
// candidate, available, for jobs that all have Q tiles. choose() would estimate that candidate
// only to pick it (its estimate is a finite time then: pick takes it), and serve keeps no
// estimate. Otherwise nothing: the choice needs the cost model (several tile sizes, auto), or
// choose gives the error (an unavailable candidate; jobs without tiles, which it refuses).
std::optional<Layout> sole_layout(const std::vector<AttentionJob>& jobs, const std::vector<Candidate>& candidates,
                                  const std::string& policy) {
  if (policy == "auto" || candidates.size() != 1 || !candidates.front().unavailable.empty()) return std::nullopt;
  for (const AttentionJob& j : jobs)
    if (j.tiles.empty()) return std::nullopt;
  return candidates.front().layout;
}

}  // namespace

StepRunner::StepRunner(const Scenario& sc, const HwConfig& hw, const StepSettings& set)
    : sc_(sc), hw_(hw), set_(set), planner_(sc, hw, set.seed, set.values),
      cost_model_(hw, set.sim.nocs, set.sim.hw_file) {}

StepRunner StepRunner::quiet() const {
  StepSettings s = set_;
  s.compare_unbatched = false;
  s.sim.vcd = false;
  s.sim.progress = nullptr;
  s.layers = nullptr;  // a strategy compared beside the run: its attention only
  return StepRunner(sc_, hw_, s);
}

SimResult StepRunner::simulate(const std::vector<AttentionJob>& jobs, const SimOptions& opt) {
  ++simulations_;
  return set_.sims ? set_.sims->run(hw_, jobs, opt) : ahbm::simulate(hw_, jobs, opt);
}

StepRun StepRunner::run(const KvPageManager& kv, const Step& step, Timeline& tl, int q_tile_rows) {
  ++steps_run_;
  // Progress reports of this step's simulations say which step of the run they belong to, and the
  // run's simulated time so far: the step's simulation starts at 0, the step at the timeline's now.
  SimOptions sim = set_.sim;
  if (sim.progress)
    sim.progress = [report = set_.sim.progress, n = steps_run_, of = set_.planned_steps, label = step.label(),
                    before = tl.now_ns()](const SimProgress& p) {
      SimProgress q = p;
      q.sim_ns += before;
      q.step = n;
      q.steps = of;
      q.step_label = label;
      report(q);
    };
  StepRun run;
  StepRecord& rec = run.record;
  rec.id = identify(step, kv);
  Planner::JobSet set;
  set.q_tile_rows = q_tile_rows;
  run.plan = plan(kv, step, set);                                                                  // plan
  // The fan-out step's decision is reported with every candidate's estimate (summary.policy); any
  // other step needs only the candidates its policy can pick (all of them under auto).
  const bool reported = rec.id.phase == "fanout";
  const Choice choice = choose(run.plan.jobs, reported ? run.plan.candidates : candidates_for(run.plan.candidates, set_.policy),
                               hw_, set_.policy, cost_model_, set_.objective);  // choose
  run.plan.jobs = apply_layout(std::move(run.plan.jobs), hw_, choice.chosen);                       // apply
  run.sim = simulate(run.plan.jobs, sim);                                                           // simulate
  // report
  rec.shape = shape_of(run.plan);
  rec.policy = policy_summary(choice, hw_, run.plan.jobs, run.sim);
  rec.timing = timing_of(step, run.plan, run.sim);
  const double step_start = tl.now_ns();
  if (set_.layers) set_.layers->before_attention(step, tl);
  place_on_timeline(tl, run.sim, step, run.plan, sc_.model, hw_.groups, rec);
  if (set_.layers) {
    // The step spans every layer: it starts with layer 0's operators before the attention.
    rec.layers = set_.layers->after_attention(step, tl, rec.timing.ns);
    for (double& t : rec.timing.agent_done_ns) t += rec.timing.start_ns - step_start;
    rec.timing.start_ns = step_start;
    rec.timing.ns = tl.now_ns() - step_start;
  }
  // Energy: the simulated activity (once per layer with a whole model) and static power over
  // the whole step.
  rec.energy = read_energy(run.sim.stats, hw_, sc_.model.dtype, rec.timing.ns, set_.layers ? set_.layers->layers() : 1);
  if (set_.layers) rec.energy += set_.layers->operators_energy(step);
  const double layers = set_.layers ? double(set_.layers->layers()) : 1.0;
  rec.work_macs = double(rec.timing.macs_simulated) * layers;
  rec.work_hbm_bytes = double(rec.timing.hbm_bytes) * layers;
  if (set_.layers) {
    const Activity ops = set_.layers->operators_activity(step);
    rec.work_macs += double(ops.macs);
    rec.work_hbm_bytes += double(ops.hbm_bytes);
  }
  if (set_.values) rec.check = check_outputs(run.plan, run.sim.outputs, *set_.values, set_.seed);
  if (set_.compare_unbatched) rec.unbatched = unbatched(kv, step, q_tile_rows, run.plan, run.sim, sim);
  return run;
}

UnbatchedRun StepRunner::unbatched(const KvPageManager& kv, const Step& step, int q_tile_rows, const Plan& batched_plan,
                                   const SimResult& batched, const SimOptions& step_sim) {
  // The baseline: each agent's attention on its own (every KV head of it), agents in turn.
  SimOptions so = step_sim;
  so.vcd = false;
  UnbatchedRun u;
  for (int i = 0; i < int(step.agents.size()); ++i) {
    Planner::JobSet alone;
    alone.only = i;
    alone.q_tile_rows = q_tile_rows;
    const Plan solo = plan(kv, step, alone);
    const SimResult r = simulate(solo.jobs, so);
    Step solo_step = step;  // agent i's step alone: its rows through the layers, if any
    solo_step.agents = {step.agents[size_t(i)]};
    u.ns += step_ns(solo_step, r.end_ns);
    u.hbm_bytes += hbm_bytes_read(r);
    if (!set_.values) continue;
    for (size_t h = 0; h < solo.jobs.size(); ++h) {  // job h of both plans is KV head h
      const auto [b, e] = agent_rows(batched_plan.jobs[h], i);
      const MatrixRM& solo_o = r.outputs[h];
      const auto batched_o = batched.outputs[h].middleRows(b, e - b);
      if (solo_o.rows() != e - b) throw std::logic_error("unbatched baseline: row blocks differ");
      u.max_abs_diff = std::max(u.max_abs_diff, double((solo_o - batched_o).cwiseAbs().maxCoeff()));
      u.identical = u.identical && solo_o == batched_o;
    }
  }
  return u;
}

Plan StepRunner::plan(const KvPageManager& kv, const Step& step, const Planner::JobSet& set) {
  Plan p = planner_.plan(kv, step, set);
  set_launch_schedule(p.jobs, set_.launch);
  for (AttentionJob& j : p.jobs) j.scores_in_hbm = !set_.attention_fused;
  return p;
}

double StepRunner::probe(const KvPageManager& kv, const Step& step, int q_tile_rows) {
  SimOptions so = set_.sim;
  so.vcd = false;
  so.progress = nullptr;
  Planner::JobSet set;
  set.q_tile_rows = q_tile_rows;
  set.timing_only = true;
  return step_ns(step, simulate(plan(kv, step, set).jobs, so).end_ns);
}

std::vector<AttentionJob> StepRunner::batch_jobs(const KvPageManager& kv, const std::vector<Step>& parts,
                                                 std::vector<Layout>* chosen) {
  std::vector<AttentionJob> all;
  for (const Step& part : parts) {
    Planner::JobSet set;
    set.timing_only = true;
    Plan planned = plan(kv, part, set);
    // Only the chosen layout is used (no decision record per part): estimate the requested
    // policy's candidates alone, and none when it has one (a decode part's single tile).
    const std::vector<Candidate> candidates = candidates_for(planned.candidates, set_.policy);
    const std::optional<Layout> sole = sole_layout(planned.jobs, candidates, set_.policy);
    const Layout layout =
        sole ? *sole : choose(planned.jobs, candidates, hw_, set_.policy, cost_model_, set_.objective).chosen;
    if (chosen) chosen->push_back(layout);
    for (AttentionJob& j : apply_layout(std::move(planned.jobs), hw_, layout)) all.push_back(std::move(j));
  }
  return all;
}

SimResult StepRunner::simulate_quiet(const std::vector<AttentionJob>& jobs) {
  SimOptions so = set_.sim;
  so.vcd = false;
  so.progress = nullptr;
  so.keep_spans = false;
  return simulate(jobs, so);
}

double StepRunner::step_ns(const Step& step, double attention_ns) const {
  return set_.layers ? set_.layers->step_ns(step, attention_ns) : attention_ns;
}

}  // namespace ahbm
