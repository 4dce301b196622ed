#include "runtime/serve/request_csv.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

#include "hw/common/base/error.h"
#include "hw/common/base/input_file.h"
#include "runtime/serve/csv_rows.h"

namespace ahbm::serve {

namespace {

constexpr int kMaxRounds = 64, kMaxBranches = 4096;  // as a template's rounds and fanout.branches

const std::vector<std::string> kArrival = {"arrived_at", "arrival_timestamp", "arrival_ns"};
const std::vector<std::string> kPrompt = {"num_prefill_tokens", "prompt_size", "prompt_tokens"};
const std::vector<std::string> kOutput = {"num_decode_tokens", "token_size", "output_tokens"};

std::string names(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& n : v) s += (s.empty() ? "" : " | ") + n;
  return s;
}

struct Columns {
  int arrival = -1, prompt = -1, output = -1, session = -1, agent = -1;
  size_t count = 0;
  std::vector<std::string> head;
  std::string arrival_name;
  bool seconds = true;
};

Columns read_columns(std::istream& in, const std::string& path) {
  const std::string expected = "a header naming the columns: " + names(kArrival) + "; " + names(kPrompt) + "; " +
                               names(kOutput) + "; optional session_id, agent_id";
  bool bom = false;
  const std::vector<std::string> head = csv::cells(csv::first_line(in, path, expected, bom));
  Columns c;
  c.count = head.size();
  c.head = head;
  const auto find = [&](const std::vector<std::string>& group, const char* what, bool required) {
    int at = -1;
    for (size_t i = 0; i < head.size(); ++i)
      for (const std::string& n : group)
        if (head[i] == n) {
          if (at >= 0)
            throw InputError(path + ": line 1: columns \"" + head[size_t(at)] + "\" and \"" + n + "\" both give the " +
                             what + " (allowed: exactly one of " + names(group) + ")");
          at = int(i);
        }
    if (at < 0 && required) {
      std::string line;
      for (const std::string& h : head) line += (line.empty() ? "" : ",") + h;
      throw InputError(path + ": line 1: no " + what + " column (expected one of " + names(group) + "; the header is \"" +
                       printable(line) + "\")");
    }
    return at;
  };
  c.arrival = find(kArrival, "arrival time", true);
  c.prompt = find(kPrompt, "prompt tokens", true);
  c.output = find(kOutput, "output tokens", true);
  c.session = find({"session_id"}, "session id", false);
  c.agent = find({"agent_id"}, "agent id", false);
  if (c.agent >= 0 && c.session < 0)
    throw InputError(path + ": line 1: column agent_id needs a session_id column (agents are branches of a session's "
                            "rounds)");
  c.arrival_name = head[size_t(c.arrival)];
  c.seconds = c.arrival_name != "arrival_ns";
  return c;
}

double arrival_value(const std::string& cell, const Columns& c, const std::string& at) {
  char* end = nullptr;
  const double v = std::strtod(cell.c_str(), &end);
  if (cell.empty() || *end != '\0' || !std::isfinite(v) || v < 0)
    throw InputError(at + ": " + c.arrival_name + " \"" + printable(cell) + "\" must be a number >= 0 (" +
                     (c.seconds ? "seconds" : "ns") + ")");
  return v;
}

}  // namespace

