#include "runtime/run/driver.h"
#include "runtime/run/power_cap.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>

#include "hw/common/base/error.h"
#include "runtime/run/join_phase.h"
#include "runtime/kv/page_manager.h"
#include "runtime/step/model_steps.h"
#include "runtime/step/system_collectives.h"
#include "runtime/model/memory_map.h"
#include "runtime/io/npy.h"
#include "runtime/io/output_dir.h"
#include "runtime/run/preflight.h"
#include "runtime/numerics/reference.h"
#include "runtime/run/run_summary.h"
#include "runtime/step/step_runner.h"
#include "runtime/step/timeline.h"
#include "runtime/run/report.h"

namespace ahbm {

namespace {

// Pages one PE can hold: its HBM capacity, less the weights of a full model on the most loaded
// PE (runtime/model/memory_map.h), over the bytes of one page slot.
int64_t pages_per_pe(const Scenario& sc, const HwConfig& hw, const RunOptions& opt, const MemoryMap* weights,
                     std::string* note) {
  const uint64_t slot = kv_page_bytes(sc, hw.groups);
  const uint64_t room = weights ? weights->free_for_kv() : hw.pe.hbm.capacity_bytes;
  const int64_t pages = int64_t(room / slot);
  *note = opt.hw_file + ": pe.hbm.capacity_bytes = " + std::to_string(hw.pe.hbm.capacity_bytes) +
          (weights ? " less " + std::to_string(weights->weight_bytes_max_pe) +
                         " bytes of model weights on the most loaded PE (summary memory_map)"
                   : std::string()) +
          " holds " + std::to_string(pages) + " pages of " + std::to_string(slot) + " bytes (" + opt.scenario_file +
          ": kv.page_tokens x model.head_dim x 2 (K, V) x " + dtype_name(sc.model.dtype) +
          " x " + kv_page_layers_text(sc) + " x KV heads per group)";
  if (pages < 1) throw InputError("KV capacity exceeded: " + *note);
  return pages;
}

// The no-sharing baseline in time (--compare-unbatched): the run's phases replayed on page tables
// where every fork copies the parent's pages into a pool as large as the run's (so copies that do
// not fit in a PE's HBM are named, not simulated), each step planned, laid out by the run's policy
// setting and simulated like the run's. A join strategy's phase is not replayed (its steps follow
// the strategy's plans); the plain join step is. `fanout_o`: the shared run's fan-out O per KV
// head (empty: timing only).
NoSharingRun timed_no_sharing(const Scenario& sc, const HwConfig& hw, const StepRunner& steps, int64_t pool,
                              const std::string& note, const std::vector<MatrixRM>& fanout_o) {
  NoSharingRun out;
  KvPageManager copies(hw.pes_per_group(), pool, sc.kv.page_tokens, note);
  AgentSession session(sc, copies, false);
  StepRunner quiet = steps.quiet();
  Timeline unused(false);  // the baseline's spans are not part of the run's trace
  try {
    session.run([&](const Step& step) {
      const StepRun r = quiet.run(copies, step, unused);  // the attention alone
      NoSharingRun::Phase& ph = out.phases[phase_name(step.phase)];
      ph.ns += steps.step_ns(step, r.record.timing.ns);  // with a whole model's layers, as the run's steps
      ph.hbm_bytes += r.record.timing.hbm_bytes;
      ++ph.steps;
      if (r.record.check) out.max_abs_err = std::max(out.max_abs_err, r.record.check->datapath.max_abs_err);
      if (step.phase == PhaseType::fanout && r.record.check) {  // with values
        out.max_abs_diff_fanout = 0;
        for (size_t h = 0; h < fanout_o.size(); ++h) {  // same rows in the same order: only the KV is laid out anew
          const MatrixRM& o = r.sim.outputs.at(h);
          if (o.rows() != fanout_o[h].rows() || o.cols() != fanout_o[h].cols())
            throw std::logic_error("no-sharing baseline: the fan-out O differs in shape from the shared run's");
          out.max_abs_diff_fanout = std::max(out.max_abs_diff_fanout, double((o - fanout_o[h]).cwiseAbs().maxCoeff()));
        }
      }
    });
  } catch (const InputError& e) {
    out.phases.clear();
    out.unavailable = e.what();
  }
  return out;
}

// One run of the scenario on `hw` as it is (execute() adds the power cap).
RunOutput execute_at(const Scenario& sc, const HwConfig& hw, const RunOptions& opt) {
  RunOutput run;
  const uint64_t seed = opt.seed.value_or(sc.seed);
  preflight(sc, hw, opt);
  std::optional<MemoryMap> weights;  // a full model's weights in the HBM slices
  if (sc.model.full) {
    weights = plan_memory(*sc.model.full, sc.model.dtype, hw);
    check_per_chip(sc.model.parallel,
                   [&] { check_weights_fit(*weights, kv_page_bytes(sc, hw.groups), opt.hw_file, opt.scenario_file); });
  }
  std::string note;
  const int64_t pool = pages_per_pe(sc, hw, opt, weights ? &*weights : nullptr, &note);
  KvPageManager kv(hw.pes_per_group(), pool, sc.kv.page_tokens, note);
  std::optional<KvValues> values;
  if (opt.values) values.emplace(seed, sc.model.head_dim, sc.model.dtype);
  StepSettings set;
  set.seed = seed;
  set.values = values ? &*values : nullptr;
  set.compare_unbatched = opt.compare_unbatched;
  set.policy = opt.policy;
  set.objective = opt.objective;
  set.launch = opt.launch;
  set.attention_fused = sc.model.fusion.attention;
  set.sim.vcd = opt.vcd;
  set.sim.hw_file = opt.hw_file;
  set.sim.nocs = opt.nocs;
  set.sim.progress = opt.progress;
  set.sim.watchdog_ns = opt.watchdog_ns;
  if (opt.progress) {  // the steps before the join, from the phases alone (page tables, no tensors)
    KvPageManager dry(hw.pes_per_group(), -1, sc.kv.page_tokens);
    AgentSession(sc, dry).run([&](const Step&) { ++set.planned_steps; });
  }
  SimulatorPool own_sims;  // every step of the run on the same few elaborated chips
  set.sims = opt.sims ? opt.sims : &own_sims;
  // A whole model: every step runs every layer's operators around its attention, then the LM
  // head (runtime/step/model_steps.h; an MoE layer's experts get the seeded router's rows).
  SimulatorPool gemm_sims;
  // A split model (tensor, pipeline parallelism): one chip simulated, the collectives between the
  // chips timed on the system network (runtime/step/system_collectives.h).
  std::optional<SystemCollectives> collectives;
  SplitCollectives split;
  if (weights && !sc.model.parallel.none()) {
    collectives.emplace(hw, opt.hw_file, sc.model.parallel, opt.system_networks);
    split = collectives->bind();
  }
  std::optional<ModelSteps> operators;
  if (weights) {
    operators.emplace(*sc.model.full, sc.model.dtype, *weights, hw, gemm_sims, set.sim, opt.every_layer, seed,
                      opt.gemm_mapping, sc.model.fusion, split, sc.model.layers);
    set.layers = &*operators;
  }
  StepRunner steps(sc, hw, set);  // plan -> choose -> apply -> simulate -> report, per step

  Timeline timeline(opt.vcd);
  std::vector<StepRecord> records;
  KvReport rep;
  const auto record = [&](const Step& step, StepRun&& sr) {
    if (sr.record.id.kv.in_use > rep.at_peak.in_use) rep.at_peak = sr.record.id.kv;
    records.push_back(sr.record);
    if (opt.keep_steps) run.steps.push_back({step, sr.plan, sr.sim.outputs, sr.sim.stats});
    if (step.phase == PhaseType::fanout) {
      run.plan = std::move(sr.plan);
      run.sim.outputs = std::move(sr.sim.outputs);
    }
  };
  AgentSession session(sc, kv);
  session.run([&](const Step& step) { record(step, steps.run(kv, step, timeline)); });
  std::optional<join::JoinOutcome> joined;
  if (sc.join) joined = join::run_join_phase(session, steps, timeline, record, opt.join_compare || sc.join->compare);
  run.stage_calls = steps.calls();
  timeline.finish_into(run.sim);

  rep.slot_bytes = kv_page_bytes(sc, hw.groups);
  rep.model_page_bytes = kv_page_bytes(sc, 1) ;
  rep.pages_per_pe = kv.pages_per_pe();
  rep.allocations = kv.allocations();
  rep.frees = kv.frees();
  rep.cow_copies = kv.cow_copies();
  rep.peak = kv.peak_total();
  rep.in_use_end = kv.in_use();
  for (int p = 0; p < kv.pes(); ++p) rep.peak_per_pe.push_back(kv.peak(p));
  // The no-sharing baseline: the same phases with every fork copying the parent's pages.
  KvPageManager copies(hw.pes_per_group(), -1, sc.kv.page_tokens);
  AgentSession baseline(sc, copies, false);
  baseline.run([](const Step&) {});
  if (sc.join) join::run_join(baseline, joined->plans.front(), *sc.join, join::no_hardware());
  rep.no_sharing_peak = copies.peak_total();
  for (int p = 0; p < copies.pes(); ++p) rep.no_sharing_peak_pe_max = std::max(rep.no_sharing_peak_pe_max, copies.peak(p));
  if (opt.compare_unbatched) rep.no_sharing_timed = timed_no_sharing(sc, hw, steps, pool, note, run.sim.outputs);

  run.power = report::power_trace(*run.sim.spans,
                                  report::power_segments(records, run.sim.stats, hw, sc.model.dtype, run.sim.end_ns),
                                  run.sim.end_ns,
                                  opt.power_window_ns > 0 ? opt.power_window_ns : report::auto_power_window_ns(run.sim.end_ns));
  run.summary = build_summary(sc, hw, opt, seed, records, rep, run);
  if (weights)
    run.summary.memory_map = memory_map_json(*weights, sc.model.config_file, rep.slot_bytes, rep.pages_per_pe,
                                             rep.peak_per_pe);
  if (operators) add_model_latency(run.summary, operators->json(), records, sc.model.layers);
  if (operators && !sc.model.parallel.none()) run.summary.system_energy = operators->system_energy(run.summary.energy.run);
  if (joined) {
    run.summary.join = joined->summary;
    run.join_table = joined->table;
    run.join_csv = joined->csv;
  }
  return run;
}

}  // namespace

RunOutput execute(const Scenario& sc, const HwConfig& hw, const RunOptions& opt) {
  // The mappings differ only in how weight GEMMs run: an attention-only scenario has none.
  if (opt.gemm_mapping != GemmMapping::w_stationary && !sc.model.full)
    throw InputError("gemm_mapping = '" + choice_name(opt.gemm_mapping) +
                     "' needs a scenario with a whole model (model.config; docs/models.md)");
  if (hw.power_cap_w <= 0) return execute_at(sc, hw, opt);
  return run_power_capped(
      hw, opt.hw_file,
      [&](const HwConfig& c, double window_ns) {
        RunOptions o = opt;
        o.power_window_ns = window_ns;
        return execute_at(sc, c, o);
      },
      opt.power_window_ns);
}

namespace {

void dump_tensors(OutputTarget& out, const RunOutput& run) {
  const AttentionJob& job = run.plan.jobs.at(0);  // KV head 0 of the fan-out step
  const FlatKv kv = flatten_kv(job);
  const uint64_t d = uint64_t(job.head_dim), rows = uint64_t(job.row_count()), n = kv.info.size();
  out.write("tensors/q.npy", [&](std::ostream& os) { write_npy_f32(os, job.q.data(), rows, d); });
  out.write("tensors/k.npy", [&](std::ostream& os) { write_npy_f32(os, kv.k.data(), n, d); });
  out.write("tensors/v.npy", [&](std::ostream& os) { write_npy_f32(os, kv.v.data(), n, d); });
  out.write("tensors/o.npy", [&](std::ostream& os) { write_npy_f32(os, run.sim.outputs.at(0).data(), rows, d); });
  out.write("tensors/mask.npy", [&](std::ostream& os) { write_npy_bool(os, visibility_mask(job.rows, kv.info), rows, n); });
}

}  // namespace

void write_run_files(OutputTarget& out, const RunOutput& run, const RunOptions& opt) {
  out.write("summary.json", [&](std::ostream& os) { os << to_json(run.summary).dump(2) << '\n'; });
  report::write_report_files(out, run, opt);
  if (!run.join_csv.empty()) out.write("join.csv", [&](std::ostream& os) { os << run.join_csv; });
  if (opt.dump_tensors && opt.values) dump_tensors(out, run);
}

void write_run_dir(const std::string& dir, const RunOutput& run, const RunOptions& opt) {
  OutputTarget out(dir, OutputKind::directory);
  write_run_files(out, run, opt);
  out.commit();
}

}  // namespace ahbm
