#include "runtime/run/run_summary.h"

#include <algorithm>
#include <map>

#include "hw/common/model/engines.h"
#include "runtime/policy/roofline.h"
#include "runtime/io/provenance.h"
#include "runtime/report/energy_json.h"
#include "hw/chip/chip_stats.h"
#include "runtime/report/stats_tree.h"
#include "runtime/run/run_types.h"

namespace ahbm {

namespace {

// GEMM engine use for the whole fan-out batch on one PE vs one run per agent (note §2.5/§3.6):
// the stacked Q_combined fills the engine's tile rows that per-agent runs leave padded.
GemmBatchingSummary gemm_batching(const HwConfig& hw, const Scenario& sc, int kv_tokens_per_pe) {
  const auto& g = hw.pe.gemm;
  const uint64_t d = uint64_t(sc.model.head_dim), n = uint64_t(kv_tokens_per_pe), qpk = uint64_t(sc.model.q_per_kv());
  const DType t = sc.model.dtype;
  auto per_pe = [&](uint64_t rows) { return gemm_cycles(g, rows, n, d, t) + gemm_cycles(g, rows, d, n, t); };
  auto tiles = [&](uint64_t rows) { return gemm_tiles(g, rows, n, d) + gemm_tiles(g, rows, d, n); };
  GemmBatchingSummary b;
  b.tile_m = g.tile_m, b.tile_n = g.tile_n, b.tile_k = g.tile_k;
  b.kv_tokens_per_pe = kv_tokens_per_pe;
  b.rows = uint64_t(sc.total_rows()) * qpk;
  b.runs = sc.agents.size();
  for (const auto& a : sc.agents) {
    b.per_agent_runs.cycles_per_pe += per_pe(uint64_t(a.new_tokens) * qpk);
    b.per_agent_runs.tiles += tiles(uint64_t(a.new_tokens) * qpk);
  }
  const double macs = 2.0 * double(b.rows) * double(n) * double(d);
  const double tile_macs = double(g.tile_m) * g.tile_n * g.tile_k;
  b.batched.cycles_per_pe = per_pe(b.rows);
  b.batched.tiles = tiles(b.rows);
  for (GemmUseSummary* u : {&b.batched, &b.per_agent_runs})
    u->utilization = u->tiles ? macs / (double(u->tiles) * tile_macs) : 0.0;
  b.speedup = b.batched.cycles_per_pe ? double(b.per_agent_runs.cycles_per_pe) / double(b.batched.cycles_per_pe) : 0.0;
  return b;
}

KvSummary kv_summary(const Scenario& sc, const KvReport& kv) {
  const auto bytes = [&](int64_t pages) { return uint64_t(pages) * kv.model_page_bytes; };
  KvSummary k;
  k.page_tokens = sc.kv.page_tokens;
  k.prefix_placement = placement_name(sc.kv.prefix_placement);
  k.private_placement = sc.kv.private_placement;
  k.page_slot_bytes = kv.slot_bytes, k.page_bytes_model = kv.model_page_bytes;
  k.pages_per_pe_capacity = kv.pages_per_pe, k.pages_in_use_end = kv.in_use_end, k.cow_copies = kv.cow_copies;
  k.pages_allocated = kv.allocations, k.pages_freed = kv.frees;
  k.peak_pages = kv.peak, k.peak_bytes = bytes(kv.peak);
  k.peak_pages_per_pe = kv.peak_per_pe;
  k.peak_pages_on_one_pe = kv.peak_per_pe.empty() ? 0 : *std::max_element(kv.peak_per_pe.begin(), kv.peak_per_pe.end());
  k.at_peak = {kv.at_peak.in_use,         kv.at_peak.shared,         kv.at_peak.priv,
               bytes(kv.at_peak.shared), bytes(kv.at_peak.priv), bytes(kv.at_peak.saved)};
  k.no_sharing_baseline = {kv.no_sharing_peak, kv.no_sharing_peak_pe_max, bytes(kv.no_sharing_peak),
                           kv.no_sharing_peak_pe_max <= kv.pages_per_pe};
  k.bytes_saved_by_sharing = bytes(kv.no_sharing_peak) - bytes(std::min(kv.peak, kv.no_sharing_peak));
  return k;
}

// The no-sharing baseline beside the shared run, over the phases both ran (a join strategy's
// phase is the shared run's only).
NoSharingSummary no_sharing_summary(const NoSharingRun& ns, const std::map<std::string, NoSharingRun::Phase>& batched) {
  NoSharingSummary out;
  out.unavailable = ns.unavailable;
  if (!ns.unavailable.empty()) return out;
  for (const auto& [name, p] : ns.phases) {
    const NoSharingRun::Phase& b = batched.at(name);
    out.phases[name] = {p.ns, b.ns, b.ns > 0 ? p.ns / b.ns : 0.0, p.hbm_bytes, b.hbm_bytes, p.steps};
    out.total_ns += p.ns;
    out.hbm_bytes_read += p.hbm_bytes;
    out.shared_total_ns += b.ns;
    out.shared_hbm_bytes_read += b.hbm_bytes;
  }
  out.speedup_of_sharing = out.shared_total_ns > 0 ? out.total_ns / out.shared_total_ns : 0.0;
  out.hbm_bytes_ratio =
      out.shared_hbm_bytes_read > 0 ? double(out.hbm_bytes_read) / double(out.shared_hbm_bytes_read) : 0.0;
  if (ns.max_abs_err >= 0) out.max_abs_err = ns.max_abs_err;
  if (ns.max_abs_diff_fanout >= 0) out.fanout_max_abs_diff_vs_shared = ns.max_abs_diff_fanout;
  return out;
}

// The baselines asked for: unbatched (every step re-run agent by agent) and no sharing.
BaselinesSummary baselines(const RunOptions& opt, const std::vector<StepRecord>& steps, const KvReport& kv,
                           double total_ns) {
  BaselinesSummary out;
  std::map<std::string, NoSharingRun::Phase> batched_phases;  // step sums, to set beside the no-sharing baseline
  UnbatchedSummary u;
  u.batched_total_ns = total_ns;
  bool checked = false;
  double diff = 0;
  for (const StepRecord& s : steps) {
    NoSharingRun::Phase& bp = batched_phases[s.id.phase];
    bp.ns += s.timing.ns;
    bp.hbm_bytes += s.timing.hbm_bytes;
    ++bp.steps;
    u.batched_hbm_bytes_read += s.timing.hbm_bytes;
    checked = checked || s.check;
    if (s.unbatched) {
      u.total_ns += s.unbatched->ns;
      u.hbm_bytes_read += s.unbatched->hbm_bytes;
      diff = std::max(diff, s.unbatched->max_abs_diff);
      u.identical_o = u.identical_o && s.unbatched->identical;
    }
  }
  u.speedup = total_ns > 0 ? u.total_ns / total_ns : 0.0;
  if (checked) u.max_abs_diff_vs_batched = diff;
  if (opt.compare_unbatched) out.unbatched = u;
  if (kv.no_sharing_timed) out.no_sharing = no_sharing_summary(*kv.no_sharing_timed, batched_phases);
  return out;
}

// Per phase: the extent of its steps, their rows, jobs and traffic, and each agent's tokens,
// steps and completion within it.
std::map<std::string, PhaseSummary> phase_summaries(const std::vector<StepRecord>& steps) {
  std::map<std::string, PhaseSummary> phases;
  for (const StepRecord& s : steps) {
    const StepTiming& t = s.timing;
    const auto [it, first] = phases.try_emplace(s.id.phase);
    PhaseSummary& ph = it->second;
    if (first) ph.start_ns = t.start_ns;
    ph.end_ns = t.start_ns + t.ns;
    ph.ns = t.start_ns + t.ns - ph.start_ns;
    ++ph.steps;
    ph.rows_per_kv_head += s.shape.rows_per_kv_head;
    ph.jobs += s.shape.jobs;
    ph.hbm_bytes_read += t.hbm_bytes;
    ph.kv_pages_in_use = s.id.kv.in_use;
    if (s.unbatched) ph.unbatched_ns = ph.unbatched_ns.value_or(0.0) + s.unbatched->ns;
    for (size_t a = 0; a < s.id.agents.size(); ++a) {
      PhaseAgentSummary& aj = ph.agents[s.id.agents[a]];
      aj.tokens += s.id.agent_tokens[a];
      ++aj.steps;
      aj.done_ns = t.start_ns + t.agent_done_ns[a];
      aj.latency_ns = t.start_ns + t.agent_done_ns[a] - ph.start_ns;
    }
  }
  return phases;
}

// Each step; `step_joules` its energy (report::run_energy).
std::vector<StepSummary> step_summaries(const std::vector<StepRecord>& steps, const std::vector<double>& step_joules) {
  std::vector<StepSummary> out;
  for (size_t i = 0; i < steps.size(); ++i) {
    const StepRecord& s = steps[i];
    const StepId& id = s.id;
    const StepShape& sh = s.shape;
    const StepTiming& t = s.timing;
    StepSummary& j = out.emplace_back();
    j.label = id.label;
    j.phase = id.phase;
    j.start_ns = t.start_ns;
    j.ns = t.ns;
    j.rows_per_kv_head = sh.rows_per_kv_head;
    j.agents = id.agents.size();
    j.jobs = sh.jobs;
    j.kv_tokens_per_kv_head = sh.kv_tokens_per_job.empty() ? 0 : sh.kv_tokens_per_job[0];
    j.max_shard_tokens = sh.max_shard_tokens;
    j.hbm_bytes_read = t.hbm_bytes;
    j.dma_busy_max_pe_ns = t.dma_busy_max_ns;
    j.kv_pages_in_use = id.kv.in_use;
    j.energy_j = step_joules[i];
    if (s.check) j.max_abs_err = s.check->datapath.max_abs_err;
    if (s.check && s.check->storage) j.max_abs_err_vs_unrounded = s.check->storage->max_abs_err;
    if (s.unbatched) j.unbatched_ns = s.unbatched->ns;
    j.layers = s.layers;
  }
  return out;
}

// Per agent: the fan-out rows and latency, plus decode progress.
std::map<std::string, AgentSummary> agent_summaries(const Scenario& sc, const StepRecord* fan,
                                                    const std::map<std::string, PhaseSummary>& phases) {
  std::map<std::string, AgentSummary> agents;
  const auto decode = phases.find("decode");
  for (const auto& a : sc.agents) {
    AgentSummary aj;
    aj.rows = a.new_tokens * sc.model.q_per_kv();
    aj.new_tokens = a.new_tokens;
    if (fan)
      for (size_t i = 0; i < fan->id.agents.size(); ++i)
        if (fan->id.agents[i] == a.name) aj.latency_ns = fan->timing.agent_done_ns[i];
    if (decode != phases.end()) {
      const auto d = decode->second.agents.find(a.name);
      if (d != decode->second.agents.end()) {
        aj.decoded_tokens = d->second.tokens;
        aj.decode_done_ns = d->second.done_ns;
      }
    }
    agents[a.name] = aj;
  }
  return agents;
}

// Busy time per component and activity from the hardware spans.
void busy_times(const SpanRecorder& spans, RunSummary& s) {
  // Summed by interned id, in span order as ever (a long run has millions of spans: no name
  // lookups per span), then keyed by name (ids and names are one to one).
  std::vector<char> hardware;                    // per component id: 1 hardware, 0 annotation, -1 not looked at
  std::vector<std::map<int, double>> busy_of;    // per component id: by activity id
  std::map<int, double> activity_of;             // by activity id
  for (const Span& sp : spans.spans()) {
    const size_t c = size_t(sp.component);
    if (c >= hardware.size()) hardware.resize(c + 1, -1), busy_of.resize(c + 1);
    if (hardware[c] < 0) {
      const std::string& comp = spans.name(sp.component);
      hardware[c] = !(comp.rfind("agent.", 0) == 0 || comp.rfind("runtime.", 0) == 0);
    }
    if (!hardware[c]) continue;
    const double d = to_ns(sp.end) - to_ns(sp.start);
    busy_of[c][sp.activity] += d;
    activity_of[sp.activity] += d;
  }
  for (size_t c = 0; c < busy_of.size(); ++c)
    for (const auto& [a, d] : busy_of[c]) s.busy_ns_by_component[spans.name(int(c))][spans.name(a)] = d;
  for (const auto& [a, d] : activity_of) s.busy_ns_by_activity[spans.name(a)] = d;
}

WorkBalanceSummary work_balance(const StatsNode& chip) {
  WorkBalanceSummary b;
  std::map<int, double> by_group;
  double sum = 0;
  for_each_pe(chip, [&](int group, const StatsNode& pe) {
    const double macs = double(pe.get(PeStats::macs));
    ++b.pes;
    b.idle_pes += macs == 0;
    b.pe_macs_max = std::max(b.pe_macs_max, macs);
    by_group[group] += macs;
    sum += macs;
  });
  b.groups = int(by_group.size());
  if (b.pes == 0 || sum == 0) return b;
  b.pe_macs_mean = sum / b.pes;
  b.pe_imbalance = b.pe_macs_max / b.pe_macs_mean - 1;
  double group_max = 0;
  for (const auto& [g, m] : by_group) group_max = std::max(group_max, m);
  b.group_imbalance = group_max / (sum / b.groups) - 1;
  return b;
}

// The outputs against the float64 reference over every step checked (with values).
NumericsSummary numerics(const Scenario& sc, const RunOptions& opt, const std::vector<StepRecord>& steps) {
  NumericsSummary n;
  NumericCheck datapath;
  std::optional<NumericCheck> storage;
  for (const StepRecord& s : steps) {
    if (!s.check) continue;
    n.checked = true;
    datapath = worst_of(datapath, s.check->datapath);
    if (s.check->storage) storage = worst_of(storage.value_or(NumericCheck{}), *s.check->storage);
  }
  if (!n.checked) return n;
  n.max_abs_err = datapath.max_abs_err;
  n.max_rel_err = datapath.max_rel_err;
  n.ref_max_abs = datapath.ref_max_abs;
  n.tolerance_abs = opt.tolerance;
  n.dtype = dtype_name(sc.model.dtype);
  n.pass = datapath.max_abs_err <= opt.tolerance;
  if (storage) {
    const double tol = storage_tolerance(sc.model.dtype);
    n.storage = StorageCheckSummary{storage->max_abs_err, storage->max_rel_err, tol, storage->max_abs_err <= tol};
    n.pass = n.pass && n.storage->pass;
  }
  return n;
}

// The work of each kind of step (prefill, fanout, decode, join), for the roofline.
std::map<std::string, StepKindWork> step_kinds(const std::vector<StepRecord>& steps) {
  std::map<std::string, StepKindWork> kinds;
  for (const StepRecord& s : steps) {
    const std::string& l = s.id.label;
    const bool prefill = l.size() >= 7 && l.compare(l.size() - 7, 7, "prefill") == 0;
    StepKindWork& w = kinds[prefill ? "prefill" : s.id.phase];
    ++w.steps;
    w.ns += s.timing.ns;
    w.macs += s.work_macs;  // Q K^T and P V (2 rows n d), a whole model's every layer and operator
    w.hbm_bytes += s.work_hbm_bytes;
  }
  return kinds;
}

ArithmeticSummary arithmetic(const std::vector<StepRecord>& steps) {
  ArithmeticSummary a;
  for (const StepRecord& s : steps) {
    a.macs_expected += s.shape.macs_expected;
    a.macs_simulated += s.timing.macs_simulated;
    a.macs_skipped += s.timing.macs_skipped;
  }
  a.unchanged = a.macs_expected == a.macs_simulated + a.macs_skipped;
  return a;
}

RunModelSummary model_summary(const Scenario& sc, const HwConfig& hw, double total_ns) {
  RunModelSummary m;
  m.num_q_heads = sc.model.num_q_heads;
  m.num_kv_heads = sc.model.num_kv_heads;
  m.q_heads_per_kv_head = sc.model.q_per_kv();
  m.head_dim = sc.model.head_dim;
  m.layers = sc.model.layers;
  m.kv_head_groups = hw.groups;
  m.groups_used = std::min(hw.groups, sc.model.num_kv_heads);
  m.time_multiplexed_rounds = (sc.model.num_kv_heads + hw.groups - 1) / hw.groups;
  m.attention_ns_all_layers = total_ns * sc.model.layers;
  m.note = "one layer is simulated; attention_ns_all_layers = layers x total_ns (attention only)";
  return m;
}

}  // namespace

RunSummary build_summary(const Scenario& sc, const HwConfig& hw, const RunOptions& opt, uint64_t seed,
                         const std::vector<StepRecord>& steps, const KvReport& kv, const RunOutput& run) {
  const StepRecord* fan = nullptr;
  for (const auto& s : steps)
    if (s.id.phase == "fanout") fan = &s;
  const AttentionJob* fj = run.plan.jobs.empty() ? nullptr : &run.plan.jobs[0];
  RunSummary s;
  s.scenario = sc.name;
  s.seed = seed;
  s.policy = fan ? fan->policy : Json();
  s.total_ns = run.sim.end_ns;
  s.rows = fan ? fan->shape.rows_per_kv_head : 0;
  s.q_tiles = fj ? fj->tiles.size() : 0;
  s.q_tile_rows = fj && !fj->tiles.empty() ? fj->tiles[0].rows() : 0;
  s.model = model_summary(sc, hw, s.total_ns);
  s.precision = {dtype_name(sc.model.dtype), dtype_bytes(sc.model.dtype)};
  std::vector<double> step_joules;
  s.energy = report::run_energy(steps, run.sim.stats, hw, sc.model.dtype, s.total_ns, &step_joules);
  s.phases = phase_summaries(steps);
  s.steps = step_summaries(steps, step_joules);
  s.agents = agent_summaries(sc, fan, s.phases);
  s.kv = kv_summary(sc, kv);
  s.arithmetic = arithmetic(steps);
  s.baselines = baselines(opt, steps, kv, s.total_ns);
  s.power = report::power_summary(run.power);
  busy_times(*run.sim.spans, s);
  s.gemm_batching = gemm_batching(hw, sc, fan ? fan->shape.max_shard_tokens : 0);
  s.numerics = numerics(sc, opt, steps);
  // A whole model's operators run on every group; attention alone on one per KV head.
  s.roofline = roofline_by_step_kind(hw, sc.model.whole ? hw.groups : std::min(hw.groups, sc.model.num_kv_heads),
                                     step_kinds(steps), sc.model.whole != nullptr);
  s.balance = work_balance(run.sim.stats);
  s.stats = report::stats_json(run.sim.stats);
  s.config = {to_json(hw), to_json(sc), opt.hw_file, opt.scenario_file};
  s.simulator = simulator_json(hw);
  // The NoC model by name and its traffic totals, at the top level for quick comparison.
  s.noc = {hw.noc.model, report::stats_json(run.sim.stats.at(ChipStats::noc))};
  s.latency = report::latency_summary(*run.sim.spans);
  return s;
}

void add_model_latency(RunSummary& summary, Json operators, const std::vector<StepRecord>& steps, int layers) {
  const StepRecord* first_token = nullptr;
  double decode_ns = 0;
  ModelOperatorsSummary ops;
  for (const StepRecord& s : steps) {
    if (s.id.phase == "decode") {
      if (ops.decode_steps == 0) first_token = &s;
      decode_ns += s.timing.ns;
      ++ops.decode_steps;
    }
    if (s.id.phase == "fanout" && ops.decode_steps == 0) first_token = &s;
  }
  ops.ttft_ns = first_token ? first_token->timing.start_ns + first_token->timing.ns : 0.0;
  ops.ttft_step = first_token ? first_token->id.label : "";
  ops.tpot_ns = ops.decode_steps ? decode_ns / ops.decode_steps : 0.0;
  summary.model.attention_ns_all_layers = operators["attention_ns"].get<double>();
  summary.model.note = "every layer on the step timeline (summary operators); attention_ns_all_layers = the attention "
                       "of every layer of every step (" + std::to_string(layers) + " layers)";
  ops.totals = std::move(operators);
  summary.operators = std::move(ops);
}

namespace {

Json to_json(const KvSummary& k) {
  const KvAtPeakSummary& p = k.at_peak;
  const KvNoSharingSummary& n = k.no_sharing_baseline;
  return Json{
      {"page_tokens", k.page_tokens}, {"prefix_placement", k.prefix_placement},
      {"private_placement", k.private_placement}, {"page_slot_bytes", k.page_slot_bytes},
      {"page_bytes_model", k.page_bytes_model}, {"pages_per_pe_capacity", k.pages_per_pe_capacity},
      {"pages_allocated", k.pages_allocated}, {"pages_freed", k.pages_freed}, {"cow_copies", k.cow_copies},
      {"pages_in_use_end", k.pages_in_use_end}, {"peak_pages", k.peak_pages}, {"peak_bytes", k.peak_bytes},
      {"peak_pages_per_pe", k.peak_pages_per_pe}, {"peak_pages_on_one_pe", k.peak_pages_on_one_pe},
      {"at_peak", {{"pages", p.pages}, {"shared_pages", p.shared_pages}, {"private_pages", p.private_pages},
                   {"shared_bytes", p.shared_bytes}, {"private_bytes", p.private_bytes},
                   {"bytes_saved_by_sharing", p.bytes_saved_by_sharing}}},
      {"no_sharing_baseline", {{"peak_pages", n.peak_pages}, {"peak_bytes", n.peak_bytes},
                               {"peak_pages_on_one_pe", n.peak_pages_on_one_pe}, {"fits", n.fits}}},
      {"bytes_saved_by_sharing", k.bytes_saved_by_sharing},
      {"note", "bytes cover every layer and KV head of the model; pages and pools are per PE of one KV-head group "
               "(every group holds the same layout for the heads it serves)"},
  };
}

Json to_json(const NoSharingSummary& ns) {
  Json n = {{"what", "the same steps batched, every branch reading its own copy of the prefix (forks copy the "
                     "parent's pages)"}};
  if (!ns.unavailable.empty()) {
    n["unavailable"] = ns.unavailable;
    return n;
  }
  Json phases = Json::object();
  for (const auto& [name, p] : ns.phases)
    phases[name] = {{"ns", p.ns}, {"hbm_bytes_read", p.hbm_bytes_read}, {"steps", p.steps},
                    {"shared_ns", p.shared_ns}, {"shared_hbm_bytes_read", p.shared_hbm_bytes_read},
                    {"speedup_of_sharing", p.speedup_of_sharing}};
  n.update({{"total_ns", ns.total_ns}, {"hbm_bytes_read", ns.hbm_bytes_read}, {"shared_total_ns", ns.shared_total_ns},
            {"shared_hbm_bytes_read", ns.shared_hbm_bytes_read}, {"speedup_of_sharing", ns.speedup_of_sharing},
            {"hbm_bytes_ratio", ns.hbm_bytes_ratio}, {"phases", phases}});
  if (ns.max_abs_err) n["max_abs_err"] = *ns.max_abs_err;
  if (ns.fanout_max_abs_diff_vs_shared) n["fanout_max_abs_diff_vs_shared"] = *ns.fanout_max_abs_diff_vs_shared;
  return n;
}

Json to_json(const BaselinesSummary& b) {
  Json j = Json::object();
  if (const auto& u = b.unbatched) {
    j["unbatched"] = {{"what", "every step re-run one agent at a time (each branch attends separately, agents in turn)"},
                      {"total_ns", u->total_ns}, {"batched_total_ns", u->batched_total_ns}, {"speedup", u->speedup},
                      {"hbm_bytes_read", u->hbm_bytes_read}, {"batched_hbm_bytes_read", u->batched_hbm_bytes_read}};
    if (u->max_abs_diff_vs_batched)
      j["unbatched"].update({{"max_abs_diff_vs_batched", *u->max_abs_diff_vs_batched}, {"identical_o", u->identical_o}});
  }
  if (b.no_sharing) j["no_sharing"] = to_json(*b.no_sharing);
  return j;
}

Json to_json(const GemmBatchingSummary& b) {
  const auto use = [](const char* count, uint64_t n, const GemmUseSummary& u) {
    return Json{{count, n}, {"cycles_per_pe", u.cycles_per_pe}, {"tiles", u.tiles}, {"utilization", u.utilization}};
  };
  return Json{{"tile_shape", {b.tile_m, b.tile_n, b.tile_k}},
              {"kv_tokens_per_pe", b.kv_tokens_per_pe}, {"batched", use("rows", b.rows, b.batched)},
              {"per_agent_runs", use("runs", b.runs, b.per_agent_runs)}, {"speedup", b.speedup}};
}

Json to_json(const WorkBalanceSummary& b) {
  return Json{{"what", "each PE's attention MACs over the run, in the simulated groups: max / mean - 1"},
              {"pes", b.pes},
              {"groups", b.groups},
              {"idle_pes", b.idle_pes},
              {"pe_macs_mean", b.pe_macs_mean},
              {"pe_macs_max", b.pe_macs_max},
              {"pe_imbalance", b.pe_imbalance},
              {"group_imbalance", b.group_imbalance}};
}

Json to_json(const NumericsSummary& n) {
  if (!n.checked) return Json{{"checked", false}};
  Json j = {{"checked", true},
            {"reference", "float64, two-pass softmax over all keys, on the stored (storage-type) tensors"},
            {"max_abs_err", n.max_abs_err}, {"max_rel_err", n.max_rel_err}, {"ref_max_abs", n.ref_max_abs},
            {"tolerance_abs", n.tolerance_abs}, {"dtype", n.dtype}, {"pass", n.pass}};
  if (n.storage)
    j["storage"] = {{"reference", "float64 on Q, K, V before rounding to the storage type"},
                    {"max_abs_err", n.storage->max_abs_err}, {"max_rel_err", n.storage->max_rel_err},
                    {"tolerance_abs", n.storage->tolerance_abs}, {"pass", n.storage->pass}};
  return j;
}

Json to_json(const std::map<std::string, PhaseSummary>& phases) {
  Json j = Json::object();
  for (const auto& [name, p] : phases) {
    Json agents = Json::object();
    for (const auto& [a, s] : p.agents)
      agents[a] = {{"tokens", s.tokens}, {"steps", s.steps}, {"done_ns", s.done_ns}, {"latency_ns", s.latency_ns}};
    j[name] = {{"start_ns", p.start_ns}, {"end_ns", p.end_ns}, {"ns", p.ns}, {"steps", p.steps},
               {"rows_per_kv_head", p.rows_per_kv_head}, {"jobs", p.jobs}, {"hbm_bytes_read", p.hbm_bytes_read},
               {"kv_pages_in_use", p.kv_pages_in_use}, {"agents", agents}};
    if (p.unbatched_ns) j[name]["unbatched_ns"] = *p.unbatched_ns;
  }
  return j;
}

Json to_json(const StepSummary& s) {
  Json j = {{"label", s.label}, {"phase", s.phase}, {"start_ns", s.start_ns}, {"ns", s.ns},
            {"rows_per_kv_head", s.rows_per_kv_head}, {"agents", s.agents}, {"jobs", s.jobs},
            {"kv_tokens_per_kv_head", s.kv_tokens_per_kv_head}, {"max_shard_tokens", s.max_shard_tokens},
            {"hbm_bytes_read", s.hbm_bytes_read}, {"dma_busy_max_pe_ns", s.dma_busy_max_pe_ns},
            {"kv_pages_in_use", s.kv_pages_in_use}, {"energy_j", s.energy_j}};
  if (s.max_abs_err) j["max_abs_err"] = *s.max_abs_err;
  if (s.max_abs_err_vs_unrounded) j["max_abs_err_vs_unrounded"] = *s.max_abs_err_vs_unrounded;
  if (s.unbatched_ns) j["unbatched_ns"] = *s.unbatched_ns;
  if (!s.layers.is_null()) j["layers"] = s.layers;
  return j;
}

Json to_json(const AgentSummary& a) {
  Json j = {{"rows", a.rows}, {"new_tokens", a.new_tokens}};
  if (a.latency_ns) j["latency_ns"] = *a.latency_ns;
  if (a.decoded_tokens) j["decoded_tokens"] = *a.decoded_tokens;
  if (a.decode_done_ns) j["decode_done_ns"] = *a.decode_done_ns;
  return j;
}

Json to_json(const RunModelSummary& m) {
  return Json{{"num_q_heads", m.num_q_heads}, {"num_kv_heads", m.num_kv_heads},
              {"q_heads_per_kv_head", m.q_heads_per_kv_head}, {"head_dim", m.head_dim}, {"layers", m.layers},
              {"kv_head_groups", m.kv_head_groups}, {"groups_used", m.groups_used},
              {"time_multiplexed_rounds", m.time_multiplexed_rounds},
              {"attention_ns_all_layers", m.attention_ns_all_layers}, {"note", m.note}};
}

Json to_json(const ModelOperatorsSummary& o) {
  Json j = o.totals;
  j["ttft_ns"] = o.ttft_ns;
  j["ttft_step"] = o.ttft_step;
  j["tpot_ns"] = o.tpot_ns;
  j["decode_steps"] = o.decode_steps;
  return j;
}

}  // namespace

Json to_json(const RunSummary& s) {
  Json steps = Json::array(), agents = Json::object();
  for (const StepSummary& st : s.steps) steps.push_back(to_json(st));
  for (const auto& [name, a] : s.agents) agents[name] = to_json(a);
  const ArithmeticSummary& a = s.arithmetic;
  Json j = {
      {"scenario", s.scenario}, {"seed", s.seed}, {"policy", s.policy}, {"total_ns", s.total_ns}, {"rows", s.rows},
      {"q_tiles", s.q_tiles}, {"q_tile_rows", s.q_tile_rows}, {"model", to_json(s.model)},
      {"precision", {{"dtype", s.precision.dtype}, {"bytes_per_element", s.precision.bytes_per_element},
                     {"accumulation", "fp32"}, {"softmax_state", "fp32"}, {"output", "fp32"}}},
      {"phases", to_json(s.phases)}, {"steps", steps}, {"agents", agents}, {"kv", to_json(s.kv)},
      {"arithmetic", {{"macs_expected", a.macs_expected}, {"macs_simulated", a.macs_simulated},
                      {"macs_skipped", a.macs_skipped}, {"unchanged", a.unchanged},
                      {"note", "2 x rows x KV tokens x head_dim summed over every job = simulated + skipped (fully "
                               "masked KV tiles, pe.dma.masked_tiles); Q tiling must not change it"}}},
      {"baselines", to_json(s.baselines)}, {"energy", report::to_json(s.energy)}, {"power", report::to_json(s.power)},
      {"busy_ns_by_activity", s.busy_ns_by_activity}, {"busy_ns_by_component", s.busy_ns_by_component},
      {"gemm_batching", to_json(s.gemm_batching)}, {"numerics", to_json(s.numerics)}, {"roofline", s.roofline}, {"balance", to_json(s.balance)},
      {"stats", s.stats},
      {"config", {{"hw", s.config.hw}, {"scenario", s.config.scenario}, {"hw_file", s.config.hw_file},
                  {"scenario_file", s.config.scenario_file}}},
      {"simulator", s.simulator}, {"latency", report::to_json(s.latency)},
  };
  j["noc"] = s.noc.stats;
  j["noc"]["model"] = s.noc.model;
  if (!s.memory_map.is_null()) j["memory_map"] = s.memory_map;
  if (!s.system_energy.is_null()) j["energy"]["system"] = s.system_energy;
  if (s.operators) j["operators"] = to_json(*s.operators);
  if (!s.join.is_null()) j["join"] = s.join;
  return j;
}

}  // namespace ahbm
