#include "runtime/scenario.h"

#include <set>

namespace ahbm {

int Scenario::total_rows() const {
  int n = 0;
  for (const auto& a : agents) n += a.new_tokens;
  return n;
}

Scenario parse_scenario(const Json& j, const std::string& file) {
  Scenario s;
  JsonReader r(j, file);
  s.name = r.string("name");
  if (s.name.empty()) r.fail("name", "must not be empty");
  s.description = r.string("description", "");
  {
    JsonReader m = r.object("model");
    s.model.head_dim = int(m.integer("head_dim", 1, 1024));
    m.finish();
  }
  s.shared_prefix_tokens = int(r.integer("shared_prefix_tokens", 0, 1 << 24));
  s.seed = uint64_t(r.integer("seed", 1, 0, INT64_MAX));
  std::set<std::string> names;
  for (JsonReader a : r.array_of_objects("agents", 1, 4096)) {
    AgentSpec spec;
    spec.name = a.identifier("name");
    if (!names.insert(spec.name).second) a.fail("name", "\"" + spec.name + "\" must be unique among agents");
    spec.new_tokens = int(a.integer("new_tokens", 1, 1 << 16));
    a.finish();
    s.agents.push_back(spec);
  }
  r.finish();
  return s;
}

Scenario load_scenario(const std::string& path) { return parse_scenario(load_json_file(path), path); }

Json to_json(const Scenario& s) {
  Json agents = Json::array();
  for (const auto& a : s.agents) agents.push_back({{"name", a.name}, {"new_tokens", a.new_tokens}});
  return Json{{"name", s.name},
              {"description", s.description},
              {"model", {{"head_dim", s.model.head_dim}}},
              {"shared_prefix_tokens", s.shared_prefix_tokens},
              {"seed", s.seed},
              {"agents", agents}};
}

}  // namespace ahbm
