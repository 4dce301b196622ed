#include "runtime/driver.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <unistd.h>

#include "hw/common/error.h"
#include "hw/pe/engines.h"
#include "runtime/npy.h"
#include "runtime/preflight.h"
#include "runtime/reference.h"
#include "runtime/report/report.h"

namespace ahbm {

namespace fs = std::filesystem;

namespace {

double ns(const sc_core::sc_time& t) { return t.to_seconds() * 1e9; }

// GEMM engine use for the whole batch on one PE vs one run per agent (note §2.5/§3.6): the
// stacked Q_combined fills the engine's tile rows that per-agent runs leave padded.
Json gemm_batching(const HwConfig& hw, const Scenario& sc, int kv_tokens_per_pe) {
  const auto& g = hw.pe.gemm;
  const uint64_t d = uint64_t(sc.model.head_dim), n = uint64_t(kv_tokens_per_pe);
  auto per_pe = [&](uint64_t rows) { return gemm_cycles(g, rows, n, d) + gemm_cycles(g, rows, d, n); };
  auto tiles = [&](uint64_t rows) { return gemm_tiles(g, rows, n, d) + gemm_tiles(g, rows, d, n); };
  const uint64_t rows = uint64_t(sc.total_rows());
  uint64_t sep_cycles = 0, sep_tiles = 0;
  for (const auto& a : sc.agents) sep_cycles += per_pe(uint64_t(a.new_tokens)), sep_tiles += tiles(uint64_t(a.new_tokens));
  const double macs = 2.0 * double(rows) * double(n) * double(d);
  const double tile_macs = double(g.tile_m) * g.tile_n * g.tile_k;
  const uint64_t b_cycles = per_pe(rows), b_tiles = tiles(rows);
  return Json{{"tile_shape", {g.tile_m, g.tile_n, g.tile_k}},
              {"kv_tokens_per_pe", kv_tokens_per_pe},
              {"batched", {{"rows", rows}, {"cycles_per_pe", b_cycles}, {"tiles", b_tiles},
                           {"utilization", b_tiles ? macs / (double(b_tiles) * tile_macs) : 0.0}}},
              {"per_agent_runs", {{"runs", sc.agents.size()}, {"cycles_per_pe", sep_cycles}, {"tiles", sep_tiles},
                                  {"utilization", sep_tiles ? macs / (double(sep_tiles) * tile_macs) : 0.0}}},
              {"speedup", b_cycles ? double(sep_cycles) / double(b_cycles) : 0.0}};
}

}  // namespace

RunOutput execute(const Scenario& sc, const HwConfig& hw, const RunOptions& opt) {
  RunOutput run;
  const uint64_t seed = opt.seed.value_or(sc.seed);
  preflight(sc, hw, opt);
  run.plan = plan_fanout(sc, hw, seed, opt.values);
  SimOptions so;
  so.vcd = opt.vcd;
  so.hw_file = opt.hw_file;
  so.nocs = opt.nocs;
  so.progress = opt.progress;
  so.watchdog_ns = opt.watchdog_ns;
  run.sim = simulate(hw, {run.plan.job}, so);

  const AttentionJob& job = run.plan.job;
  SpanRecorder& spans = *run.sim.spans;
  // One span per agent: from the step's start until the last of its rows is back at the host.
  std::vector<double> agent_done(job.agents.size(), 0.0);
  for (size_t gt = 0; gt < run.sim.tile_done_ns.size(); ++gt) {
    const QTile& t = job.tiles[size_t(run.sim.tile_of[gt].second)];
    for (int r = t.row_begin; r < t.row_end; ++r) {
      double& d = agent_done[size_t(job.rows[size_t(r)].agent)];
      d = std::max(d, run.sim.tile_done_ns[gt]);
    }
  }
  const int phase = spans.intern(job.phase);
  Json agents = Json::object();
  for (size_t a = 0; a < job.agents.size(); ++a) {
    const int rows = sc.agents[a].new_tokens;
    spans.record(sc_core::SC_ZERO_TIME, sc_core::sc_time(agent_done[a], sc_core::SC_NS),
                 spans.intern("agent." + job.agents[a]), spans.intern("attention"), phase,
                 spans.intern(job.agents[a]), rows, int64_t(rows) * job.head_dim * 4);
    agents[job.agents[a]] = {{"rows", rows}, {"latency_ns", agent_done[a]}};
  }

  // Busy time per component and activity, and per phase extent, from the spans.
  std::map<std::string, std::map<std::string, double>> busy;
  std::map<std::string, double> by_activity;
  std::map<std::string, std::pair<double, double>> phases;
  for (const Span& s : spans.spans()) {
    const double d = ns(s.end) - ns(s.start);
    const std::string& comp = spans.name(s.component);
    if (comp.rfind("agent.", 0) == 0) continue;
    busy[comp][spans.name(s.activity)] += d;
    by_activity[spans.name(s.activity)] += d;
    auto& ph = phases.try_emplace(spans.name(s.phase), ns(s.start), ns(s.end)).first->second;
    ph.first = std::min(ph.first, ns(s.start));
    ph.second = std::max(ph.second, ns(s.end));
  }
  Json phases_j = Json::object();
  for (const auto& [name, ext] : phases)
    phases_j[name] = {{"start_ns", ext.first}, {"end_ns", ext.second}, {"ns", ext.second - ext.first}};

  Json numerics = {{"checked", false}};
  if (opt.values) {
    const Eigen::MatrixXd ref = reference_attention(job.q, job.rows, run.plan.k_all, run.plan.v_all,
                                                    run.plan.kv_info, job.head_dim, 1.0 / std::sqrt(double(job.head_dim)));
    const NumericCheck c = compare_to_reference(run.sim.outputs[0], ref);
    numerics = {{"checked", true},
                {"reference", "float64, two-pass softmax over all keys"},
                {"max_abs_err", c.max_abs_err},
                {"max_rel_err", c.max_rel_err},
                {"ref_max_abs", c.ref_max_abs},
                {"tolerance_abs", opt.tolerance},
                {"pass", c.max_abs_err <= opt.tolerance}};
  }

  const int max_shard = job.shards.empty() ? 0 : std::max_element(job.shards.begin(), job.shards.end(),
      [](const KvShard& a, const KvShard& b) { return a.tokens < b.tokens; })->tokens;
  run.summary = Json{
      {"scenario", sc.name},
      {"seed", seed},
      {"policy", "A"},
      {"total_ns", run.sim.end_ns},
      {"rows", job.row_count()},
      {"q_tiles", job.tiles.size()},
      {"q_tile_rows", job.tiles.empty() ? 0 : job.tiles[0].rows()},
      {"phases", phases_j},
      {"agents", agents},
      {"busy_ns_by_activity", by_activity},
      {"busy_ns_by_component", busy},
      {"gemm_batching", gemm_batching(hw, sc, max_shard)},
      {"numerics", numerics},
      {"stats", run.sim.stats},
      {"config", {{"hw", to_json(hw)}, {"scenario", to_json(sc)}, {"hw_file", opt.hw_file},
                  {"scenario_file", opt.scenario_file}}},
  };
  // The NoC model by name and its traffic totals, at the top level for quick comparison.
  run.summary["noc"] = run.sim.stats["noc"];
  run.summary["noc"]["model"] = hw.noc.model;
  report::add_latency(run);
  return run;
}

namespace {

std::string fmt_ns(const sc_core::sc_time& t) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", t.to_seconds() * 1e9);
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
  const AttentionJob& job = run.plan.job;
  const uint64_t d = uint64_t(job.head_dim), rows = uint64_t(job.row_count()), kv = run.plan.kv_info.size();
  write_npy_f32(dir + "/q.npy", job.q.data(), rows, d);
  write_npy_f32(dir + "/k.npy", run.plan.k_all.data(), kv, d);
  write_npy_f32(dir + "/v.npy", run.plan.v_all.data(), kv, d);
  write_npy_f32(dir + "/o.npy", run.sim.outputs[0].data(), rows, d);
  std::vector<uint8_t> mask(rows * kv);
  for (uint64_t r = 0; r < rows; ++r)
    for (uint64_t c = 0; c < kv; ++c) mask[r * kv + c] = visible(job.rows[r], run.plan.kv_info[c]);
  write_npy_bool(dir + "/mask.npy", mask, rows, kv);
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
    if (opt.dump_tensors && opt.values) dump_tensors((tmp / "tensors").string(), run);
    if (fs::exists(target)) fs::remove_all(target);
    fs::rename(tmp, target);
  } catch (...) {
    fs::remove_all(tmp);
    throw;
  }
}

}  // namespace ahbm
