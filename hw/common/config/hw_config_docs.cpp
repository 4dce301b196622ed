// The artefacts generated from the parameter table (hw_config.h): the JSON Schema of a config
// file and the parameter table of docs/model.md. `ahbm-sim hw-config --schema|--markdown-table`
// prints them, tools/gen-hw-config.sh writes them, and tests fail when a checked-in copy differs.
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

}  // namespace

Json hw_config_schema() {
  Json s = Json::object();
  s["$schema"] = "https://json-schema.org/draft/2020-12/schema";
  s["title"] = "ahbm-sim hardware configuration";
  s["$comment"] =
      "Generated from the parameter table in hw/common/config/hw_config.h by `ahbm-sim hw-config --schema` "
      "(tools/gen-hw-config.sh); do not edit. Missing fields take their defaults. Relations between fields "
      "(docs/reliability.md) are checked by the simulator, not here.";
  for (const HwSection& sec : hw_sections()) {
    Json& n = node_at(s, sec.path);
    n["type"] = "object";
    n["description"] = sec.doc;
    n["additionalProperties"] = false;
    n["patternProperties"] = Json{{"^_", true}};  // "_comment" and friends
    if (!n.contains("properties")) n["properties"] = Json::object();
  }
  for (const HwParam& p : hw_params()) {
    Json& n = node_at(s, p.path);
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
  }
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

}  // namespace ahbm
