#include "runtime/driver.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <unistd.h>

#include "hw/common/error.h"
#include "hw/chip/chip_stats.h"
#include "runtime/join/phase.h"
#include "runtime/kv/page_manager.h"
#include "runtime/model/memory_map.h"
#include "runtime/npy.h"
#include "runtime/preflight.h"
#include "runtime/reference.h"
#include "runtime/run_summary.h"
#include "runtime/step_runner.h"
#include "runtime/timeline.h"
#include "runtime/report/report.h"
#include "runtime/report/stats_tree.h"

namespace ahbm {

namespace fs = std::filesystem;

double storage_tolerance(DType t) {
  // 8 units of roundoff of the storage type (fp16 u = 2^-11, bf16 u = 2^-8; values are standard
  // normal): the worst case is a row that sees a single key, whose O is that key's V row rounded
  // (|v| up to ~8 u-units of error); scores perturbed by the rounded Q and K move O by a
  // similar relative amount, and longer contexts average both down. fp32 rounds nothing.
  switch (t) {
    case DType::fp16: return 8.0 / 2048.0;
    case DType::bf16: return 8.0 / 256.0;
    default: return 1e-4;
  }
}

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
          " x model.layers x KV heads per group)";
  if (pages < 1) throw InputError("KV capacity exceeded: " + *note);
  return pages;
}

}  // namespace

RunOutput execute(const Scenario& sc, const HwConfig& hw, const RunOptions& opt) {
  RunOutput run;
  const uint64_t seed = opt.seed.value_or(sc.seed);
  preflight(sc, hw, opt);
  std::optional<MemoryMap> weights;  // a full model's weights in the HBM slices
  if (sc.model.full) {
    weights = plan_memory(*sc.model.full, sc.model.dtype, hw);
    check_weights_fit(*weights, kv_page_bytes(sc, hw.groups), opt.hw_file, opt.scenario_file);
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
  set.sim.vcd = opt.vcd;
  set.sim.hw_file = opt.hw_file;
  set.sim.nocs = opt.nocs;
  set.sim.progress = opt.progress;
  set.sim.watchdog_ns = opt.watchdog_ns;
  SimulatorPool sims;  // every step of the run on the same few elaborated chips
  set.sims = &sims;
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

  run.summary = build_summary(sc, hw, opt, seed, records, rep, run);
  if (weights)
    run.summary["memory_map"] = memory_map_json(*weights, sc.model.config_file, rep.slot_bytes, rep.pages_per_pe,
                                                rep.peak_per_pe);
  // The NoC model by name and its traffic totals, at the top level for quick comparison.
  run.summary["noc"] = report::stats_json(run.sim.stats.at(ChipStats::noc));
  run.summary["noc"]["model"] = hw.noc.model;
  if (joined) {
    run.summary["join"] = joined->summary;
    run.join_table = joined->table;
    run.join_csv = joined->csv;
  }
  report::add_latency(run);
  return run;
}

namespace {

std::string fmt_ns(const sc_core::sc_time& t) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", to_ns(t));
  return buf;
}

void write_latency_csv(const std::string& path, const SpanRecorder& spans) {
  std::vector<const Span*> order;
  for (const Span& s : spans.spans()) order.push_back(&s);
  std::stable_sort(order.begin(), order.end(), [](const Span* a, const Span* b) { return a->start < b->start; });
  std::ofstream out(path);
  out << "start_ns,end_ns,component,activity,phase,agent,rows,bytes\n";
  for (const Span* s : order)
    out << fmt_ns(s->start) << ',' << fmt_ns(s->end) << ',' << spans.name(s->component) << ','
        << spans.name(s->activity) << ',' << spans.name(s->phase) << ',' << spans.name(s->agent) << ',' << s->rows
        << ',' << s->bytes << '\n';
  out.close();  // flush now: a write error in the last buffer must not go unnoticed
  if (!out) throw std::runtime_error("cannot write " + path);
}

void dump_tensors(const std::string& dir, const RunOutput& run) {
  fs::create_directories(dir);
  const AttentionJob& job = run.plan.jobs.at(0);  // KV head 0 of the fan-out step
  const FlatKv kv = flatten_kv(job);
  const uint64_t d = uint64_t(job.head_dim), rows = uint64_t(job.row_count()), n = kv.info.size();
  write_npy_f32(dir + "/q.npy", job.q.data(), rows, d);
  write_npy_f32(dir + "/k.npy", kv.k.data(), n, d);
  write_npy_f32(dir + "/v.npy", kv.v.data(), n, d);
  write_npy_f32(dir + "/o.npy", run.sim.outputs.at(0).data(), rows, d);
  write_npy_bool(dir + "/mask.npy", visibility_mask(job.rows, kv.info), rows, n);
}

}  // namespace

std::filesystem::path check_run_dir(const std::string& dir_in) {
  const fs::path dir = fs::absolute(dir_in).lexically_normal();
  const fs::path target = dir.filename().empty() ? dir.parent_path() : dir;
  if (fs::exists(target) && !fs::is_directory(target))
    throw InputError("--out " + dir_in + ": exists and is not a directory; not overwriting it");
  if (fs::exists(target) && !fs::is_empty(target) && !fs::exists(target / "summary.json"))
    throw InputError("--out " + dir_in + ": exists and is not an ahbm-sim run directory (no summary.json); not overwriting it");
  for (fs::path up = target.parent_path(); !up.empty(); up = up.parent_path()) {
    if (fs::exists(up)) {
      if (!fs::is_directory(up))
        throw InputError("--out " + dir_in + ": " + up.string() + " is not a directory");
      break;
    }
    if (up == up.parent_path()) break;
  }
  return target;
}

void write_run_dir(const std::string& dir_in, const RunOutput& run, const RunOptions& opt) {
  const fs::path target = check_run_dir(dir_in);
  fs::create_directories(target.parent_path());
  const fs::path tmp = target.parent_path() / ("." + target.filename().string() + ".tmp-" + std::to_string(getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  try {
    {
      std::ofstream s(tmp / "summary.json");
      s << run.summary.dump(2) << '\n';
      s.close();
      if (!s) throw std::runtime_error("cannot write summary.json");
    }
    write_latency_csv((tmp / "latency.csv").string(), *run.sim.spans);
    report::write_report_files(tmp.string(), run, opt);
    if (!run.join_csv.empty()) {
      std::ofstream j(tmp / "join.csv");
      j << run.join_csv;
      if (!j) throw std::runtime_error("cannot write join.csv");
    }
    if (opt.dump_tensors && opt.values) dump_tensors((tmp / "tensors").string(), run);
    if (fs::exists(target)) fs::remove_all(target);
    fs::rename(tmp, target);
  } catch (...) {
    fs::remove_all(tmp);
    throw;
  }
}

}  // namespace ahbm
