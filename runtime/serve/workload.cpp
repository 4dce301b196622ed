#include "runtime/serve/workload.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "hw/common/base/error.h"
#include "hw/common/base/recorded_schema.h"
#include "runtime/plan/choose.h"
#include "runtime/policy/apply_policy.h"
#include "runtime/serve/admission.h"
#include "runtime/serve/preemption.h"
#include "runtime/serve/request_csv.h"
#include "runtime/serve/scheduler.h"

namespace ahbm::serve {

namespace fs = std::filesystem;

namespace {

constexpr int kMaxTokens = 1 << 20;
constexpr int kMaxWorkflows = 1000000;
constexpr const char* kRequestCsvPlain = "request_csv";
constexpr const char* kRequestCsvSession = "request_csv_session";

// A path named in the workload: as given when absolute, else next to the workload file, else
// relative to the working directory.
std::string resolve(const JsonReader& r, const std::string& key, const std::string& p) {
  if (p.empty()) r.fail(key, "must not be empty");
  if (fs::path(p).is_absolute()) return p;
  const fs::path near = fs::path(r.file()).parent_path() / p;
  if (fs::exists(near)) return near.string();
  if (fs::exists(p)) return p;
  r.fail(key, "\"" + p + "\" not found (tried " + near.string() + " and " + p + ")");
}

// A token count field: an integer, or {"uniform": [lo, hi]}.
TokenCount token_count(JsonReader& r, const std::string& key, int def, int lo, int hi) {
  if (!r.has(key)) return {def, def};
  const Json& v = r.raw(key);
  if (v.is_object()) {
    JsonReader o(v, r.file(), r.field(key));
    const Json& u = o.raw("uniform");
    if (!u.is_array() || u.size() != 2)
      o.fail("uniform", "must be [lo, hi] with " + range_text(int64_t(lo), int64_t(hi)) + " and lo <= hi");
    const auto a = integer_in(u[0], lo, hi), b = integer_in(u[1], lo, hi);
    if (!a || !b || *a > *b)
      o.fail("uniform", "must be [lo, hi] with both in " + range_text(int64_t(lo), int64_t(hi)) + " and lo <= hi; got " +
                            u.dump());
    o.finish();
    return {int(*a), int(*b)};
  }
  const auto n = integer_in(v, lo, hi);
  if (!n)
    r.fail(key, "must be an integer in " + range_text(int64_t(lo), int64_t(hi)) +
                    " or {\"uniform\": [lo, hi]}; got " + v.dump());
  return {int(*n), int(*n)};
}

Json token_json(const TokenCount& t) {
  if (t.lo == t.hi) return t.lo;
  return Json{{"uniform", {t.lo, t.hi}}};
}

WorkflowTemplate read_template(JsonReader t) {
  WorkflowTemplate w;
  w.name = t.identifier("name");
  w.weight = t.number("weight", 1.0, 1e-9, 1e9);
  w.prompt_tokens = int(t.integer("prompt_tokens", 1, kMaxTokens));
  w.cached_tokens = int(t.integer("cached_tokens", 0, 0, kMaxTokens));
  if (w.cached_tokens > w.prompt_tokens)
    t.fail("cached_tokens", std::to_string(w.cached_tokens) + " exceeds prompt_tokens = " +
                                std::to_string(w.prompt_tokens) + " (allowed [0, prompt_tokens])");
  w.rounds = int(t.integer("rounds", 0, 0, 64));
  w.answer_tokens = token_count(t, "answer_tokens", w.rounds == 0 ? 1 : 0, w.rounds == 0 ? 1 : 0, kMaxTokens);
  if (w.rounds == 0) {
    for (const char* k : {"fanout", "join"})
      if (t.has(k)) t.fail(k, "needs rounds >= 1 (a plain request, rounds = 0, has no fan-out or join)");
    t.finish();
    return w;
  }
  JsonReader f = t.object("fanout");
  w.branches = int(f.integer("branches", 1, 4096));
  w.branch_new_tokens = token_count(f, "new_tokens", 1, 1, kMaxTokens);
  w.branch_decode_tokens = token_count(f, "decode_tokens", 1, 0, kMaxTokens);
  w.tool_ns = f.number("tool_ns", 0.0, 0.0, 1e15);
  f.finish();
  if (t.has("join")) {
    JsonReader j = t.object("join");
    w.join = j.string("strategy", "all", {"all", "first"});
    if (w.join == "first") {
      // Fixed bounds for the reader (the generated schema's); the branch count is checked after.
      w.join_first = int(j.integer("first", 1, 4096));
      if (w.join_first > w.branches)
        j.fail("first", "value " + std::to_string(w.join_first) + " is out of range (allowed: " +
                            range_text(int64_t(1), int64_t(w.branches)) + "); at most fanout.branches");
    } else if (j.has("first")) {
      j.fail("first", "is read only with \"strategy\": \"first\"");
    }
    w.join_tokens = int(j.integer("tokens", 0, 0, kMaxTokens));
    j.finish();
  }
  t.finish();
  return w;
}

ArrivalSpec read_arrival(JsonReader a) {
  ArrivalSpec s;
  s.process = a.string("process", {"poisson", "timestamps", "azure_csv", "request_csv"});
  if (s.process == "poisson") {
    s.rate_per_s = a.number("rate_per_s", 1e-6, 1e12);
    s.count = int(a.integer("count", 1, kMaxWorkflows));
  } else if (s.process == "timestamps") {
    const Json& t = a.raw("times_ns");
    if (!t.is_array() || t.empty() || t.size() > size_t(kMaxWorkflows))
      a.fail("times_ns", "must be a non-empty array of at most " + std::to_string(kMaxWorkflows) + " times in ns");
    double last = 0;
    for (size_t i = 0; i < t.size(); ++i) {
      if (!t[i].is_number() || !std::isfinite(t[i].get<double>()) || t[i].get<double>() < last ||
          t[i].get<double>() > kMaxArrivalNs)
        a.fail("times_ns", "element " + std::to_string(i) + " = " + t[i].dump() +
                               " must be a number in [previous time, 1125899906842624] (times are non-decreasing, from 0, "
                               "up to 2^50 ns, where time in double ns resolves 1/8 ns)");
      last = t[i].get<double>();
      s.times_ns.push_back(last);
    }
    s.count = int(s.times_ns.size());
  } else {
    s.file = resolve(a, "file", a.string("file"));
    s.count = int(a.integer("count", kMaxWorkflows, 1, kMaxWorkflows));
  }
  a.finish();
  return s;
}

// The chip's group count is checked against the pools when the workload is served (serve()).
PbdSpec read_pbd(JsonReader p) {
  PbdSpec s;
  s.prefill_groups = int(p.integer("prefill_groups", 1, 1, 1023));
  s.prefill_pools = int(p.integer("prefill_pools", 1, 1, 1023));
  s.decode_pools = int(p.integer("decode_pools", 1, 1, 1023));
  s.decode_groups = int(p.integer("decode_groups", 0, 0, 1023));
  s.buffer_max = int(p.integer("buffer_max", 4, 1, kMaxWorkflows));
  s.micro_batch = int(p.integer("micro_batch", 1, 1, kMaxWorkflows));
  if (s.micro_batch > s.buffer_max)
    p.fail("micro_batch", "value " + std::to_string(s.micro_batch) + " is out of range (allowed: " +
                              range_text(int64_t(1), int64_t(s.buffer_max)) + "); at most buffer_max");
  s.kv_path = p.string("kv_path", "noc", {"noc", "host"});
  s.kv_migration = p.string("kv_migration", "whole", {"whole", "layer"});
  p.finish();
  return s;
}

}  // namespace

int TokenCount::draw(std::mt19937_64& rng) const {
  if (lo == hi) return lo;
  // Modulo draw (bias below 2^-40 for these ranges): the same on every standard library, unlike
  // std::uniform_int_distribution.
  return lo + int(rng() % uint64_t(hi - lo + 1));
}

int64_t WorkflowSpec::requested_tokens() const {
  int64_t n = answer_tokens;
  for (const auto& r : rounds)
    for (const BranchSpec& b : r) n += b.decode_tokens;
  return n;
}

Workload parse_workload(const Json& j, const std::string& file, SchemaRecorder* rec) {
  Workload w;
  w.file = file;
  JsonReader r(j, file);
  r.record_into(rec);
  w.name = r.identifier("name");
  w.scenario_file = resolve(r, "scenario", r.string("scenario"));
  w.scenario = load_scenario(w.scenario_file);
  w.seed = uint64_t(r.integer("seed", 1, 0, INT64_MAX));
  w.arrival = read_arrival(r.object("arrival"));
  // A trace's rows are plain requests: templates given with one would be silently ignored.
  const bool trace = w.arrival.process == "azure_csv" || w.arrival.process == "request_csv";
  if (trace && r.has("templates"))
    r.fail("templates", "not allowed with arrival.process = \"" + w.arrival.process +
                            "\" (the trace's rows give the workflows; templates describe the workflows of the poisson "
                            "and timestamps arrivals)");
  if (!trace)
    for (JsonReader t : r.array_of_objects("templates", 1, 64)) w.templates.push_back(read_template(t));
  if (w.arrival.process == "request_csv") {
    // Names only (the engine's records name a workflow by its template): a row's own plain request,
    // and a session of several rows (request_workflows, runtime/serve/request_csv.h).
    w.templates.resize(2);
    w.templates[0].name = kRequestCsvPlain;
    w.templates[1].name = kRequestCsvSession;
  }
  for (size_t i = 0; i < w.templates.size(); ++i)
    for (size_t k = 0; k < i; ++k)
      if (w.templates[i].name == w.templates[k].name)
        r.fail("templates", "template name \"" + w.templates[i].name + "\" is used twice (names must be unique)");
  if (r.has("scheduler")) {
    JsonReader s = r.object("scheduler");
    w.scheduler.policy = s.string("policy", "fcfs");
    w.scheduler.max_batch_tokens = int(s.integer("max_batch_tokens", 4096, 1, kMaxTokens));
    w.scheduler.max_workflows = int(s.integer("max_workflows", 0, 0, kMaxWorkflows));
    w.scheduler.step_cache = s.boolean("step_cache", true);
    w.scheduler.share_prefix = s.boolean("share_prefix", true);
    w.scheduler.batch_branches = s.boolean("batch_branches", true);
    if (s.has("pbd")) w.scheduler.pbd = read_pbd(s.object("pbd"));
    std::vector<std::string> policies;
    for (Policy p : all_policies()) policies.push_back(policy_name(p));
    policies.push_back("auto");
    w.scheduler.attention_policy = s.string("attention_policy", "A", policies);
    w.scheduler.launch = s.string("launch", "unified", {"unified", "per-head"});
    w.scheduler.objective = s.string("objective", "time", choice_names(Objective{}));
    // The built-in rules (admission.h); a caller's own registry is checked by the engine.
    w.scheduler.admission = s.string("admission", "reserve", builtin_admission_rules().names());
    if (w.scheduler.on_demand() && !w.scheduler.share_prefix)
      s.fail("admission", "value \"on_demand\" is not allowed with share_prefix = false (allowed: \"reserve\"): the "
                          "no-sharing baseline copies the parent's pages at the fan-out, outside a step's page check");
    // Preemption only happens under on_demand admission: a preemption mode given with reserve
    // would describe a run that never preempts, so it is refused rather than ignored.
    if (s.has("preemption")) {
      w.scheduler.preemption = s.string("preemption", "recompute", builtin_preemption_rules().names());
      if (!w.scheduler.on_demand())
        s.fail("preemption", "value \"" + w.scheduler.preemption + "\" needs scheduler.admission = \"on_demand\" "
                             "(admission \"reserve\" never runs out of KV, so nothing is preempted)");
    }
    w.scheduler.placement = s.string("placement", "spread", {"spread", "prefix_affinity"});
    if (w.scheduler.sliced() && w.scheduler.pbd)
      s.fail("placement", "value \"prefix_affinity\" is not allowed with scheduler.pbd (allowed: \"spread\"): P-B-D "
                          "splits the groups into its own pools: cut a stage into pools of num_key_value_heads groups "
                          "with scheduler.pbd.prefill_pools and decode_pools instead");
    if (w.scheduler.pbd && w.scenario.model.parallel.dp > 1)
      s.fail("pbd", "is not modelled with data-parallel replicas: " + w.scenario_file + " has model.parallel.dp = " +
                        std::to_string(w.scenario.model.parallel.dp) +
                        " (allowed with scheduler.pbd: dp = 1; P-B-D's own pools are its data parallelism, "
                        "scheduler.pbd.prefill_pools and decode_pools)");
    s.finish();
  }
  if (r.has("sampling")) w.sampling = read_sampling(r.object("sampling"));
  if (r.has("slo")) {
    JsonReader s = r.object("slo");
    if (s.has("ttft_ns")) w.slo.ttft_ns = s.number("ttft_ns", 1e-3, 1e18);
    if (s.has("tpot_ns")) w.slo.tpot_ns = s.number("tpot_ns", 1e-3, 1e18);
    s.finish();
  }
  r.finish();
  return w;
}

Workload load_workload(const std::string& path) { return parse_workload(load_json_file(path), path); }

Json workload_schema(const std::vector<std::string>& probes) {
  return recorded_schema(probes, "ahbm-sim serve workload",
                         "A workload for `ahbm-sim serve` (docs/serving.md). Generated by `ahbm-sim schema serve-workload` "
                         "from runtime/serve/workload.cpp's reads; rules between fields are checked by the parser only.",
                         [](const Json& j, const std::string& f, SchemaRecorder* r) { parse_workload(j, f, r); });
}

std::vector<WorkflowSpec> expand(const Workload& w) {
  std::mt19937_64 rng(w.seed);
  std::vector<WorkflowSpec> out;
  const auto from_template = [&](int t, double at_ns) {
    const WorkflowTemplate& tp = w.templates[size_t(t)];
    WorkflowSpec s;
    s.id = int(out.size());
    s.arrival_ns = at_ns;
    s.tmpl = t;
    s.prompt_tokens = tp.prompt_tokens;
    s.cached_tokens = tp.cached_tokens;
    s.tool_ns = tp.tool_ns;
    s.join_tokens = tp.join_tokens;
    s.join_first = tp.join == "first" ? tp.join_first : tp.branches;
    for (int r = 0; r < tp.rounds; ++r) {
      std::vector<BranchSpec> round;
      for (int b = 0; b < tp.branches; ++b) {
        BranchSpec br;
        br.new_tokens = tp.branch_new_tokens.draw(rng);
        br.decode_tokens = tp.branch_decode_tokens.draw(rng);
        round.push_back(br);
      }
      s.rounds.push_back(round);
    }
    s.answer_tokens = tp.answer_tokens.draw(rng);
    out.push_back(s);
  };
  // The mix: template i with probability weight_i / sum of weights.
  double total = 0;
  for (const WorkflowTemplate& t : w.templates) total += t.weight;
  const auto pick = [&]() {
    if (w.templates.size() == 1) return 0;
    const double u = double(rng() >> 11) * 0x1.0p-53 * total;
    double acc = 0;
    for (size_t i = 0; i < w.templates.size(); ++i) {
      acc += w.templates[i].weight;
      if (u < acc) return int(i);
    }
    return int(w.templates.size()) - 1;
  };
  if (w.arrival.process == "poisson") {
    double t = 0;
    for (int i = 0; i < w.arrival.count; ++i) {
      // Exponential gaps of mean 1/rate: -ln(1 - u) / rate, u in [0, 1).
      const double u = double(rng() >> 11) * 0x1.0p-53;
      if (i > 0) t += -std::log1p(-u) / w.arrival.rate_per_s * 1e9;
      if (t > kMaxArrivalNs)
        throw InputError(w.file + ": arrival: workflow " + std::to_string(i) + " of count = " +
                         std::to_string(w.arrival.count) + " at rate_per_s = " + Json(w.arrival.rate_per_s).dump() +
                         " arrives at " + Json(t).dump() +
                         " ns (allowed: up to 1125899906842624 ns = 2^50 ns, where time in double ns resolves 1/8 ns; "
                         "raise rate_per_s or lower count)");
      from_template(pick(), t);
    }
  } else if (w.arrival.process == "timestamps") {
    for (double t : w.arrival.times_ns) from_template(pick(), t);
  } else if (w.arrival.process == "request_csv") {
    out = request_workflows(read_request_csv(w.arrival.file, w.arrival.count), w.arrival.file, 0, 1);
  } else {
    for (const TraceRow& row : read_azure_csv(w.arrival.file, w.arrival.count)) {
      WorkflowSpec s;
      s.id = int(out.size());
      s.arrival_ns = row.arrival_ns;
      s.tmpl = -1;  // a plain request of the trace
      s.prompt_tokens = row.context_tokens;
      s.answer_tokens = row.generated_tokens;
      out.push_back(s);
    }
  }
  return out;
}

Json to_json(const Workload& w) {
  Json j;
  j["name"] = w.name;
  j["scenario"] = w.scenario_file;
  j["seed"] = w.seed;
  Json a;
  a["process"] = w.arrival.process;
  if (w.arrival.process == "poisson") {
    a["rate_per_s"] = w.arrival.rate_per_s;
    a["count"] = w.arrival.count;
  } else if (w.arrival.process == "timestamps") {
    a["times_ns"] = w.arrival.times_ns;
  } else {
    a["file"] = w.arrival.file;
    a["count"] = w.arrival.count;
  }
  j["arrival"] = a;
  j["templates"] = Json::array();
  // request_csv's two templates are names only, none the user gave: not echoed.
  for (const WorkflowTemplate& t : w.arrival.process == "request_csv" ? std::vector<WorkflowTemplate>{} : w.templates) {
    Json tj{{"name", t.name}, {"weight", t.weight}, {"prompt_tokens", t.prompt_tokens},
            {"cached_tokens", t.cached_tokens}, {"rounds", t.rounds}, {"answer_tokens", token_json(t.answer_tokens)}};
    if (t.rounds > 0) {
      tj["fanout"] = {{"branches", t.branches}, {"new_tokens", token_json(t.branch_new_tokens)},
                      {"decode_tokens", token_json(t.branch_decode_tokens)}, {"tool_ns", t.tool_ns}};
      tj["join"] = {{"strategy", t.join}, {"tokens", t.join_tokens}};
      if (t.join == "first") tj["join"]["first"] = t.join_first;
    }
    j["templates"].push_back(tj);
  }
  j["scheduler"] = {{"policy", w.scheduler.policy}, {"max_batch_tokens", w.scheduler.max_batch_tokens},
                    {"max_workflows", w.scheduler.max_workflows}, {"step_cache", w.scheduler.step_cache},
                    {"share_prefix", w.scheduler.share_prefix}, {"batch_branches", w.scheduler.batch_branches},
                    {"attention_policy", w.scheduler.attention_policy}, {"launch", w.scheduler.launch}};
  if (w.scheduler.objective != "time") j["scheduler"]["objective"] = w.scheduler.objective;  // as admission
  if (w.scheduler.on_demand()) {  // echoed only when set: reserve runs keep their summary as before
    j["scheduler"]["admission"] = w.scheduler.admission;
    j["scheduler"]["preemption"] = w.scheduler.preemption;
  }
  if (w.scheduler.sliced()) j["scheduler"]["placement"] = w.scheduler.placement;  // as admission: spread runs as before
  if (w.scheduler.pbd) {
    const PbdSpec& p = *w.scheduler.pbd;
    j["scheduler"]["pbd"] = {{"prefill_groups", p.prefill_groups}, {"decode_groups", p.decode_groups},
                             {"buffer_max", p.buffer_max}, {"micro_batch", p.micro_batch}, {"kv_path", p.kv_path}};
    if (p.prefill_pools > 1) j["scheduler"]["pbd"]["prefill_pools"] = p.prefill_pools;  // one pool: as before
    if (p.decode_pools > 1) j["scheduler"]["pbd"]["decode_pools"] = p.decode_pools;
    if (p.kv_migration != "whole") j["scheduler"]["pbd"]["kv_migration"] = p.kv_migration;  // whole: as before
  }
  Json slo = Json::object();
  if (w.slo.ttft_ns) slo["ttft_ns"] = *w.slo.ttft_ns;
  if (w.slo.tpot_ns) slo["tpot_ns"] = *w.slo.tpot_ns;
  j["slo"] = slo;
  if (w.sampling) j["sampling"] = sampling_json(*w.sampling);  // exact mode: as before
  return j;
}

void apply_overrides(Workload& w, const WorkloadOverrides& o, const std::string& source) {
  if (o.seed) {
    if (*o.seed > uint64_t(INT64_MAX))
      throw InputError(source + ": seed " + std::to_string(*o.seed) + " is out of range [0, 9223372036854775807]");
    w.seed = *o.seed;
  }
  if (o.rate_per_s) {
    if (w.arrival.process != "poisson")
      throw InputError(source + ": a rate needs a workload with \"arrival\": {\"process\": \"poisson\"}; " + w.file +
                       " has \"" + w.arrival.process + "\"");
    if (!(*o.rate_per_s >= 1e-6 && *o.rate_per_s <= 1e12))
      throw InputError(source + ": rate_per_s " + Json(*o.rate_per_s).dump() + " is out of range [1e-06, 1e+12]");
    w.arrival.rate_per_s = *o.rate_per_s;
  }
  if (o.sampling && !w.sampling) w.sampling = SamplingSpec{};
  if (!o.scheduler.empty()) {
    builtin_schedulers().get(o.scheduler, source + ": scheduler");
    w.scheduler.policy = o.scheduler;  // echoed as run
  }
}

}  // namespace ahbm::serve
