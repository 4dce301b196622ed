#include "runtime/report/latency.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <vector>

#include "runtime/report/percentiles.h"

namespace ahbm::report {

std::string activity_class(const std::string& activity, const std::string& phase) {
  static const std::map<std::string, std::string> classes = {
      {"q_load", "Q multicast"},  {"wait_q_buffer", "Q multicast"}, {"multicast", "Q multicast"},
      {"q_write", "Q multicast"}, {"q_read", "Q multicast"},        {"dma_kv", "KV DMA"},
      {"gemm_qk", "local GEMM"},  {"gemm_pv", "local GEMM"},        {"softmax", "softmax"},
      {"send_state", "reduction"}, {"merge", "reduction"},          {"xcube_merge", "reduction"},
      {"link_xfer", "reduction"}, {"normalise", "reduction"},       {"o_return", "reduction"},
      {"attention", "agent"}};
  if (activity == "attention") return "agent";
  if (phase == "join" || activity.rfind("join", 0) == 0) return "join";
  auto it = classes.find(activity);
  return it == classes.end() ? "other" : it->second;
}

double to_ns(const sc_core::sc_time& t) { return std::round(t.to_seconds() * 1e12) / 1e3; }

bool is_agent_component(const std::string& component) { return component.rfind("agent.", 0) == 0; }
bool is_annotation_component(const std::string& component) {
  return is_agent_component(component) || component.rfind("runtime.", 0) == 0;
}

LatencySummary latency_summary(const SpanRecorder& spans) {
  struct PhaseAcc {
    double start = 0, end = 0;
    bool seen = false;
    Samples agents;
    std::map<int, Samples> activities;  // by activity id
    std::map<std::string, Samples> classes;
    std::vector<Samples*> activity_of, class_of;  // by activity id: where its spans go
  };
  // Accumulated by interned id (a long run has millions of spans: no name lookups per span),
  // then keyed by name below; each list gets its samples in span order, as always.
  std::map<int, PhaseAcc> by_phase;
  std::vector<PhaseAcc*> phase_of;                        // by phase id
  std::map<int, Samples> by_agent;                        // agent component id -> latencies
  std::map<int, std::map<int, double>> agent_phase;       // agent component id -> phase id -> ns
  std::vector<char> comp_kind;                            // by component id: 'a' agent, 'r' other annotation, 'h' hardware
  for (const Span& s : spans.spans()) {
    const double a = to_ns(s.start), b = to_ns(s.end);
    if (size_t(s.component) >= comp_kind.size()) comp_kind.resize(size_t(s.component) + 1, 0);
    char& kind = comp_kind[size_t(s.component)];
    if (!kind) {
      const std::string& comp = spans.name(s.component);
      kind = is_agent_component(comp) ? 'a' : is_annotation_component(comp) ? 'r' : 'h';
    }
    if (size_t(s.phase) >= phase_of.size()) phase_of.resize(size_t(s.phase) + 1, nullptr);
    if (!phase_of[size_t(s.phase)]) phase_of[size_t(s.phase)] = &by_phase[s.phase];
    PhaseAcc& p = *phase_of[size_t(s.phase)];
    if (!p.seen || a < p.start) p.start = a;
    if (!p.seen || b > p.end) p.end = b;
    p.seen = true;
    if (kind == 'a') {
      p.agents.push_back(b - a);
      by_agent[s.component].push_back(b - a);
      agent_phase[s.component][s.phase] += b - a;  // summed over the steps of a phase (decode)
      continue;
    }
    if (kind == 'r') continue;
    if (size_t(s.activity) >= p.activity_of.size()) {
      p.activity_of.resize(size_t(s.activity) + 1, nullptr);
      p.class_of.resize(size_t(s.activity) + 1, nullptr);
    }
    if (!p.activity_of[size_t(s.activity)]) {
      p.activity_of[size_t(s.activity)] = &p.activities[s.activity];
      p.class_of[size_t(s.activity)] = &p.classes[activity_class(spans.name(s.activity), spans.name(s.phase))];
    }
    p.activity_of[size_t(s.activity)]->push_back(b - a);
    p.class_of[size_t(s.activity)]->push_back(b - a);
  }
  LatencySummary out;
  for (auto& [id, p] : by_phase) {
    PhaseLatency& l = out.phases[spans.name(id)];
    l.start_ns = p.start;
    l.end_ns = p.end;
    l.ns = p.end - p.start;
    l.agent_latency = distribution_sorting(p.agents);
    for (auto& [k, v] : p.activities) l.span_ns_by_activity[spans.name(k)] = distribution_sorting(v);
    for (auto& [k, v] : p.classes) l.span_ns_by_class[k] = distribution_sorting(v);
  }
  for (auto& [id, v] : by_agent) {
    AgentLatency& a = out.agents[spans.name(id).substr(6)];
    a.latency = distribution_sorting(v);
    for (const auto& [ph, ns] : agent_phase[id]) a.by_phase_ns[spans.name(ph)] = ns;
  }
  return out;
}

Json to_json(const LatencySummary& l) {
  const auto each = [](const std::map<std::string, Distribution>& m) {
    Json j = Json::object();
    for (const auto& [k, d] : m) j[k] = to_json(d);
    return j;
  };
  Json phases = Json::object(), agents = Json::object();
  for (const auto& [name, p] : l.phases)
    phases[name] = {{"start_ns", p.start_ns}, {"end_ns", p.end_ns}, {"ns", p.ns},
                    {"agent_latency", to_json(p.agent_latency)},
                    {"span_ns_by_activity", each(p.span_ns_by_activity)},
                    {"span_ns_by_class", each(p.span_ns_by_class)}};
  for (const auto& [name, a] : l.agents) {
    Json d = to_json(a.latency);
    d["by_phase_ns"] = a.by_phase_ns;
    agents[name] = d;
  }
  return Json{{"percentiles", "linear interpolation between closest ranks (numpy default)"},
              {"phases", phases},
              {"agents", agents}};
}

void write_latency_csv(std::ostream& os, const SpanRecorder& spans) {
  std::vector<const Span*> order;
  order.reserve(spans.spans().size());
  for (const Span& s : spans.spans()) order.push_back(&s);
  std::stable_sort(order.begin(), order.end(), [](const Span* a, const Span* b) { return a->start < b->start; });
  // Times as to_ns() gives them, printed with three decimals from integer picoseconds (what
  // "%.3f" of the rounded double prints, without formatting a double per field).
  const auto ns3 = [](char* p, const sc_core::sc_time& t) {
    const long long ps = std::llround(t.to_seconds() * 1e12);
    char* e = std::to_chars(p, p + 24, ps / 1000).ptr;
    const long long frac = ps % 1000;
    *e++ = '.';
    *e++ = char('0' + frac / 100);
    *e++ = char('0' + frac / 10 % 10);
    *e++ = char('0' + frac % 10);
    return int(e - p);
  };
  const auto integer = [](std::string& out, int64_t v) {
    char b[24];
    out.append(b, size_t(std::to_chars(b, b + sizeof b, v).ptr - b));
  };
  std::string buf;
  buf.reserve(1 << 16);
  buf += "start_ns,end_ns,component,activity,phase,agent,rows,bytes\n";
  char num[32];
  for (const Span* s : order) {
    buf.append(num, size_t(ns3(num, s->start)));
    buf += ',';
    buf.append(num, size_t(ns3(num, s->end)));
    buf += ',';
    buf += spans.name(s->component);
    buf += ',';
    buf += spans.name(s->activity);
    buf += ',';
    buf += spans.name(s->phase);
    buf += ',';
    buf += spans.name(s->agent);
    buf += ',';
    integer(buf, s->rows);
    buf += ',';
    integer(buf, s->bytes);
    buf += '\n';
    if (buf.size() > (1u << 16) - 512) {
      os.write(buf.data(), std::streamsize(buf.size()));
      buf.clear();
    }
  }
  os.write(buf.data(), std::streamsize(buf.size()));
}

}  // namespace ahbm::report
