#pragma once
// Latency statistics from the span recorder, for summary.json ("latency"):
//  - per phase: its extent, the distribution (p50/p90/p99) of the agents' latencies in it and
//    of the span durations of every activity and activity class;
//  - per agent: the distribution of its latencies over the phases (steps) it took part in.
// An agent's latency in a phase is the duration of its "agent.<name>" span, recorded by the
// driver: from the phase's start until the agent's last O row is back at the host.
#include <ostream>
#include <string>

#include <map>

#include "hw/common/base/json_reader.h"
#include "hw/common/observe/span_recorder.h"
#include "runtime/report/percentiles.h"

namespace ahbm::report {

// The class an activity is charged to in latency breakdowns (plots, trace.json "cat"):
// "Q multicast", "KV DMA", "local GEMM", "softmax", "reduction", "join", "agent" or "other".
// Every activity of a phase named "join" is charged to "join".
std::string activity_class(const std::string& activity, const std::string& phase);

bool is_agent_component(const std::string& component);
// Spans the runtime adds to annotate the schedule (agent.*, runtime.* : steps, KV heads served
// by each group) rather than hardware work: kept out of busy times and activity breakdowns.
bool is_annotation_component(const std::string& component);

// Simulated time in ns, rounded to the picosecond so that 1790 ns prints as 1790, not
// 1790.0000000000002 (sc_time::to_seconds() goes through a double of seconds).
double to_ns(const sc_core::sc_time& t);

// summary.json "latency": per phase its extent and the distributions of its agents' latencies
// and of its hardware spans' durations by activity and by class; per agent (by name, without
// "agent.") its latencies' distribution and their sum per phase.
struct PhaseLatency {
  double start_ns = 0, end_ns = 0, ns = 0;
  Distribution agent_latency;
  std::map<std::string, Distribution> span_ns_by_activity, span_ns_by_class;
};
struct AgentLatency {
  Distribution latency;
  std::map<std::string, double> by_phase_ns;
};
struct LatencySummary {
  std::map<std::string, PhaseLatency> phases;
  std::map<std::string, AgentLatency> agents;
};

LatencySummary latency_summary(const SpanRecorder& spans);
Json to_json(const LatencySummary& l);

// latency.csv: one row per span, by start time (ties in recording order):
// start_ns,end_ns,component,activity,phase,agent,rows,bytes with times to the picosecond.
void write_latency_csv(std::ostream& os, const SpanRecorder& spans);

}  // namespace ahbm::report
