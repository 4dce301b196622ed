#include "runtime/join/spec.h"

#include <filesystem>
#include <map>
#include <set>

namespace ahbm::join {

namespace {

// The results as the scenario lists them: [{name, result | sizes}], names unique.
std::vector<AgentResult> read_inline_results(JsonReader& j, const std::string& key) {
  std::vector<AgentResult> out;
  std::set<std::string> names;
  for (JsonReader a : j.array_of_objects(key, 1, 4096)) {
    const std::string name = a.string("name");
    if (name.empty() || !names.insert(name).second)
      a.fail("name", "\"" + name + "\" must be non-empty and unique among results");
    out.push_back(read_agent_result(a, name));
    a.finish();
  }
  return out;
}

}  // namespace

JoinSpec read_join_spec(JsonReader& r, const std::string& key, const std::vector<std::string>& agents,
                        const JoinStrategyRegistry& reg) {
  JoinSpec spec;
  JsonReader j = r.object(key);
  spec.compare = j.boolean("compare", false);
  spec.evidence_fetch_ns = j.number("evidence_fetch_ns", spec.evidence_fetch_ns, 0.0, 1e12);
  spec.max_simulated_tokens = int(j.integer("max_simulated_tokens", 0, 0, 1 << 16));
  if (spec.max_simulated_tokens == 1)
    j.fail("max_simulated_tokens", "value 1 is too small (allowed: 0 = simulate every token, or 2..65536: the "
                                   "extrapolation needs a half-size probe of at least one token fewer)");
  spec.context_window = j.integer("context_window", 0, 0, kMaxTokens);
  if (!j.has("results")) j.fail("results", "missing: give the sub-agents' results inline ([{name, result | sizes}]) "
                                           "or as the path of a join input file (docs/join.md)");
  std::vector<AgentResult> given;
  const Json& raw = j.raw("results");
  if (raw.is_string()) {
    std::filesystem::path p = raw.get<std::string>();
    if (p.is_relative()) p = std::filesystem::path(r.file()).parent_path() / p;
    spec.results_file = p.lexically_normal().string();
    if (!std::filesystem::exists(p))
      j.fail("results", "file \"" + raw.get<std::string>() + "\" not found (looked for " + spec.results_file +
                            "; relative paths are taken from the scenario's directory)");
    // The file's agents and evidence are used; its model, prefix and join options are not
    // (the scenario's govern the run).
    JoinFile f = load_join_file(spec.results_file, reg);
    given = std::move(f.input.agents);
    spec.input.evidence = std::move(f.input.evidence);
    if (j.has("evidence")) j.fail("evidence", "give the evidence store in the results file when results is a path");
  } else if (raw.is_array()) {
    given = read_inline_results(j, "results");
    spec.input.evidence = read_evidence(j);
  } else {
    j.fail("results", "value " + raw.dump() + " must be a file path or an array of {name, result | sizes}");
  }
  // Options: everything else in the block (strategy, tokenizer, pointer, hierarchical, latent).
  spec.options = read_join_options(j, reg);

  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < given.size(); ++i) by_name[given[i].name] = i;
  for (const std::string& a : agents) {
    auto it = by_name.find(a);
    if (it == by_name.end())
      r.fail(key + ".results", "no result for agent \"" + a + "\" (every scenario agent needs one, matched by name)");
    spec.input.agents.push_back(given[it->second]);
    by_name.erase(it);
  }
  if (!by_name.empty())
    r.fail(key + ".results", "result for \"" + by_name.begin()->first + "\", which is not an agent of the scenario");
  validate_join(spec.input, spec.options, r.file(), r.field(key));
  return spec;
}

Json to_json(const JoinSpec& spec) {
  return Json{{"strategy", spec.options.strategy},
              {"results", spec.results_file.empty() ? Json("inline") : Json(spec.results_file)},
              {"agents_with_results", spec.input.agents.size()},
              {"evidence_items", spec.input.evidence.size()},
              {"compare", spec.compare},
              {"evidence_fetch_ns", spec.evidence_fetch_ns},
              {"max_simulated_tokens", spec.max_simulated_tokens},
              {"context_window", spec.context_window}};
}

}  // namespace ahbm::join
