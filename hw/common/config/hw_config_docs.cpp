// The artefacts generated from the parameter table (hw_config.h): the JSON Schema of a config
// file and the parameter table of docs/model.md. `ahbm-sim hw-config --schema|--markdown-table`
// prints them, tools/gen-hw-config.sh writes them, and tests fail when a checked-in copy differs.
#include <algorithm>
#include <sstream>

#include "hw/common/config/hw_config.h"

namespace ahbm {

namespace {

// What a value may be, as the parser's messages print it.
std::string allowed_text(const HwParam& p) {
  const ParamAllowed& a = p.allowed;
  switch (p.type) {
    case ParamType::integer: return range_text(int64_t(a.lo), int64_t(a.hi));
    case ParamType::number: return range_text(a.lo, a.hi);
    default: break;
  }
  if (a.values.empty()) return a.note;
  std::string s;
  for (const auto& v : a.values) s += (s.empty() ? "" : ", ") + v;
  return s;
}

// How the value acts on timing (the table's SlowerWhen and clock_scaled).
std::string timing_text(const ParamAllowed& a) {
  std::string t = a.slower == SlowerWhen::larger ? "slower when larger" : a.slower == SlowerWhen::smaller ? "slower when smaller" : "";
  if (a.scaled) t += "; scaled by a power cap";
  return t;
}

std::string default_text(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// A markdown cell: a '|' would end it.
std::string cell(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

Json& node_at(Json& schema, const std::string& path) {
  Json* n = &schema;
  std::istringstream in(path);
  for (std::string seg; std::getline(in, seg, '.');) n = &(*n)["properties"][seg];
  return *n;
}

// The schema of one parameter's value.
Json param_schema(const HwParam& p) {
  Json n = Json::object();
  switch (p.type) {
    case ParamType::integer:
      n["type"] = "integer";
      n["minimum"] = int64_t(p.allowed.lo);
      n["maximum"] = int64_t(p.allowed.hi);
      break;
    case ParamType::number:
      n["type"] = "number";
      n["minimum"] = p.allowed.lo;
      n["maximum"] = p.allowed.hi;
      break;
    case ParamType::boolean: n["type"] = "boolean"; break;
    case ParamType::string:
      n["type"] = "string";
      if (!p.allowed.values.empty()) n["enum"] = p.allowed.values;
      break;
    case ParamType::object: n["type"] = "object"; break;
  }
  n["default"] = p.default_value;
  n["description"] = p.meaning + " [" + p.unit + "]" + (p.allowed.note.empty() ? "" : "; allowed: " + p.allowed.note);
  n["$comment"] = "why this default: " + p.source;
  return n;
}

// noc.params when noc.model names `m`: the model's declared keys and nothing else. The default
// model (no noc.model given) is matched by its name's `if` alone.
Json model_params_rule(const PluginParams& m, const std::string& default_model) {
  Json props = Json::object();
  for (const HwParam& p : m.params) props[p.path] = param_schema(p);
  Json cond = {{"properties", {{"model", {{"const", m.name}}}}}};
  if (m.name != default_model) cond["required"] = Json::array({"model"});
  return {{"if", cond},
          {"then", {{"properties", {{"params", {{"type", "object"},
                                                 {"properties", props},
                                                 {"additionalProperties", false},
                                                 {"patternProperties", Json{{"^_", true}}}}}}}}}};
}

}  // namespace

Json hw_config_schema(const std::vector<PluginParams>& noc_models, const std::vector<PluginParams>& system_models) {
  Json s = Json::object();
  s["$schema"] = "https://json-schema.org/draft/2020-12/schema";
  s["title"] = "ahbm-sim hardware configuration";
  s["$comment"] =
      "Generated from the parameter table in hw/common/config/hw_config.h and the NoC models' parameter tables "
      "(hw/noc) and the system networks' (hw/system) by `ahbm-sim hw-config --schema` (tools/gen-hw-config.sh); do not edit. Missing fields take their "
      "defaults. Relations between fields (docs/reliability.md) are checked by the simulator, not here.";
  for (const HwSection& sec : hw_sections()) {
    Json& n = node_at(s, sec.path);
    n["type"] = "object";
    n["description"] = sec.doc;
    n["additionalProperties"] = false;
    n["patternProperties"] = Json{{"^_", true}};  // "_comment" and friends
    if (!n.contains("properties")) n["properties"] = Json::object();
  }
  for (const HwParam& p : hw_params()) node_at(s, p.path) = param_schema(p);
  // A plug-in's params, checked against the rows of the model its object names.
  const auto add_model_rules = [&s](const std::string& path, const std::vector<PluginParams>& models,
                                    const std::string& default_model) {
    Json& n = node_at(s, path);
    for (const PluginParams& m : models)
      if (!m.params.empty()) n["allOf"].push_back(model_params_rule(m, default_model));
  };
  add_model_rules("noc", noc_models, NocConfig{}.model);
  add_model_rules("system.network", system_models, SystemNetworkConfig{}.model);
  return s;
}

std::string hw_config_markdown_table() {
  std::string t =
      "| field | meaning | unit | default | allowed | timing | why this default |\n|---|---|---|---|---|---|---|\n";
  for (const HwParam& p : hw_params()) {
    if (p.test_only) continue;  // fault injection: docs/reliability.md
    t += "| `" + p.path + "` | " + cell(p.meaning) + " | " + cell(p.unit) + " | " + cell(default_text(p.default_value)) +
         " | " + cell(allowed_text(p)) + " | " + cell(timing_text(p.allowed)) + " | " + cell(p.source) + " |\n";
  }
  return t;
}

std::string plugin_params_markdown_table(const std::vector<PluginParams>& models) {
  // One row per distinct declaration, in order of first appearance (a key's declarations together),
  // with the models declaring it.
  struct Row {
    const HwParam* p;
    std::string text;  // the columns after `models`
    std::string models;
  };
  std::vector<Row> rows;
  for (const PluginParams& m : models)
    for (const HwParam& p : m.params) {
      const std::string text = cell(p.meaning) + " | " + cell(p.unit) + " | " + cell(default_text(p.default_value)) +
                               " | " + cell(allowed_text(p)) + " | " + cell(timing_text(p.allowed)) + " | " +
                               cell(p.source);
      auto it = std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r.p->path == p.path && r.text == text; });
      if (it != rows.end()) {
        it->models += ", " + m.name;
        continue;
      }
      // A key's other declarations (another default) sit right below its first.
      auto last = std::find_if(rows.rbegin(), rows.rend(), [&](const Row& r) { return r.p->path == p.path; });
      rows.insert(last == rows.rend() ? rows.end() : last.base(), {&p, text, m.name});
    }
  std::string t =
      "| param | models | meaning | unit | default | allowed | timing | why this default |\n"
      "|---|---|---|---|---|---|---|---|\n";
  for (const Row& r : rows) t += "| `" + r.p->path + "` | " + r.models + " | " + r.text + " |\n";
  return t;
}

}  // namespace ahbm
