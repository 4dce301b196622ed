#pragma once
// Sub-agent results as data (docs/join.md, AHBM note section 5.6): each agent's result is
// either the agent's own JSON output (claim, confidence, evidence_ids, free text and its
// token count) or token counts only. A result that does not follow the schema is not an
// error of the scenario but of the sub-agent: it is recorded as a warning naming the agent
// and the field, and that agent is joined by its full text instead.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hw/common/base/json_reader.h"

namespace ahbm::join {

// Largest token count accepted anywhere (2^30: far beyond any context window).
constexpr int64_t kMaxTokens = int64_t(1) << 30;

// Token count of a text when no count is given: ceil(UTF-8 bytes / bytes_per_token).
// 4 bytes per token is the usual rule of thumb for English text under BPE tokenizers.
struct Tokenizer {
  int bytes_per_token = 4;
  int64_t count(const std::string& text) const;
};

// The note's compact result schema (section 5.6).
struct SchemaResult {
  std::string claim;
  double confidence = 0.0;
  std::vector<int64_t> evidence_ids;
};

struct AgentResult {
  std::string name;
  // The agent's full output. When a JSON result has no "text", its full output is the JSON
  // itself (compact dump); a string result that is not JSON is its own text.
  std::string text;
  std::optional<int64_t> text_tokens;  // given count; otherwise the tokenizer counts `text`
  std::optional<SchemaResult> schema;  // set only when the result passed validation
  // Sizes-only agents (no text, no schema): counts of the compact forms, when known.
  bool sizes_only = false;
  std::optional<int64_t> schema_tokens;
  std::vector<std::string> warnings;  // why `schema` is empty; each names the agent and field

  int64_t full_text_tokens(const Tokenizer& tok) const;
};

struct Evidence {
  int64_t id = 0;
  std::string text;
  std::optional<int64_t> tokens;  // given count; otherwise the tokenizer counts the segment
};

struct JoinInput {
  std::vector<AgentResult> agents;
  std::map<int64_t, Evidence> evidence;  // the evidence store handles point into (note 5.8)

  std::vector<std::string> warnings() const;  // every agent's validation warnings, in order
};

// Reads one agent's "result" or "sizes" field from the agent's JSON object (exactly one of
// them must be present: a missing or doubled field is an InputError of the scenario). A
// malformed "result" never throws: it yields warnings and an empty `schema`.
AgentResult read_agent_result(JsonReader& agent, const std::string& name);
// Reads the optional "evidence" array [{id, text?, tokens?}] (ids unique, text or tokens given).
std::map<int64_t, Evidence> read_evidence(JsonReader& r);

// Reads `key` as an array of evidence ids (integers >= 0); the message names the element.
std::vector<int64_t> read_ids(JsonReader& r, const std::string& key);
// "E17, E24" (handles as the note writes them); "none" for no ids.
std::string evidence_list(const std::vector<int64_t>& ids);

}  // namespace ahbm::join
