#include "runtime/scenario/scenario.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "hw/common/base/recorded_schema.h"
#include "runtime/join/spec.h"

namespace ahbm {

const char* phase_name(PhaseType t) {
  switch (t) {
    case PhaseType::prefill: return "prefill";
    case PhaseType::decode: return "decode";
    case PhaseType::join: return "join";
    default: return "fanout";
  }
}

int Scenario::total_rows() const {
  int n = 0;
  for (const auto& a : agents) n += a.new_tokens;
  return n;
}

const PhaseSpec* Scenario::phase(PhaseType t) const {
  for (const auto& p : phases)
    if (p.type == t) return &p;
  return nullptr;
}

namespace {

// model.config: absolute; else relative to the scenario file's directory; else relative to
// traces/ under the working directory (so a scenario kept elsewhere can still name a shipped
// config as "models/llama-3-8b.json").
std::string resolve_model_config(const JsonReader& m, const std::string& name) {
  namespace fs = std::filesystem;
  if (name.empty()) m.fail("config", "must not be empty (a path to a HuggingFace-style config.json)");
  const fs::path p(name);
  std::vector<fs::path> tried;
  if (p.is_absolute()) tried.push_back(p);
  else tried = {fs::path(m.file()).parent_path() / p, fs::path("traces") / p};
  std::error_code ec;
  for (const auto& t : tried)
    if (fs::is_regular_file(t, ec)) return t.lexically_normal().string();
  for (const auto& t : tried)  // there, but not a file: say what it is rather than "not found"
    if (fs::exists(t, ec))
      m.fail("config", "\"" + name + "\" is " + (fs::is_directory(t, ec) ? "a directory" : "not a regular file") + " (" +
                           t.lexically_normal().string() + "; allowed: a model config.json file)");
  std::string where;
  for (const auto& t : tried) where += (where.empty() ? "" : ", ") + t.lexically_normal().string();
  m.fail("config", "file \"" + name + "\" not found (looked for " + where +
                       "; allowed: a path relative to the scenario file or to traces/, or absolute)");
}

// model.parallel.dp: data-parallel replicas (docs/system.md, "Data parallelism"); serve routes
// workflows over them, run refuses more than one (it simulates one batch on one replica).
int read_data_parallel(JsonReader& p) { return int(p.integer("dp", 1, 1, 4096)); }

void read_model(JsonReader m, ModelSpec& s) {
  if (m.has("config") || m.has("hidden_size")) {
    // A whole model: the attention-only names would be a second, possibly different, value.
    const std::vector<std::pair<std::string, std::string>> renamed = {
        {"num_q_heads", "num_attention_heads"}, {"num_kv_heads", "num_key_value_heads"}, {"layers", "num_hidden_layers"}};
    for (const auto& [old_name, hf] : renamed)
      if (m.has(old_name))
        m.fail(old_name, "not allowed with a full model description (\"config\" or \"hidden_size\"): its " + hf +
                             " gives the " + (old_name == "layers" ? "layer count" : "head count"));
    ModelConfig cfg;
    if (m.has("config")) {
      for (const auto& k : model_config_keys())
        if (m.has(k))
          m.fail(k, "not allowed next to \"config\" (the config file gives the model; give either the file or the fields)");
      s.config_file = resolve_model_config(m, m.string("config"));
      cfg = load_model_config(s.config_file);
    } else {
      cfg = read_model_config(m);
    }
    s.whole = std::make_shared<const ModelConfig>(cfg);
    if (m.has("parallel")) {
      // How the model is split over the system's chips (docs/system.md): tensor and pipeline parallelism.
      JsonReader p = m.object("parallel");
      s.parallel.tp = int(p.integer("tp", 1, 1, 4096));
      const std::string problem = tensor_parallel_problem(cfg, s.parallel.tp);
      if (!problem.empty()) p.fail("tp", "value " + std::to_string(s.parallel.tp) + " " + problem);
      std::vector<std::string> algos;
      for (CollectiveAlgo a : collective_algorithms(CollectiveKind::all_reduce)) algos.push_back(collective_name(a));
      const std::string algo = p.string("all_reduce", "ring", algos);
      s.parallel.all_reduce = CollectiveAlgo(std::find(collective_algo_names().begin(), collective_algo_names().end(), algo) -
                                             collective_algo_names().begin());
      const int tp = s.parallel.tp;
      if (s.parallel.all_reduce == CollectiveAlgo::halving_doubling && (tp & (tp - 1)) != 0)
        p.fail("all_reduce", "value 'halving_doubling' needs tp to be a power of two, and tp = " + std::to_string(tp) +
                                 " (allowed with it: ring, tree)");
      s.parallel.pp = int(p.integer("pp", 1, 1, 4096));
      const std::string stages = pipeline_parallel_problem(cfg, s.parallel.pp);
      if (!stages.empty()) p.fail("pp", "value " + std::to_string(s.parallel.pp) + " " + stages);
      s.parallel.dp = read_data_parallel(p);
      // Expert parallelism (docs/system.md): the MoE layers' experts over the TP group's chips.
      s.parallel.ep = int(p.integer("ep", 1, 1, 4096));
      const std::string experts = expert_parallel_problem(cfg, s.parallel.ep, s.parallel.tp);
      if (!experts.empty()) p.fail("ep", "value " + std::to_string(s.parallel.ep) + " " + experts);
      p.finish();
    }
    s.layers = cfg.num_hidden_layers;  // every layer's attention runs, on whichever chip holds it
    cfg = chip_model(cfg, s.parallel);
    s.head_dim = cfg.head_dim;
    s.num_q_heads = cfg.num_attention_heads;
    s.num_kv_heads = cfg.num_key_value_heads;
    s.full = s.parallel.none() ? s.whole : std::make_shared<const ModelConfig>(cfg);
  } else {
    if (m.has("parallel")) {  // replicas of the attention chip only: there are no layers to split
      JsonReader p = m.object("parallel");
      for (const char* k : {"tp", "pp", "ep", "all_reduce"})
        if (p.has(k))
          p.fail(k, "needs a whole model (\"config\" or \"hidden_size\"): the split is of its layers (allowed "
                    "with an attention-only model: dp)");
      s.parallel.dp = read_data_parallel(p);
      p.finish();
    }
    s.head_dim = int(m.integer("head_dim", 1, 1024));
    s.num_q_heads = int(m.integer("num_q_heads", 1, 1, 1024));
    s.num_kv_heads = int(m.integer("num_kv_heads", 1, 1, 1024));  // fixed bounds: rules between fields follow
    if (s.num_q_heads % s.num_kv_heads != 0)
      m.fail("num_kv_heads", "value " + std::to_string(s.num_kv_heads) + " does not divide num_q_heads = " +
                                 std::to_string(s.num_q_heads) + " (each KV head serves the same number of query heads)");
    s.layers = int(m.integer("layers", 1, 1, 1024));
  }
  const std::string dt = m.string("dtype", "fp32", dtype_names());
  parse_dtype(dt, &s.dtype);
  if (m.has("fusion")) {
    // Which operators run fused (docs/models.md "Fusion choices"): only a whole model has them.
    if (!s.full)
      m.fail("fusion", "needs a whole model (\"config\" or \"hidden_size\"): the fused operators are its layers'");
    JsonReader f = m.object("fusion");
    s.fusion.linear_rope = f.boolean("linear_rope", true);
    s.fusion.norm = f.boolean("norm", true);
    s.fusion.attention = f.boolean("attention", true);
    f.finish();
  }
  m.finish();
}

void read_kv(JsonReader k, KvSpec& s) {
  s.page_tokens = int(k.integer("page_tokens", s.page_tokens, 1, 1 << 16));
  const std::string pp = k.string("prefix_placement", placement_name(s.prefix_placement), prefix_placement_names());
  s.prefix_placement = pp == "interleaved" ? PrefixPlacement::interleaved : PrefixPlacement::contiguous;
  s.private_placement = k.string("private_placement", s.private_placement, {"balanced"});
  k.finish();
}

std::vector<PhaseSpec> read_phases(JsonReader& r, const Scenario& s) {
  const std::vector<std::string> names = {"prefill", "fanout", "decode", "join"};
  std::vector<PhaseSpec> out;
  int last = -1;
  for (JsonReader p : r.array_of_objects("phases", 1, 4)) {
    const std::string type = p.string("type", names);
    const int order = int(std::find(names.begin(), names.end(), type) - names.begin());
    if (order <= last)
      p.fail("type", "\"" + type + "\" out of order: phases run prefill, fanout, decode, join, each at most once");
    last = order;
    PhaseSpec ph;
    ph.type = PhaseType(order);
    // `tokens` is read with one range for every phase type (the generated schema's); each type's
    // own limits are checked after the read.
    // A default that is another field's value is applied here, not given to the reader (whose
    // defaults are constants, shown in the schema).
    auto tokens_in = [&](int64_t def, int64_t lo, int64_t hi, const std::string& why) {
      const int64_t t = p.has("tokens") ? p.integer("tokens", 0, 1 << 24) : def;
      if (t < lo || t > hi)
        p.fail("tokens", "value " + std::to_string(t) + " is out of range (allowed: " + range_text(lo, hi) + ")" + why);
      return int(t);
    };
    if (ph.type == PhaseType::prefill) {
      if (s.shared_prefix_tokens < 1) p.fail("type", "prefill needs shared_prefix_tokens >= 1");
      ph.tokens = tokens_in(s.shared_prefix_tokens, 1, s.shared_prefix_tokens, "; at most shared_prefix_tokens");
    } else if (ph.type == PhaseType::decode) {
      ph.steps = int(p.integer("steps", 1, 1 << 16));
    } else if (ph.type == PhaseType::join) {
      // Without a join strategy the phase is a plain continuation prefill of `tokens` tokens.
      if (!s.join && !p.has("tokens")) p.fail("tokens", "missing required field (a join phase without a join block prefills it)");
      ph.tokens = s.join ? tokens_in(0, 0, 1 << 16, "") : tokens_in(0, 1, 1 << 16, "; a join phase without a join block prefills at least one token");
    }
    p.finish();
    out.push_back(ph);
  }
  bool fanout = false;
  for (const auto& ph : out) fanout = fanout || ph.type == PhaseType::fanout;
  if (!fanout) r.fail("phases", "must contain a \"fanout\" phase (the fork of the agents)");
  return out;
}

}  // namespace

Scenario parse_scenario(const Json& j, const std::string& file, SchemaRecorder* rec) {
  Scenario s;
  JsonReader r(j, file);
  r.record_into(rec);
  s.name = r.string("name");
  if (s.name.empty()) r.fail("name", "must not be empty");
  s.description = r.string("description", "");
  read_model(r.object("model"), s.model);
  if (r.has("kv")) read_kv(r.object("kv"), s.kv);
  s.shared_prefix_tokens = int(r.integer("shared_prefix_tokens", 0, 1 << 24));
  s.seed = uint64_t(r.integer("seed", 1, 0, INT64_MAX));
  std::set<std::string> names;
  for (JsonReader a : r.array_of_objects("agents", 1, 4096)) {
    AgentSpec spec;
    spec.name = a.identifier("name");
    if (spec.name == kMainAgentName || !names.insert(spec.name).second)
      a.fail("name", "\"" + spec.name + "\" must be unique among agents and not \"" + kMainAgentName +
                         "\" (the parent agent's name)");
    spec.new_tokens = int(a.integer("new_tokens", 1, 1 << 16));
    spec.decode_tokens = int(a.integer("decode_tokens", -1, 0, 1 << 16));
    a.finish();
    s.agents.push_back(spec);
  }
  if (r.has("join")) {
    std::vector<std::string> names;
    for (const auto& a : s.agents) names.push_back(a.name);
    s.join = std::make_shared<const join::JoinSpec>(join::read_join_spec(r, "join", names, join::builtin_join_strategies()));
  }
  if (r.has("phases")) s.phases = read_phases(r, s);
  else s.phases = {PhaseSpec{}};
  if (s.join && !s.phase(PhaseType::join)) r.fail("join", "needs a {\"type\": \"join\"} phase to run in");
  r.finish();
  return s;
}

Scenario load_scenario(const std::string& path) { return parse_scenario(load_json_file(path), path); }

Json scenario_schema(const std::vector<std::string>& probes) {
  return recorded_schema(probes, "ahbm-sim scenario",
                         "A scenario for `ahbm-sim run` (docs/scenarios.md). Generated by `ahbm-sim schema scenario` "
                         "from the parser's own reads (runtime/scenario/scenario.cpp); bounds that depend on other fields are "
                         "checked by the parser only. Keys starting with '_' are comments.",
                         [](const Json& j, const std::string& f, SchemaRecorder* r) { parse_scenario(j, f, r); });
}

namespace {

// A full model is echoed with its fields inline (resolved), so the echo parses on its own.
Json model_json(const ModelSpec& m) {
  Json j = m.full ? to_json(*m.whole)
                  : Json{{"head_dim", m.head_dim}, {"num_q_heads", m.num_q_heads}, {"num_kv_heads", m.num_kv_heads},
                         {"layers", m.layers}};
  j["dtype"] = dtype_name(m.dtype);
  if (!m.fusion.all()) j["fusion"] = to_json(m.fusion);  // absent: all fused (the echo stays as it was)
  if (!m.parallel.none() || m.parallel.dp > 1) {  // absent: one chip; pp and dp only when above 1
    j["parallel"] = Json::object();
    if (!m.parallel.none()) j["parallel"]["tp"] = m.parallel.tp;
    if (m.parallel.dp > 1) j["parallel"]["dp"] = m.parallel.dp;
    if (m.parallel.pp > 1) j["parallel"]["pp"] = m.parallel.pp;
    if (m.parallel.ep > 1) j["parallel"]["ep"] = m.parallel.ep;
    if (m.parallel.all_reduce != CollectiveAlgo::ring) j["parallel"]["all_reduce"] = collective_name(m.parallel.all_reduce);
  }
  return j;
}

}  // namespace

Json to_json(const Scenario& s) {
  Json agents = Json::array();
  for (const auto& a : s.agents) {
    Json aj = {{"name", a.name}, {"new_tokens", a.new_tokens}};
    if (a.decode_tokens >= 0) aj["decode_tokens"] = a.decode_tokens;
    agents.push_back(aj);
  }
  Json phases = Json::array();
  for (const auto& p : s.phases) {
    Json pj = {{"type", phase_name(p.type)}};
    if (p.type == PhaseType::prefill || p.type == PhaseType::join) pj["tokens"] = p.tokens;
    if (p.type == PhaseType::decode) pj["steps"] = p.steps;
    phases.push_back(pj);
  }
  Json j = Json{{"name", s.name},
              {"description", s.description},
              {"model", model_json(s.model)},
              {"kv", {{"page_tokens", s.kv.page_tokens}, {"prefix_placement", placement_name(s.kv.prefix_placement)},
                      {"private_placement", s.kv.private_placement}}},
              {"shared_prefix_tokens", s.shared_prefix_tokens},
              {"seed", s.seed},
              {"agents", agents},
              {"phases", phases}};
  if (s.join) j["join"] = join::to_json(*s.join);
  return j;
}

}  // namespace ahbm
