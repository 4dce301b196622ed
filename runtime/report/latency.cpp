#include "runtime/report/latency.h"

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
      {"link_xfer", "reduction"}, {"normalise", "reduction"},       {"attention", "agent"}};
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

Json latency_summary(const SpanRecorder& spans) {
  struct PhaseAcc {
    double start = 0, end = 0;
    bool seen = false;
    std::vector<double> agents;
    std::map<std::string, std::vector<double>> activities, classes;
  };
  std::map<std::string, PhaseAcc> phases;
  std::map<std::string, std::vector<double>> agents;
  std::map<std::string, std::map<std::string, double>> agent_by_phase;
  for (const Span& s : spans.spans()) {
    const double a = to_ns(s.start), b = to_ns(s.end);
    const std::string& comp = spans.name(s.component);
    const std::string& phase = spans.name(s.phase);
    const std::string& act = spans.name(s.activity);
    PhaseAcc& p = phases[phase];
    if (!p.seen || a < p.start) p.start = a;
    if (!p.seen || b > p.end) p.end = b;
    p.seen = true;
    if (is_agent_component(comp)) {
      const std::string agent = comp.substr(6);
      p.agents.push_back(b - a);
      agents[agent].push_back(b - a);
      agent_by_phase[agent][phase] += b - a;  // summed over the steps of a phase (decode)
      continue;
    }
    if (is_annotation_component(comp)) continue;
    p.activities[act].push_back(b - a);
    p.classes[activity_class(act, phase)].push_back(b - a);
  }
  Json phases_j = Json::object();
  for (const auto& [name, p] : phases) {
    Json acts = Json::object(), cls = Json::object();
    for (const auto& [k, v] : p.activities) acts[k] = distribution(v);
    for (const auto& [k, v] : p.classes) cls[k] = distribution(v);
    phases_j[name] = {{"start_ns", p.start}, {"end_ns", p.end}, {"ns", p.end - p.start},
                      {"agent_latency", distribution(p.agents)},
                      {"span_ns_by_activity", acts},
                      {"span_ns_by_class", cls}};
  }
  Json agents_j = Json::object();
  for (const auto& [name, v] : agents) {
    Json d = distribution(v);
    d["by_phase_ns"] = agent_by_phase[name];
    agents_j[name] = d;
  }
  return Json{{"percentiles", "linear interpolation between closest ranks (numpy default)"},
              {"phases", phases_j},
              {"agents", agents_j}};
}

}  // namespace ahbm::report
