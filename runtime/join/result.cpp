#include "runtime/join/result.h"


namespace ahbm::join {

int64_t Tokenizer::count(const std::string& text) const {
  const int64_t b = int64_t(text.size());
  return (b + bytes_per_token - 1) / bytes_per_token;
}

int64_t AgentResult::full_text_tokens(const Tokenizer& tok) const {
  return text_tokens ? *text_tokens : tok.count(text);
}

std::vector<std::string> JoinInput::warnings() const {
  std::vector<std::string> out;
  for (const auto& a : agents) out.insert(out.end(), a.warnings.begin(), a.warnings.end());
  return out;
}

std::string evidence_list(const std::vector<int64_t>& ids) {
  if (ids.empty()) return "none";
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? ", E" : "E") + std::to_string(ids[i]);
  return s;
}

std::vector<int64_t> read_ids(JsonReader& r, const std::string& key) {
  const Json& v = r.raw(key);
  if (!v.is_array()) r.fail(key, "value " + v.dump() + " must be a JSON array of evidence ids (integers >= 0)");
  std::vector<int64_t> ids;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number_integer() || v[i].get<int64_t>() < 0)
      r.fail(key + "[" + std::to_string(i) + "]",
             "value " + v[i].dump() + " is not an evidence id (allowed: integers >= 0)");
    ids.push_back(v[i].get<int64_t>());
  }
  return ids;
}

namespace {

// Validates the schema fields of one result object. Fields are read in an order that keeps
// what a text fallback needs (text, text_tokens) even when a later field is broken.
void read_schema(const Json& obj, const std::string& file, const std::string& path, AgentResult& a) {
  JsonReader r(obj, file, path);
  if (r.has("text")) a.text = r.string("text");
  if (r.has("text_tokens")) a.text_tokens = r.integer("text_tokens", 0, kMaxTokens);
  SchemaResult s;
  s.claim = r.string("claim");
  if (s.claim.find_first_not_of(" \t\n_-") == std::string::npos) r.fail("claim", "must not be empty");
  s.confidence = r.number("confidence", 0.0, 1.0);
  s.evidence_ids = read_ids(r, "evidence_ids");
  r.finish();  // the schema is closed: an unexpected key is a malformed result too
  a.schema = s;
}

}  // namespace

AgentResult read_agent_result(JsonReader& agent, const std::string& name) {
  AgentResult a;
  a.name = name;
  const bool has_result = agent.has("result"), has_sizes = agent.has("sizes");
  if (has_result == has_sizes)
    agent.fail("result", std::string(has_result ? "both" : "neither") +
                             " \"result\" and \"sizes\" given (give exactly one: \"result\" = the "
                             "sub-agent's JSON output, \"sizes\" = token counts only)");
  if (has_sizes) {
    JsonReader s = agent.object("sizes");
    a.sizes_only = true;
    a.text_tokens = s.integer("text_tokens", 0, kMaxTokens);
    if (s.has("schema_tokens")) a.schema_tokens = s.integer("schema_tokens", 0, kMaxTokens);
    s.finish();
    return a;
  }
  const Json& raw = agent.raw("result");
  const std::string path = agent.field("result");
  auto warn = [&](const std::string& what) {
    a.warnings.push_back("agent " + name + ": " + what + "; this agent is joined by its full text");
  };
  Json parsed;
  const Json* obj = &raw;
  if (raw.is_string()) {
    // The sub-agent's literal output, which should be JSON text.
    a.text = raw.get<std::string>();
    try {
      parsed = Json::parse(a.text);
      obj = &parsed;
    } catch (const Json::parse_error& e) {
      warn(agent.file() + ": " + path + ": not valid JSON (" + e.what() + ")");
      return a;
    }
  } else {
    a.text = raw.dump();
  }
  try {
    read_schema(*obj, agent.file(), path, a);
  } catch (const InputError& e) {
    warn(e.what());
  }
  return a;
}

std::map<int64_t, Evidence> read_evidence(JsonReader& r) {
  std::map<int64_t, Evidence> store;
  if (!r.has("evidence")) return store;
  for (JsonReader e : r.array_of_objects("evidence", 0, 1 << 20)) {
    Evidence ev;
    ev.id = e.integer("id", 0, INT64_MAX);
    if (store.count(ev.id)) e.fail("id", "evidence id " + std::to_string(ev.id) + " is given twice (ids must be unique)");
    ev.text = e.string("text", "");
    if (e.has("tokens")) ev.tokens = e.integer("tokens", 0, kMaxTokens);
    if (ev.text.empty() && !ev.tokens) e.fail("text", "give the evidence \"text\", its \"tokens\" count, or both");
    e.finish();
    store[ev.id] = ev;
  }
  return store;
}

}  // namespace ahbm::join
