#include "runtime/join/report.h"

#include <cstdio>
#include <map>
#include <sstream>

namespace ahbm::join {

namespace {

Json shape_json(const PrefillShape& s) {
  return Json{{"prefix_tokens", s.prefix_tokens},
              {"new_tokens", s.new_tokens},
              {"q_rows_per_kv_head", s.q_rows_per_kv_head},
              {"q_rows_total", s.q_rows_total},
              {"mask", "full over the prefix, causal over the new tokens"},
              {"visible_pairs_per_q_head", s.visible_pairs_per_q_head},
              {"attention_flops", s.attention_flops},
              {"new_kv_bytes", s.new_kv_bytes},
              {"context_tokens", s.context_tokens},
              {"kv_read_per_decode_token_bytes", s.kv_read_per_decode_token_bytes}};
}

Json optional_ns(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

std::string cell(const Json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

// RFC 4180 quoting, needed only if a registered strategy name has a comma or quote.
std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string mib(const Json& v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v.get<double>() / (1024.0 * 1024.0));
  return b;
}

}  // namespace

std::vector<std::pair<std::string, Json>> metric_columns(const JoinPlan& p) {
  return {
      {"strategy", p.strategy},
      {"join_input_tokens", p.join_tokens},
      {"segments", p.body.segments.size()},
      {"q_rows_per_kv_head", p.main.q_rows_per_kv_head},
      {"attention_flops", p.main.attention_flops},
      {"new_kv_bytes", p.main.new_kv_bytes},
      {"kv_read_per_decode_token_bytes", p.main.kv_read_per_decode_token_bytes},
      {"kv_read_added_per_decode_token_bytes", p.main.kv_read_added_per_decode_token_bytes},
      {"context_tokens", p.main.context_tokens},
      {"context_window_fraction", p.main.context_window_fraction < 0 ? Json(nullptr)
                                                                      : Json(p.main.context_window_fraction)},
      {"reducers", p.body.reducers.size()},
      {"reducer_input_tokens", p.reducer_input_tokens},
      {"reducer_output_tokens", p.reducer_output_tokens},
      {"reducer_max_input_tokens", p.reducer_max_input_tokens},
      {"reducer_kv_bytes", p.reducer_kv_bytes},
      {"reducer_attention_flops", p.reducer_attention_flops},
      {"evidence_fetched", p.body.fetches.size()},
      {"evidence_tokens", p.evidence_tokens},
      {"warnings", p.body.warnings.size()},
      {"requires_trained_model", p.body.requires_trained_model},
      {"continuation_prefill_ns", optional_ns(p.continuation_prefill_ns)},
      {"fan_in_ns", optional_ns(p.fan_in_ns)},
      {"fan_in_energy_j", optional_ns(p.fan_in_energy_j)},
      {"join_energy_j", optional_ns(p.join_energy_j)},
  };
}

Json plan_json(const JoinPlan& p) {
  Json j = Json::object();
  for (auto& [k, v] : metric_columns(p)) j[k] = v;
  j["continuation_prefill"] = shape_json(p.main);
  Json segs = Json::array();
  for (const auto& s : p.body.segments)
    segs.push_back({{"source", s.source}, {"kind", s.kind}, {"tokens", s.tokens}, {"text", s.text}});
  j["segment_list"] = segs;
  Json reds = Json::array();
  for (const auto& r : p.body.reducers)
    reds.push_back({{"name", r.name},
                    {"branches", r.branches},
                    {"input_tokens", r.input_tokens},
                    {"output_tokens", r.output_tokens},
                    {"prefill", shape_json(r.prefill)},
                    {"decode_steps", r.output_tokens},
                    {"decode_kv_read_bytes", r.decode_kv_read_bytes},
                    {"kv_bytes", r.kv_bytes}});
  j["reducer_tasks"] = reds;
  Json fetches = Json::array();
  for (const auto& f : p.body.fetches)
    fetches.push_back({{"id", f.id}, {"tokens", f.tokens}, {"cited_by", f.cited_by}});
  j["evidence_fetches"] = fetches;
  j["warning_list"] = p.body.warnings;
  return j;
}

Json comparison_json(const std::vector<JoinPlan>& plans) {
  Json a = Json::array();
  for (const auto& p : plans) a.push_back(plan_json(p));
  return Json{{"strategies", a}};
}

std::string comparison_table(const std::vector<JoinPlan>& plans) {
  std::ostringstream o;
  char line[256];
  const char* fmt = "%-13s %10s %10s %12s %10s %8s %18s %12s %12s %12s %12s %12s\n";
  std::snprintf(line, sizeof line, fmt, "strategy", "join_tok", "newKV_MiB", "KVrd/dec_MiB", "context", "window",
                "reducers(in->out)", "evidence", "prefill_ns", "fan_in_ns", "fan_in_uJ", "join_uJ");
  o << line;
  for (const auto& p : plans) {
    std::map<std::string, Json> m;
    for (auto& [k, v] : metric_columns(p)) m[k] = v;
    const Json& win = m["context_window_fraction"];
    char winb[32] = "-";
    if (!win.is_null()) std::snprintf(winb, sizeof winb, "%.1f%%", 100.0 * win.get<double>());
    const std::string red = m["reducers"].get<size_t>() == 0
                                ? "-"
                                : cell(m["reducers"]) + "(" + cell(m["reducer_input_tokens"]) + "->" +
                                      cell(m["reducer_output_tokens"]) + ")";
    const std::string ev = cell(m["evidence_fetched"]) + "/" + cell(m["evidence_tokens"]) + "tok";
    auto ns = [&](const char* k) {
      if (m[k].is_null()) return std::string("(sim)");
      char b[32];
      std::snprintf(b, sizeof b, "%.1f", m[k].get<double>());
      return std::string(b);
    };
    auto uj = [&](const char* k) {
      if (m[k].is_null()) return std::string("(sim)");
      char b[32];
      std::snprintf(b, sizeof b, "%.1f", m[k].get<double>() * 1e6);
      return std::string(b);
    };
    std::snprintf(line, sizeof line, fmt, p.strategy.c_str(), cell(m["join_input_tokens"]).c_str(),
                  mib(m["new_kv_bytes"]).c_str(), mib(m["kv_read_per_decode_token_bytes"]).c_str(),
                  cell(m["context_tokens"]).c_str(), winb, red.c_str(), ev.c_str(),
                  ns("continuation_prefill_ns").c_str(), ns("fan_in_ns").c_str(), uj("fan_in_energy_j").c_str(),
                  uj("join_energy_j").c_str());
    o << line;
  }
  for (const auto& p : plans)
    for (const auto& w : p.body.warnings) o << "warning [" << p.strategy << "]: " << w << "\n";
  return o.str();
}

std::string comparison_csv(const std::vector<JoinPlan>& plans) {
  std::ostringstream o;
  bool header = true;
  for (const auto& p : plans) {
    const auto cols = metric_columns(p);
    if (header) {
      for (size_t i = 0; i < cols.size(); ++i) o << (i ? "," : "") << cols[i].first;
      o << "\n";
      header = false;
    }
    for (size_t i = 0; i < cols.size(); ++i) o << (i ? "," : "") << csv_cell(cell(cols[i].second));
    o << "\n";
  }
  return o.str();
}

}  // namespace ahbm::join
