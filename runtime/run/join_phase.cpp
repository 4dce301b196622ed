#include "runtime/run/join_phase.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "hw/common/base/error.h"
#include "runtime/report/energy_json.h"

namespace ahbm::join {

JoinHost no_hardware() {
  JoinHost h;
  h.run = [](const Step&, int) { return StepRecord{}; };
  h.wait = [](const Step&, double) { return StepRecord{}; };
  h.probe = [](const Step&, int) { return 0.0; };
  h.tile_rows = [](int64_t) { return 0; };
  return h;
}

JoinHost hardware_host(StepRunner& steps, const KvPageManager& kv, Timeline& tl, RecordStep record) {
  JoinHost h;
  h.run = [&steps, &kv, &tl, record](const Step& step, int q_tile_rows) {
    StepRun sr = steps.run(kv, step, tl, q_tile_rows);
    StepRecord rec = sr.record;
    record(step, std::move(sr));
    return rec;
  };
  h.wait = [&kv, &tl, record](const Step& step, double ns) {
    StepRun sr;
    StepRecord& rec = sr.record;
    rec.id = identify(step, kv);
    rec.timing.ns = ns;
    const sc_core::sc_time start = tl.advance(ns);
    rec.timing.start_ns = to_ns(start);
    SpanRecorder& spans = tl.spans();
    spans.record(start, start + sc_core::sc_time(ns, sc_core::SC_NS), spans.intern("host.join"),
                 spans.intern(step.part), spans.intern(rec.id.phase), spans.intern(kMainAgentName), 0, 0);
    StepRecord out = rec;
    record(step, std::move(sr));
    return out;
  };
  h.probe = [&steps, &kv](const Step& step, int q_tile_rows) { return steps.probe(kv, step, q_tile_rows); };
  h.tile_rows = [&steps](int64_t rows) { return steps.tile_rows(rows); };
  return h;
}

ModelDims model_dims(const Scenario& sc, const JoinSpec& spec) {
  ModelDims m;
  m.num_q_heads = sc.model.num_q_heads;
  m.num_kv_heads = sc.model.num_kv_heads;
  m.head_dim = sc.model.head_dim;
  m.layers = sc.model.layers;
  m.bytes_per_element = int(dtype_bytes(sc.model.dtype));
  m.context_window = spec.context_window;
  return m;
}

namespace {

// Appends each agent's tokens (all of them: the KV is complete) and simulates the step with the
// last min(tokens, S) tokens' query rows per agent, cut into the Q tiles the full prefill gets
// (tile = that job's tile rows). Tiles of one job overlap in the pipeline, so one tile alone
// costs more than one more tile in a stream: S is raised to cover at least three tiles, and a
// probe with one tile of rows fewer gives the steady-state cost of a tile. The time is then
// extrapolated affinely in rows: ns = t1 + (t1 - t2) (R - R1) / (R1 - R2).
PrefillTiming prefill_step(AgentSession& s, std::vector<StepAgent*> agents, const std::vector<int64_t>& tokens,
                           const std::string& part, int max_sim, const JoinHost& host, StepRecord* rec) {
  PrefillTiming t;
  Step step{PhaseType::join, 0, {}, part};
  step.kv_since = s.kv().writes();
  int64_t n = 0;
  for (size_t i = 0; i < agents.size(); ++i) {
    if (tokens[i] <= 0) continue;
    if (tokens[i] > (int64_t(1) << 24))
      throw InputError("join: " + agents[i]->name + " would prefill " + std::to_string(tokens[i]) +
                       " tokens (allowed: up to 2^24)");
    s.append(*agents[i], int(tokens[i]));
    t.tokens += tokens[i];
    step.agents.push_back(*agents[i]);
    ++n;
  }
  if (step.agents.empty()) return t;
  const int64_t qpk = s.scenario().model.q_per_kv();
  int64_t max_tokens = 0;
  for (const StepAgent& a : step.agents) max_tokens = std::max<int64_t>(max_tokens, a.new_tokens);
  const bool bounded = max_sim > 0 && max_tokens > max_sim;
  // Bounded or not, the prefill runs at the tile the full prefill gets by the planner's rule (the
  // largest that fits), not a searched one: the extrapolation needs the tile fixed, and the
  // simulated and extrapolated times then describe the same schedule.
  const int tile = host.tile_rows(t.tokens * qpk);
  const int64_t tile_tokens = std::max<int64_t>(1, (tile + qpk * n - 1) / (qpk * n));  // per agent
  const int64_t s1 = std::max<int64_t>(max_sim, 3 * tile_tokens), s2 = s1 - tile_tokens;
  Step probe = step;
  int64_t r1 = 0, r2 = 0;
  for (size_t i = 0; i < step.agents.size(); ++i) {
    if (bounded) {
      step.agents[i].new_tokens = int(std::min<int64_t>(step.agents[i].new_tokens, s1));
      probe.agents[i].new_tokens = int(std::min<int64_t>(probe.agents[i].new_tokens, s2));
    }
    r1 += step.agents[i].new_tokens;
    r2 += probe.agents[i].new_tokens;
  }
  t.simulated_tokens = r1;
  *rec = host.run(step, tile);
  t.simulated_ns = t.ns = rec->timing.ns;
  t.energy = rec->energy;
  if (t.tokens > r1 && r1 > r2) {
    t.extrapolated = true;
    t.probe_ns = host.probe(probe, tile);
    t.ns = t.simulated_ns + std::max(0.0, t.simulated_ns - t.probe_ns) * double(t.tokens - r1) / double(r1 - r2);
    if (t.simulated_ns > 0) t.energy *= t.ns / t.simulated_ns;  // energy extrapolated with the time
  }
  return t;
}

// Decode steps: step k appends one token to every agent with more than k tokens to go.
double decode_steps(AgentSession& s, std::vector<StepAgent*> agents, const std::vector<int64_t>& steps,
                    const std::string& part, const JoinHost& host, int* count, EnergyReading* energy) {
  double ns = 0;
  const int64_t n = steps.empty() ? 0 : *std::max_element(steps.begin(), steps.end());
  for (int64_t k = 0; k < n; ++k) {
    Step step{PhaseType::join, int(k), {}, part + "[" + std::to_string(k) + "]"};
    step.kv_since = s.kv().writes();
    for (size_t i = 0; i < agents.size(); ++i) {
      if (steps[i] <= k) continue;
      s.append(*agents[i], 1);
      step.agents.push_back(*agents[i]);
    }
    const StepRecord rec = host.run(step, 0);
    ns += rec.timing.ns;
    *energy += rec.energy;
    ++*count;
  }
  return ns;
}

void collect(const KvPageManager& kv, SeqId seq, std::set<PageId>& into) {
  for (PageId p : kv.table(seq)) into.insert(p);
}

}  // namespace

JoinRun run_join(AgentSession& s, const JoinPlan& plan, const JoinSpec& spec, const JoinHost& host) {
  JoinRun run;
  run.strategy = plan.strategy;
  KvPageManager& kv = s.kv();
  StepAgent& parent = s.parent();
  const Scenario& sc = s.scenario();
  const std::vector<PageId> prefix = kv.table(parent.seq);
  const std::set<PageId> prefix_set(prefix.begin(), prefix.end());
  std::set<PageId> touched;  // every page a branch or reducer referenced
  for (const StepAgent& b : s.branches()) collect(kv, b.seq, touched);
  s.release_branches();

  // Reducers (hierarchical): forked from the shared prefix, batched, released afterwards.
  std::vector<StepAgent> reducers;
  std::vector<int64_t> in, out;
  for (size_t r = 0; r < plan.body.reducers.size(); ++r) {
    const ReducerTask& task = plan.body.reducers[r];
    // Tensor owners: sub-agents 0..n-1, the parent after the fork n, reducers n+1+r.
    reducers.push_back(s.fork_parent(task.name, tensor_origin_main(sc) + 1 + int(r)));
    in.push_back(task.input_tokens);
    out.push_back(task.output_tokens);
  }
  run.reducers = int(reducers.size());
  if (!reducers.empty()) {
    std::vector<StepAgent*> ptrs;
    for (StepAgent& r : reducers) ptrs.push_back(&r);
    StepRecord rec;
    run.reduce_prefill = prefill_step(s, ptrs, in, "reduce_prefill", spec.max_simulated_tokens, host, &rec);
    run.reducer_prefill_done_ns = rec.timing.agent_done_ns;
    run.reduce_decode_ns = decode_steps(s, ptrs, out, "reduce_decode", host, &run.reduce_decode_steps, &run.fan_in_energy);
    run.fan_in_energy += run.reduce_prefill.energy;
    for (const StepAgent& r : reducers) {
      collect(kv, r.seq, touched);
      s.release(r);
    }
  }

  // Evidence (pointer): host-side fetches, one after another.
  for (const EvidenceFetch& f : plan.body.fetches) {
    host.wait(Step{PhaseType::join, run.evidence_fetches, {}, "evidence[E" + std::to_string(f.id) + "]"},
              spec.evidence_fetch_ns);
    ++run.evidence_fetches;
  }
  run.evidence_ns = double(run.evidence_fetches) * spec.evidence_fetch_ns;

  // The main agent's continuation prefill of the join input (note 5.4).
  parent.origin = tensor_origin_main(sc);
  StepRecord rec;
  run.prefill = prefill_step(s, {&parent}, {plan.join_tokens}, "prefill", spec.max_simulated_tokens, host, &rec);
  if (rec.check) run.prefill_check = rec.check->datapath;
  run.fan_in_ns = run.reduce_prefill.ns + run.reduce_decode_ns + run.evidence_ns + run.prefill.ns;
  run.fan_in_energy += run.prefill.energy;

  // Reference counts now: only the parent is live, it references the prefix once, and every
  // page only branches or reducers referenced is free.
  for (SeqId q = 0; q < kv.sequences(); ++q) run.kv.live_sequences += kv.live(q) ? 1 : 0;
  run.kv.pages_in_use = kv.in_use();
  run.kv.prefix_pages = int64_t(prefix.size());
  for (PageId p : prefix) run.kv.prefix_pages_referenced_once += kv.page(p).refs == 1 ? 1 : 0;
  run.kv.join_input_pages = int64_t(kv.table(parent.seq).size() - prefix.size());
  for (PageId p : touched)
    if (!prefix_set.count(p)) {
      ++run.kv.private_pages;
      run.kv.private_pages_live += kv.page(p).refs > 0 ? 1 : 0;
    }
  kv.check_invariants();

  // The continuation: the parent decodes the join phase's tokens (continuation pages).
  const size_t before = kv.table(parent.seq).size();
  run.continuation_ns = decode_steps(s, {&parent}, {int64_t(sc.phase(PhaseType::join)->tokens)}, "continuation",
                                     host, &run.continuation_steps, &run.continuation_energy);
  run.kv.continuation_pages = int64_t(kv.table(parent.seq).size() - before);
  return run;
}

namespace {

Json timing_json(const PrefillTiming& t) {
  return Json{{"tokens", t.tokens},         {"simulated_tokens", t.simulated_tokens},
              {"simulated_ns", t.simulated_ns}, {"probe_ns", t.probe_ns},
              {"ns", t.ns},                 {"extrapolated", t.extrapolated}};
}

Json run_json(const JoinRun& r) {
  Json j = {{"start_ns", r.start_ns},
            {"reducers", r.reducers},
            {"reduce_prefill", timing_json(r.reduce_prefill)},
            {"reducer_prefill_done_ns", r.reducer_prefill_done_ns},
            {"reduce_decode_steps", r.reduce_decode_steps},
            {"reduce_decode_ns", r.reduce_decode_ns},
            {"evidence_fetches", r.evidence_fetches},
            {"evidence_ns", r.evidence_ns},
            {"continuation_prefill", timing_json(r.prefill)},
            {"fan_in_ns", r.fan_in_ns},
            {"continuation_decode_steps", r.continuation_steps},
            {"continuation_decode_ns", r.continuation_ns},
            {"kv_after_join", {{"live_sequences", r.kv.live_sequences},
                               {"pages_in_use", r.kv.pages_in_use},
                               {"prefix_pages", r.kv.prefix_pages},
                               {"prefix_pages_referenced_once", r.kv.prefix_pages_referenced_once},
                               {"join_input_pages", r.kv.join_input_pages},
                               {"private_pages", r.kv.private_pages},
                               {"private_pages_live", r.kv.private_pages_live},
                               {"continuation_pages", r.kv.continuation_pages}}}};
  j["energy"] = {{"fan_in", report::energy_json(r.fan_in_energy, false)},
                 {"continuation", report::energy_json(r.continuation_energy, false)},
                 {"note", "hardware steps only (host-side evidence fetches not counted); an extrapolated prefill's "
                          "energy is its simulated part's scaled by the extrapolated time"}};
  if (r.prefill_check)
    j["continuation_prefill"]["max_abs_err"] = r.prefill_check->max_abs_err;
  return j;
}

}  // namespace

JoinOutcome run_join_phase(AgentSession& s, StepRunner& steps, Timeline& tl, const RecordStep& record, bool compare) {
  const Scenario& sc = s.scenario();
  const JoinSpec& spec = *sc.join;
  const JoinStrategyRegistry reg = builtin_join_strategies();
  const ModelDims dims = model_dims(sc, spec);
  const int64_t prefix = s.kv().length(s.parent().seq);
  JoinOutcome o;
  if (compare) o.plans = plan_all_strategies(reg, spec.input, spec.options, dims, prefix);
  else o.plans = {make_join_plan(reg, spec.options.strategy, spec.input, spec.options, dims, prefix)};

  // The other strategies first, each on a copy of the page state and its own timeline (its
  // steps are not part of the run's trace), then the scenario's strategy on the run itself.
  StepRunner side = steps.quiet();
  o.runs.resize(o.plans.size());
  size_t primary = 0;
  for (size_t i = 0; i < o.plans.size(); ++i) {
    if (o.plans[i].strategy == spec.options.strategy) {
      primary = i;
      continue;
    }
    KvPageManager kv = s.kv();
    AgentSession copy(s, kv);
    Timeline own(false);
    o.runs[i] = run_join(copy, o.plans[i], spec, hardware_host(side, kv, own, [](const Step&, StepRun&&) {}));
  }
  const double start = tl.now_ns();
  o.runs[primary] = run_join(s, o.plans[primary], spec, hardware_host(steps, s.kv(), tl, record));
  o.runs[primary].start_ns = start;

  Json strategies = Json::array();
  for (size_t i = 0; i < o.plans.size(); ++i) {
    o.plans[i].continuation_prefill_ns = o.runs[i].prefill.ns;
    o.plans[i].fan_in_ns = o.runs[i].fan_in_ns;
    o.plans[i].fan_in_energy_j = o.runs[i].fan_in_energy.total_j();
    o.plans[i].join_energy_j = o.runs[i].fan_in_energy.total_j() + o.runs[i].continuation_energy.total_j();
    Json pj = plan_json(o.plans[i]);
    pj["hardware"] = run_json(o.runs[i]);
    strategies.push_back(pj);
  }
  o.summary = {{"strategy", spec.options.strategy},
               {"compare", compare},
               {"shared_prefix_tokens", prefix},
               {"evidence_fetch_ns", spec.evidence_fetch_ns},
               {"max_simulated_tokens", spec.max_simulated_tokens},
               {"kv_after_join", run_json(o.runs[primary])["kv_after_join"]},
               {"strategies", strategies}};
  o.table = comparison_table(o.plans);
  o.csv = comparison_csv(o.plans);
  return o;
}

}  // namespace ahbm::join
