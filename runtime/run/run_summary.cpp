#include "runtime/run/run_summary.h"

#include <algorithm>
#include <map>

#include "hw/common/model/engines.h"
#include "runtime/policy/roofline.h"
#include "runtime/io/provenance.h"
#include "runtime/report/energy_json.h"
#include "runtime/report/stats_tree.h"

namespace ahbm {

namespace {

// GEMM engine use for the whole fan-out batch on one PE vs one run per agent (note §2.5/§3.6):
// the stacked Q_combined fills the engine's tile rows that per-agent runs leave padded.
Json gemm_batching(const HwConfig& hw, const Scenario& sc, int kv_tokens_per_pe) {
  const auto& g = hw.pe.gemm;
  const uint64_t d = uint64_t(sc.model.head_dim), n = uint64_t(kv_tokens_per_pe), qpk = uint64_t(sc.model.q_per_kv());
  const DType t = sc.model.dtype;
  auto per_pe = [&](uint64_t rows) { return gemm_cycles(g, rows, n, d, t) + gemm_cycles(g, rows, d, n, t); };
  auto tiles = [&](uint64_t rows) { return gemm_tiles(g, rows, n, d) + gemm_tiles(g, rows, d, n); };
  const uint64_t rows = uint64_t(sc.total_rows()) * qpk;
  uint64_t sep_cycles = 0, sep_tiles = 0;
  for (const auto& a : sc.agents)
    sep_cycles += per_pe(uint64_t(a.new_tokens) * qpk), sep_tiles += tiles(uint64_t(a.new_tokens) * qpk);
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

Json kv_json(const Scenario& sc, const KvReport& kv) {
  const auto bytes = [&](int64_t pages) { return uint64_t(pages) * kv.model_page_bytes; };
  const int64_t peak_pe = kv.peak_per_pe.empty() ? 0 : *std::max_element(kv.peak_per_pe.begin(), kv.peak_per_pe.end());
  return Json{
      {"page_tokens", sc.kv.page_tokens},
      {"prefix_placement", placement_name(sc.kv.prefix_placement)},
      {"private_placement", sc.kv.private_placement},
      {"page_slot_bytes", kv.slot_bytes},
      {"page_bytes_model", kv.model_page_bytes},
      {"pages_per_pe_capacity", kv.pages_per_pe},
      {"pages_allocated", kv.allocations},
      {"pages_freed", kv.frees},
      {"cow_copies", kv.cow_copies},
      {"pages_in_use_end", kv.in_use_end},
      {"peak_pages", kv.peak},
      {"peak_bytes", bytes(kv.peak)},
      {"peak_pages_per_pe", kv.peak_per_pe},
      {"peak_pages_on_one_pe", peak_pe},
      {"at_peak", {{"pages", kv.at_peak.in_use},
                   {"shared_pages", kv.at_peak.shared},
                   {"private_pages", kv.at_peak.priv},
                   {"shared_bytes", bytes(kv.at_peak.shared)},
                   {"private_bytes", bytes(kv.at_peak.priv)},
                   {"bytes_saved_by_sharing", bytes(kv.at_peak.saved)}}},
      {"no_sharing_baseline", {{"peak_pages", kv.no_sharing_peak},
                               {"peak_bytes", bytes(kv.no_sharing_peak)},
                               {"peak_pages_on_one_pe", kv.no_sharing_peak_pe_max},
                               {"fits", kv.no_sharing_peak_pe_max <= kv.pages_per_pe}}},
      {"bytes_saved_by_sharing", bytes(kv.no_sharing_peak) - bytes(std::min(kv.peak, kv.no_sharing_peak))},
      {"note", "bytes cover every layer and KV head of the model; pages and pools are per PE of one KV-head group "
               "(every group holds the same layout for the heads it serves)"},
  };
}

}  // namespace

namespace {

// The no-sharing baseline beside the shared run, over the phases both ran (a join strategy's
// phase is the shared run's only).
Json no_sharing_json(const NoSharingRun& ns, const std::map<std::string, NoSharingRun::Phase>& batched) {
  Json j = {{"what", "the same steps batched, every branch reading its own copy of the prefix (forks copy the "
                     "parent's pages)"}};
  if (!ns.unavailable.empty()) {
    j["unavailable"] = ns.unavailable;
    return j;
  }
  double total = 0, shared_total = 0;
  uint64_t bytes = 0, shared_bytes = 0;
  Json phases = Json::object();
  for (const auto& [name, p] : ns.phases) {
    const NoSharingRun::Phase& b = batched.at(name);
    phases[name] = {{"ns", p.ns}, {"hbm_bytes_read", p.hbm_bytes}, {"steps", p.steps},
                    {"shared_ns", b.ns}, {"shared_hbm_bytes_read", b.hbm_bytes},
                    {"speedup_of_sharing", b.ns > 0 ? p.ns / b.ns : 0.0}};
    total += p.ns;
    bytes += p.hbm_bytes;
    shared_total += b.ns;
    shared_bytes += b.hbm_bytes;
  }
  j.update({{"total_ns", total}, {"hbm_bytes_read", bytes}, {"shared_total_ns", shared_total},
            {"shared_hbm_bytes_read", shared_bytes}, {"speedup_of_sharing", shared_total > 0 ? total / shared_total : 0.0},
            {"hbm_bytes_ratio", shared_bytes > 0 ? double(bytes) / double(shared_bytes) : 0.0}, {"phases", phases}});
  if (ns.max_abs_err >= 0) j["max_abs_err"] = ns.max_abs_err;
  if (ns.max_abs_diff_fanout >= 0) j["fanout_max_abs_diff_vs_shared"] = ns.max_abs_diff_fanout;
  return j;
}

}  // namespace

Json build_summary(const Scenario& sc, const HwConfig& hw, const RunOptions& opt, uint64_t seed,
                   const std::vector<StepRecord>& steps, const KvReport& kv, const RunOutput& run) {
  const StepRecord* fan = nullptr;
  for (const auto& s : steps)
    if (s.id.phase == "fanout") fan = &s;

  // Phases: extent, rows, traffic, and each agent's completion within the phase.
  Json phases = Json::object();
  Json steps_j = Json::array();
  std::map<std::string, Json> agents;
  NumericCheck datapath;
  std::optional<NumericCheck> storage;
  bool checked = false, unbatched_identical = true;
  double unbatched_total = 0, unbatched_diff = 0;
  uint64_t unbatched_bytes = 0, batched_bytes = 0;
  std::map<std::string, NoSharingRun::Phase> batched_phases;  // step sums, to set beside the no-sharing baseline
  uint64_t macs_expected = 0, macs_simulated = 0, macs_skipped = 0;
  std::map<std::string, StepKindWork> step_kinds;  // the roofline per kind of step
  std::vector<double> step_joules;
  Json energy = report::run_energy_json(steps, run.sim.stats, hw, sc.model.dtype, run.sim.end_ns, &step_joules);
  size_t step_index = 0;
  for (const StepRecord& s : steps) {
    const StepTiming& t = s.timing;
    {
      const std::string& l = s.id.label;
      const bool prefill = l.size() >= 7 && l.compare(l.size() - 7, 7, "prefill") == 0;
      StepKindWork& w = step_kinds[prefill ? "prefill" : s.id.phase];
      ++w.steps;
      w.ns += t.ns;
      w.macs += double(t.macs_simulated);  // Q K^T and P V: 2 rows n d
      w.hbm_bytes += double(t.hbm_bytes);
    }
    Json& ph = phases[s.id.phase];
    if (ph.is_null())
      ph = {{"start_ns", t.start_ns}, {"steps", 0}, {"rows_per_kv_head", 0}, {"jobs", 0}, {"hbm_bytes_read", 0},
            {"agents", Json::object()}};
    const StepId& id = s.id;
    const StepShape& sh = s.shape;
    ph["end_ns"] = t.start_ns + t.ns;
    ph["ns"] = t.start_ns + t.ns - ph["start_ns"].get<double>();
    ph["steps"] = ph["steps"].get<int>() + 1;
    ph["rows_per_kv_head"] = ph["rows_per_kv_head"].get<int>() + sh.rows_per_kv_head;
    ph["jobs"] = ph["jobs"].get<int>() + sh.jobs;
    ph["hbm_bytes_read"] = ph["hbm_bytes_read"].get<uint64_t>() + t.hbm_bytes;
    ph["kv_pages_in_use"] = id.kv.in_use;
    if (s.unbatched) ph["unbatched_ns"] = ph.value("unbatched_ns", 0.0) + s.unbatched->ns;
    for (size_t a = 0; a < id.agents.size(); ++a) {
      Json& aj = ph["agents"][id.agents[a]];
      if (aj.is_null()) aj = {{"tokens", 0}, {"steps", 0}};
      aj["tokens"] = aj["tokens"].get<int>() + id.agent_tokens[a];
      aj["steps"] = aj["steps"].get<int>() + 1;
      aj["done_ns"] = t.start_ns + t.agent_done_ns[a];
      aj["latency_ns"] = t.start_ns + t.agent_done_ns[a] - ph["start_ns"].get<double>();
    }
    Json sj = {{"label", id.label}, {"phase", id.phase}, {"start_ns", t.start_ns}, {"ns", t.ns},
               {"rows_per_kv_head", sh.rows_per_kv_head}, {"agents", id.agents.size()}, {"jobs", sh.jobs},
               {"kv_tokens_per_kv_head", sh.kv_tokens_per_job.empty() ? 0 : sh.kv_tokens_per_job[0]},
               {"max_shard_tokens", sh.max_shard_tokens}, {"hbm_bytes_read", t.hbm_bytes},
               {"dma_busy_max_pe_ns", t.dma_busy_max_ns}, {"kv_pages_in_use", id.kv.in_use},
               {"energy_j", step_joules[step_index++]}};
    if (s.check) sj["max_abs_err"] = s.check->datapath.max_abs_err;
    if (s.check && s.check->storage) sj["max_abs_err_vs_unrounded"] = s.check->storage->max_abs_err;
    if (s.unbatched) sj["unbatched_ns"] = s.unbatched->ns;
    if (!s.layers.is_null()) sj["layers"] = s.layers;
    steps_j.push_back(sj);
    if (s.check) {
      checked = true;
      datapath = worst_of(datapath, s.check->datapath);
      if (s.check->storage) storage = worst_of(storage.value_or(NumericCheck{}), *s.check->storage);
    }
    NoSharingRun::Phase& bp = batched_phases[id.phase];
    bp.ns += t.ns;
    bp.hbm_bytes += t.hbm_bytes;
    ++bp.steps;
    batched_bytes += t.hbm_bytes;
    if (s.unbatched) {
      unbatched_total += s.unbatched->ns;
      unbatched_bytes += s.unbatched->hbm_bytes;
      unbatched_diff = std::max(unbatched_diff, s.unbatched->max_abs_diff);
      unbatched_identical = unbatched_identical && s.unbatched->identical;
    }
    macs_expected += sh.macs_expected;
    macs_simulated += t.macs_simulated;
    macs_skipped += t.macs_skipped;
  }

  // Per agent: the fan-out rows and latency (as before), plus decode progress.
  Json agents_j = Json::object();
  const int qpk = sc.model.q_per_kv();
  for (const auto& a : sc.agents) {
    Json aj = {{"rows", a.new_tokens * qpk}, {"new_tokens", a.new_tokens}};
    if (fan)
      for (size_t i = 0; i < fan->id.agents.size(); ++i)
        if (fan->id.agents[i] == a.name) aj["latency_ns"] = fan->timing.agent_done_ns[i];
    if (phases.contains("decode") && phases["decode"]["agents"].contains(a.name)) {
      aj["decoded_tokens"] = phases["decode"]["agents"][a.name]["tokens"];
      aj["decode_done_ns"] = phases["decode"]["agents"][a.name]["done_ns"];
    }
    agents_j[a.name] = aj;
  }

  // Busy time per component and activity from the hardware spans.
  const SpanRecorder& spans = *run.sim.spans;
  // Summed by interned id, in span order as ever (a long run has millions of spans: no name
  // lookups per span), then keyed by name (ids and names are one to one).
  std::vector<char> hardware;                    // per component id: 1 hardware, 0 annotation, -1 not looked at
  std::vector<std::map<int, double>> busy_of;    // per component id: by activity id
  std::map<int, double> activity_of;             // by activity id
  for (const Span& s : spans.spans()) {
    const size_t c = size_t(s.component);
    if (c >= hardware.size()) hardware.resize(c + 1, -1), busy_of.resize(c + 1);
    if (hardware[c] < 0) {
      const std::string& comp = spans.name(s.component);
      hardware[c] = !(comp.rfind("agent.", 0) == 0 || comp.rfind("runtime.", 0) == 0);
    }
    if (!hardware[c]) continue;
    const double d = to_ns(s.end) - to_ns(s.start);
    busy_of[c][s.activity] += d;
    activity_of[s.activity] += d;
  }
  std::map<std::string, std::map<std::string, double>> busy;
  std::map<std::string, double> by_activity;
  for (size_t c = 0; c < busy_of.size(); ++c)
    for (const auto& [a, d] : busy_of[c]) busy[spans.name(int(c))][spans.name(a)] = d;
  for (const auto& [a, d] : activity_of) by_activity[spans.name(a)] = d;

  Json numerics = {{"checked", checked}};
  if (checked) {
    numerics = {{"checked", true},
                {"reference", "float64, two-pass softmax over all keys, on the stored (storage-type) tensors"},
                {"max_abs_err", datapath.max_abs_err},
                {"max_rel_err", datapath.max_rel_err},
                {"ref_max_abs", datapath.ref_max_abs},
                {"tolerance_abs", opt.tolerance},
                {"dtype", dtype_name(sc.model.dtype)}};
    bool pass = datapath.max_abs_err <= opt.tolerance;
    if (storage) {
      const double tol = storage_tolerance(sc.model.dtype);
      numerics["storage"] = {{"reference", "float64 on Q, K, V before rounding to the storage type"},
                             {"max_abs_err", storage->max_abs_err},
                             {"max_rel_err", storage->max_rel_err},
                             {"tolerance_abs", tol},
                             {"pass", storage->max_abs_err <= tol}};
      pass = pass && storage->max_abs_err <= tol;
    }
    numerics["pass"] = pass;
  }

  const double total = run.sim.end_ns;
  Json baselines = Json::object();
  if (opt.compare_unbatched) {
    baselines["unbatched"] = {{"what", "every step re-run one agent at a time (each branch attends separately, agents in turn)"},
                              {"total_ns", unbatched_total},
                              {"batched_total_ns", total},
                              {"speedup", total > 0 ? unbatched_total / total : 0.0},
                              {"hbm_bytes_read", unbatched_bytes},
                              {"batched_hbm_bytes_read", batched_bytes}};
    if (checked)
      baselines["unbatched"].update({{"max_abs_diff_vs_batched", unbatched_diff}, {"identical_o", unbatched_identical}});
  }
  if (kv.no_sharing_timed) baselines["no_sharing"] = no_sharing_json(*kv.no_sharing_timed, batched_phases);

  const AttentionJob* fj = run.plan.jobs.empty() ? nullptr : &run.plan.jobs[0];
  const int rounds = (sc.model.num_kv_heads + hw.groups - 1) / hw.groups;
  return Json{
      {"scenario", sc.name},
      {"seed", seed},
      {"policy", fan ? fan->policy : Json()},
      {"total_ns", total},
      {"rows", fan ? fan->shape.rows_per_kv_head : 0},
      {"q_tiles", fj ? fj->tiles.size() : 0},
      {"q_tile_rows", fj && !fj->tiles.empty() ? fj->tiles[0].rows() : 0},
      {"model", {{"num_q_heads", sc.model.num_q_heads}, {"num_kv_heads", sc.model.num_kv_heads},
                 {"q_heads_per_kv_head", qpk}, {"head_dim", sc.model.head_dim}, {"layers", sc.model.layers},
                 {"kv_head_groups", hw.groups}, {"groups_used", std::min(hw.groups, sc.model.num_kv_heads)},
                 {"time_multiplexed_rounds", rounds},
                 {"attention_ns_all_layers", total * sc.model.layers},
                 {"note", "one layer is simulated; attention_ns_all_layers = layers x total_ns (attention only)"}}},
      {"precision", {{"dtype", dtype_name(sc.model.dtype)}, {"bytes_per_element", dtype_bytes(sc.model.dtype)},
                     {"accumulation", "fp32"}, {"softmax_state", "fp32"}, {"output", "fp32"}}},
      {"phases", phases},
      {"steps", steps_j},
      {"agents", agents_j},
      {"kv", kv_json(sc, kv)},
      {"arithmetic", {{"macs_expected", macs_expected}, {"macs_simulated", macs_simulated},
                      {"macs_skipped", macs_skipped},
                      {"unchanged", macs_expected == macs_simulated + macs_skipped},
                      {"note", "2 x rows x KV tokens x head_dim summed over every job = simulated + skipped (fully "
                               "masked KV tiles, pe.dma.masked_tiles); Q tiling must not change it"}}},
      {"baselines", baselines},
      {"energy", energy},
      {"power", report::power_json(run.power)},
      {"busy_ns_by_activity", by_activity},
      {"busy_ns_by_component", busy},
      {"gemm_batching", gemm_batching(hw, sc, fan ? fan->shape.max_shard_tokens : 0)},
      {"numerics", numerics},
      {"roofline", roofline_by_step_kind(hw, std::min(hw.groups, sc.model.num_kv_heads), step_kinds)},
      {"stats", report::stats_json(run.sim.stats)},
      {"config", {{"hw", to_json(hw)}, {"scenario", to_json(sc)}, {"hw_file", opt.hw_file},
                  {"scenario_file", opt.scenario_file}}},
      {"simulator", simulator_json(hw)},
  };
}

void add_model_latency(Json& summary, Json operators, const std::vector<StepRecord>& steps, int layers) {
  const StepRecord* first_token = nullptr;
  double decode_ns = 0;
  int decode_steps = 0;
  for (const StepRecord& s : steps) {
    if (s.id.phase == "decode") {
      if (decode_steps == 0) first_token = &s;
      decode_ns += s.timing.ns;
      ++decode_steps;
    }
    if (s.id.phase == "fanout" && decode_steps == 0) first_token = &s;
  }
  operators["ttft_ns"] = first_token ? first_token->timing.start_ns + first_token->timing.ns : 0.0;
  operators["ttft_step"] = first_token ? first_token->id.label : "";
  operators["tpot_ns"] = decode_steps ? decode_ns / decode_steps : 0.0;
  operators["decode_steps"] = decode_steps;
  Json& model = summary["model"];
  model["attention_ns_all_layers"] = operators["attention_ns"];
  model["note"] = "every layer on the step timeline (summary operators); attention_ns_all_layers = the attention of "
                  "every layer of every step (" + std::to_string(layers) + " layers)";
  summary["operators"] = std::move(operators);
}

}  // namespace ahbm
