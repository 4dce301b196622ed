#include "runtime/join/strategy.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <stdexcept>

namespace ahbm::join {

// ---------------------------------------------------------------------------------------
// Serialisation helpers

std::string format_finding(const std::string& label, const std::string& claim, int support,
                           double confidence, const std::vector<int64_t>& evidence_ids) {
  std::string shown = claim;
  std::replace(shown.begin(), shown.end(), '_', ' ');
  char conf[32];
  std::snprintf(conf, sizeof conf, "%.2f", confidence);
  std::string s = label + ": " + shown + "\n";
  if (support > 1) s += "Supported by " + std::to_string(support) + " agents\nMaximum confidence: ";
  else s += "Confidence: ";
  return s + conf + "\nEvidence: " + evidence_list(evidence_ids);
}

std::string claim_key(const std::string& claim) {
  std::string k;
  for (char c : claim) {
    const bool sep = c == ' ' || c == '_' || c == '-' || c == '\t' || c == '\n';
    if (sep) {
      if (!k.empty() && k.back() != ' ') k += ' ';
    } else {
      k += char(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  if (!k.empty() && k.back() == ' ') k.pop_back();
  return k;
}

namespace {

Segment text_segment(const AgentResult& a, const Tokenizer& tok, const std::string& kind) {
  return Segment{a.name, kind, a.text, a.full_text_tokens(tok)};
}

// The agent's compact schema form, or its full text (with the reasons as warnings) when it
// has none: the per-agent rule shared by schema, dedup (for unmergeable agents), pointer and
// hierarchical reducers.
Segment schema_segment(const AgentResult& a, const Tokenizer& tok, std::vector<std::string>& warnings) {
  if (a.schema) {
    std::string t = format_finding("Finding", a.schema->claim, 1, a.schema->confidence, a.schema->evidence_ids);
    const int64_t n = tok.count(t);
    return Segment{a.name, "schema", std::move(t), n};
  }
  if (a.sizes_only && a.schema_tokens) return Segment{a.name, "schema", "", *a.schema_tokens};
  if (a.sizes_only)
    warnings.push_back("agent " + a.name + ": sizes.schema_tokens not given; this agent is joined by its full text");
  warnings.insert(warnings.end(), a.warnings.begin(), a.warnings.end());
  return text_segment(a, tok, "text_fallback");
}

JoinBody full_text(const JoinInput& in, const JoinOptions& opt) {
  JoinBody b;
  for (const auto& a : in.agents) b.segments.push_back(text_segment(a, opt.tokenizer, "full_text"));
  return b;
}

JoinBody schema(const JoinInput& in, const JoinOptions& opt) {
  JoinBody b;
  for (const auto& a : in.agents) b.segments.push_back(schema_segment(a, opt.tokenizer, b.warnings));
  return b;
}

// Note 5.7: agents with the same claim (by claim_key) become one finding with its support
// count, the maximum confidence and the union of their evidence. The best-supported finding
// (ties: higher confidence, then first seen) is the primary one; the others are alternatives.
JoinBody dedup(const JoinInput& in, const JoinOptions& opt) {
  struct Group {
    std::string claim;  // as the first agent wrote it
    std::vector<std::string> agents;
    double max_conf = 0.0;
    std::set<int64_t> ids;
    size_t first = 0;
  };
  JoinBody b;
  std::vector<Group> groups;
  std::map<std::string, size_t> by_key;
  std::vector<Segment> unmerged;
  for (const auto& a : in.agents) {
    if (!a.schema) {
      unmerged.push_back(schema_segment(a, opt.tokenizer, b.warnings));
      continue;
    }
    auto [it, fresh] = by_key.emplace(claim_key(a.schema->claim), groups.size());
    if (fresh) groups.push_back(Group{a.schema->claim, {}, 0.0, {}, groups.size()});
    Group& g = groups[it->second];
    g.agents.push_back(a.name);
    g.max_conf = std::max(g.max_conf, a.schema->confidence);
    g.ids.insert(a.schema->evidence_ids.begin(), a.schema->evidence_ids.end());
  }
  std::sort(groups.begin(), groups.end(), [](const Group& x, const Group& y) {
    if (x.agents.size() != y.agents.size()) return x.agents.size() > y.agents.size();
    if (x.max_conf != y.max_conf) return x.max_conf > y.max_conf;
    return x.first < y.first;
  });
  for (size_t i = 0; i < groups.size(); ++i) {
    const Group& g = groups[i];
    std::string source;
    for (size_t k = 0; k < g.agents.size(); ++k) source += (k ? "+" : "") + g.agents[k];
    std::string t = format_finding(i == 0 ? "Primary finding" : "Alternative", g.claim, int(g.agents.size()),
                                   g.max_conf, std::vector<int64_t>(g.ids.begin(), g.ids.end()));
    const int64_t n = opt.tokenizer.count(t);
    b.segments.push_back(Segment{source, "dedup", std::move(t), n});
  }
  b.segments.insert(b.segments.end(), unmerged.begin(), unmerged.end());
  return b;
}

// Note 5.8: summaries with evidence handles; the framework materialises only the evidence
// the main agent asks for, so the input is summary tokens + tokens of evidence used.
JoinBody pointer(const JoinInput& in, const JoinOptions& opt) {
  JoinBody b = opt.pointer.summaries == "schema" ? schema(in, opt) : dedup(in, opt);
  std::map<int64_t, std::vector<std::string>> cited;  // sorted by id: the draw order below
  for (const auto& a : in.agents) {
    if (!a.schema) continue;
    for (int64_t id : a.schema->evidence_ids) {
      auto& who = cited[id];
      if (!who.empty() && who.back() == a.name) continue;  // one agent citing an id twice
      who.push_back(a.name);
      if (!in.evidence.count(id))
        b.warnings.push_back("agent " + a.name + ": cites evidence E" + std::to_string(id) +
                             ", which is not in the evidence store (the handle cannot be resolved)");
    }
  }
  std::vector<int64_t> wanted = opt.pointer.request;
  if (wanted.empty() && opt.pointer.request_probability) {
    // std::mt19937_64's output sequence is fixed by the C++ standard (unlike the
    // distributions), so the same seed requests the same handles everywhere.
    std::mt19937_64 gen(opt.pointer.seed);
    for (const auto& [id, who] : cited) {
      const double u = double(gen() >> 11) * 0x1.0p-53;
      if (u < *opt.pointer.request_probability && in.evidence.count(id)) wanted.push_back(id);
    }
  }
  for (int64_t id : wanted) {
    auto ev = in.evidence.find(id);
    if (ev == in.evidence.end()) {
      b.warnings.push_back("pointer: requested evidence E" + std::to_string(id) + " is not in the evidence store; not materialised");
      continue;
    }
    std::string t = "E" + std::to_string(id) + ": " + ev->second.text;
    const int64_t n = ev->second.tokens ? *ev->second.tokens : opt.tokenizer.count(t);
    auto c = cited.find(id);
    b.fetches.push_back(EvidenceFetch{id, n, c == cited.end() ? std::vector<std::string>{} : c->second});
    b.segments.push_back(Segment{"E" + std::to_string(id), "evidence", std::move(t), n});
  }
  return b;
}

// Note 5.9: contiguous, balanced groups of branches (sizes differ by at most one), one reducer
// agent per group; the main agent reads the reducers' summaries.
JoinBody hierarchical(const JoinInput& in, const JoinOptions& opt) {
  const auto& h = opt.hierarchical;
  JoinBody b;
  const int n = int(in.agents.size());
  if (n == 0) return b;
  int r = h.reducers > 0 ? h.reducers : (n + h.group_size - 1) / h.group_size;
  if (r > n) {
    b.warnings.push_back("hierarchical: " + std::to_string(r) + " reducers for " + std::to_string(n) +
                         " agents; using " + std::to_string(n) + " (one per agent)");
    r = n;
  }
  int next = 0;
  for (int i = 0; i < r; ++i) {
    ReducerTask t;
    t.name = "reducer" + std::to_string(i);
    const int size = n / r + (i < n % r ? 1 : 0);
    for (int k = 0; k < size; ++k, ++next) {
      const AgentResult& a = in.agents[size_t(next)];
      t.branches.push_back(a.name);
      t.input.push_back(h.reducer_input == "schema" ? schema_segment(a, opt.tokenizer, b.warnings)
                                                    : text_segment(a, opt.tokenizer, "full_text"));
      t.input_tokens += t.input.back().tokens;
    }
    t.output_tokens = h.reducer_output_tokens;
    b.segments.push_back(Segment{t.name, "reducer_summary", "", t.output_tokens});
    b.reducers.push_back(std::move(t));
  }
  return b;
}

// Note 5.10: k learned latent tokens per branch. Counts only: no unchanged model can consume
// them, which the plan states.
JoinBody latent(const JoinInput& in, const JoinOptions& opt) {
  JoinBody b;
  b.requires_trained_model = true;
  b.warnings.push_back("latent: needs a main model trained to consume latent tokens (note 5.10); "
                       "token counts only, not runnable on an unchanged model");
  for (const auto& a : in.agents) b.segments.push_back(Segment{a.name, "latent", "", opt.latent.tokens_per_branch});
  return b;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Registry

JoinStrategyRegistry builtin_join_strategies() {
  JoinStrategyRegistry r;
  r.add("full_text", "every agent's full output (note 5.3, 5.5)", full_text);
  r.add("schema", "compact claim/confidence/evidence serialisation per agent (note 5.6)", schema);
  r.add("dedup", "claims merged across agents: support, max confidence, primary + alternatives (note 5.7)", dedup);
  r.add("pointer", "summaries + evidence handles, evidence materialised on request (note 5.8)", pointer);
  r.add("hierarchical", "reducer agents summarise groups of branches in parallel (note 5.9)", hierarchical);
  r.add("latent", "k latent tokens per branch; needs a trained model (note 5.10)", latent);
  return r;
}

// ---------------------------------------------------------------------------------------
// Options

JoinOptions read_join_options(JsonReader j, const JoinStrategyRegistry& reg) {
  JoinOptions o;
  o.strategy = j.string("strategy", o.strategy, reg.names());
  if (j.has("tokenizer")) {
    JsonReader t = j.object("tokenizer");
    o.tokenizer.bytes_per_token = int(t.integer("bytes_per_token", o.tokenizer.bytes_per_token, 1, 64));
    t.finish();
  }
  if (j.has("pointer")) {
    JsonReader p = j.object("pointer");
    o.pointer.summaries = p.string("summaries", o.pointer.summaries, {"dedup", "schema"});
    if (p.has("request")) {
      o.pointer.request = read_ids(p, "request");
      std::set<int64_t> seen;
      for (size_t i = 0; i < o.pointer.request.size(); ++i)
        if (!seen.insert(o.pointer.request[i]).second)
          p.fail("request[" + std::to_string(i) + "]", "evidence id " + std::to_string(o.pointer.request[i]) +
                                                           " is requested twice");
    }
    if (p.has("request_probability")) {
      if (p.has("request")) p.fail("request_probability", "give either \"request\" or \"request_probability\", not both");
      o.pointer.request_probability = p.number("request_probability", 0.0, 1.0);
    }
    o.pointer.seed = uint64_t(p.integer("seed", int64_t(o.pointer.seed), 0, INT64_MAX));
    p.finish();
  }
  if (j.has("hierarchical")) {
    JsonReader h = j.object("hierarchical");
    if (h.has("reducers") && h.has("group_size"))
      h.fail("group_size", "give either \"reducers\" or \"group_size\", not both");
    o.hierarchical.reducers = int(h.integer("reducers", 0, 1, 4096));
    o.hierarchical.group_size = int(h.integer("group_size", o.hierarchical.group_size, 1, 4096));
    o.hierarchical.reducer_output_tokens =
        h.integer("reducer_output_tokens", o.hierarchical.reducer_output_tokens, 0, kMaxTokens);
    o.hierarchical.reducer_input = h.string("reducer_input", o.hierarchical.reducer_input, {"full_text", "schema"});
    h.finish();
  }
  if (j.has("latent")) {
    JsonReader l = j.object("latent");
    o.latent.tokens_per_branch = l.integer("tokens_per_branch", o.latent.tokens_per_branch, 0, kMaxTokens);
    l.finish();
  }
  j.finish();
  return o;
}

void validate_join(const JoinInput& in, const JoinOptions& opt, const std::string& file,
                   const std::string& join_path) {
  for (size_t i = 0; i < opt.pointer.request.size(); ++i) {
    const int64_t id = opt.pointer.request[i];
    if (in.evidence.count(id)) continue;
    std::string known;
    for (const auto& [k, e] : in.evidence) known += (known.empty() ? "E" : ", E") + std::to_string(k);
    throw InputError(file + ": " + join_path + ".pointer.request[" + std::to_string(i) + "]: evidence id " + std::to_string(id) +
                     " is not in the evidence store (allowed: " + (known.empty() ? "none" : known) + ")");
  }
}

}  // namespace ahbm::join