std::vector<RequestRow> parse_request_csv(std::istream& in, const std::string& path, int max_rows) {
  const Columns c = read_columns(in, path);
  std::vector<RequestRow> rows;
  double first = 0;
  std::string line;
  for (int n = 2; int(rows.size()) < max_rows && std::getline(in, line); ++n) {
    line = csv::trim(line);
    if (line.empty()) continue;
    std::vector<std::string> col = csv::cells(line);
    if (line.back() == ',') col.push_back("");  // an empty last cell (an optional id left out)
    const std::string at = path + ": line " + std::to_string(n);
    if (col.size() != c.count)
      throw InputError(at + ": expected " + std::to_string(c.count) + " columns (as the header), got " +
                       std::to_string(col.size()));
    const double t = arrival_value(col[size_t(c.arrival)], c, at);
    if (rows.empty()) first = t;
    const double after = t - first;
    RequestRow r;
    r.line = n;
    r.arrival_ns = c.seconds ? after * 1e9 : after;
    csv::check_arrival(at, c.arrival_name, col[size_t(c.arrival)], c.seconds ? after : after / 1e9, r.arrival_ns,
                       rows.empty() ? -1.0 : rows.back().arrival_ns);
    r.prompt_tokens = csv::token_count(col[size_t(c.prompt)], c.head[size_t(c.prompt)], at);
    r.output_tokens = csv::token_count(col[size_t(c.output)], c.head[size_t(c.output)], at);
    if (c.session >= 0) r.session = col[size_t(c.session)];
    if (c.agent >= 0) r.agent = col[size_t(c.agent)];
    rows.push_back(r);
  }
  if (rows.empty()) throw InputError(path + ": no request rows after the header");
  return rows;
}

std::vector<RequestRow> read_request_csv(const std::string& path, int max_rows) {
  check_input_file(path, "a request trace CSV");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the request trace CSV");
  return parse_request_csv(in, path, max_rows);
}

std::vector<WorkflowSpec> request_workflows(const std::vector<RequestRow>& rows, const std::string& path,
                                            int plain_tmpl, int session_tmpl) {
  std::vector<WorkflowSpec> out;
  std::map<std::string, size_t> session_of;  // session id -> index into out
  std::vector<std::set<std::string>> round_agents;  // per workflow: the agents of its last round
  std::vector<int> first_line;                      // per workflow: its first row's line
  for (const RequestRow& r : rows) {
    const auto it = r.session.empty() ? session_of.end() : session_of.find(r.session);
    if (it == session_of.end()) {  // a new workflow: a plain request until a second row joins it
      WorkflowSpec s;
      s.id = int(out.size());
      s.arrival_ns = r.arrival_ns;
      s.tmpl = plain_tmpl;
      s.prompt_tokens = r.prompt_tokens;
      s.answer_tokens = r.output_tokens;
      if (!r.session.empty()) session_of[r.session] = out.size();
      out.push_back(s);
      round_agents.emplace_back();
      first_line.push_back(r.line);
      continue;
    }
    WorkflowSpec& s = out[it->second];
    std::set<std::string>& agents = round_agents[it->second];
    const std::string at = path + ": line " + std::to_string(r.line) + ": session_id \"" + printable(r.session) + "\"";
    s.tmpl = session_tmpl;
    if (s.rounds.empty() || r.agent.empty() || agents.count(r.agent)) {  // a new round
      if (s.rounds.size() >= size_t(kMaxRounds))
        throw InputError(at + " has more than " + std::to_string(kMaxRounds) + " rounds (allowed: [1, " +
                         std::to_string(kMaxRounds) + "] rounds after the session's first row, line " +
                         std::to_string(first_line[it->second]) + ")");
      s.rounds.emplace_back();
      agents.clear();
    } else if (s.rounds.back().size() >= size_t(kMaxBranches)) {
      throw InputError(at + " has more than " + std::to_string(kMaxBranches) + " agents in a round (allowed: [1, " +
                       std::to_string(kMaxBranches) + "])");
    }
    if (!r.agent.empty()) agents.insert(r.agent);
    s.rounds.back().push_back({r.prompt_tokens, r.output_tokens});
  }
  for (WorkflowSpec& s : out) {
    if (s.rounds.empty()) continue;
    s.join_first = int(s.rounds.front().size());
    for (size_t k = 1; k < s.rounds.size(); ++k)
      if (s.rounds[k].size() != s.rounds.front().size())
        throw InputError(path + ": line " + std::to_string(first_line[size_t(s.id)]) + ": the session of workflow " +
                         std::to_string(s.id) + " has rounds of " + std::to_string(s.rounds.front().size()) + " and " +
                         std::to_string(s.rounds[k].size()) + " agents (round " + std::to_string(k) +
                         "); every round of a session must have the same number of agents (the join waits for one "
                         "count per workflow)");
  }
  return out;
}

}  // namespace ahbm::serve
