#include "runtime/serve/serve_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "hw/common/observe/trace_sink.h"
#include "runtime/io/provenance.h"
#include "runtime/report/percentiles.h"

namespace ahbm::serve {

namespace {

// Shortest round-trip text of a double (CSV cells); -1 stays -1 (not reached).
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// Fraction of `samples` at or under `target`; 1 for no samples.
double attained(const std::vector<double>& samples, double target) {
  if (samples.empty()) return 1.0;
  return double(std::count_if(samples.begin(), samples.end(), [&](double x) { return x <= target; })) /
         double(samples.size());
}

Json over_time(const std::vector<double>& v) {
  if (v.empty()) return Json{{"count", 0}};
  double sum = 0, mx = v.front();
  for (double x : v) sum += x, mx = std::max(mx, x);
  return Json{{"mean", sum / double(v.size())}, {"max", mx}};
}

// Time-weighted mean and max of a level that holds from each sample to the next, up to end_ns.
Json level_over_time(const std::vector<std::pair<double, int>>& v, double end_ns) {
  double area = 0, mx = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    const double until = i + 1 < v.size() ? v[i + 1].first : end_ns;
    area += double(v[i].second) * (until - v[i].first);
    mx = std::max(mx, double(v[i].second));
  }
  const double span = v.empty() ? 0 : end_ns - v.front().first;
  return Json{{"mean", span > 0 ? area / span : 0.0}, {"max", mx}};
}

Json pool_json(const PoolStats& p, double span_ns) {
  Json j{{"groups", p.groups},
         {"steps", p.steps},
         {"busy_ns", p.busy_ns},
         {"busy_fraction", span_ns > 0 ? p.busy_ns / span_ns : 0.0},
         {"pages_total", p.pages_total},
         {"peak_pages", p.peak_pages}};
  if (!p.operators.is_null()) {  // P-B-D with a whole model: the pool's copy of the weights and its operators
    j["operators"] = p.operators;
    j["memory_map"] = p.memory_map;
  }
  return j;
}

// The pools of a P-B-D stage (its DP): PbdResult keeps each pool's stats only when there are
// several.
size_t pools_of(const std::vector<PoolStats>& each) { return std::max<size_t>(1, each.size()); }

// The P-B-D pools' names in StepSample::pool order: "prefill" and "decode", or each pool's
// ("prefill0", …, "decode0", …) for a stage of several.
std::vector<std::string> pbd_pool_names(const PbdResult& p) {
  std::vector<std::string> names;
  for (const auto* stage : {&p.prefill_pools, &p.decode_pools}) {
    for (const PoolStats& s : *stage) names.push_back(s.name);
    if (stage->empty()) names.push_back(stage == &p.prefill_pools ? "prefill" : "decode");
  }
  return names;
}

// A P-B-D stage (prefill or decode): its pools' totals, busy_fraction their mean; with more than
// one pool (DP > 1) also each pool's own.
Json stage_json(const PoolStats& stage, const std::vector<PoolStats>& pools, double span_ns) {
  const size_t dp = pools_of(pools);
  Json j = pool_json(stage, span_ns * double(dp));
  if (dp > 1) {
    j["pools"] = dp;
    j["by_pool"] = Json::array();
    for (const PoolStats& s : pools) {
      j["by_pool"].push_back(pool_json(s, span_ns));
      j["by_pool"].back()["name"] = s.name;
    }
  }
  return j;
}

// P-B-D (docs/serving.md): the pools, the buffer, back-pressure, the KV transfers, and
// THInfer's throughput model (its eq. 21): a pipeline of stages runs at the pace of its slowest,
// B x N tokens per max(T_p / DP_P, T_d / DP_D) with T the time one pool spends on one micro-batch
// of B sequences and DP pools of a stage working at once; the transfer is a stage of its own here
// (THInfer overlaps it with the prefill's next layer). Measured from the run: T = the stage's busy
// time over its pools x B / sequences. At saturation the simulated throughput reaches the model's;
// below, arrivals bound it.
Json pbd_summary(const PbdResult& p, double span_ns, double end_ns, int64_t generated) {
  double transfer_ns = 0;
  uint64_t bytes = 0;
  std::vector<double> each;
  double wait_ns = 0;
  for (const KvTransfer& t : p.transfers) {
    transfer_ns += t.ns;
    wait_ns += t.wait_ns;
    bytes += t.bytes;
    each.push_back(t.ns);
  }
  const double per_mb = p.sequences > 0 ? double(p.micro_batch) / double(p.sequences) : 0.0;
  const double t_p = p.prefill.busy_ns * per_mb, t_x = transfer_ns * per_mb, t_d = p.decode.busy_ns * per_mb;
  const size_t dp_p = pools_of(p.prefill_pools), dp_d = pools_of(p.decode_pools);
  const double slowest = std::max({t_p / double(dp_p), t_x, t_d / double(dp_d)});
  const double tokens_per_mb = double(generated) * per_mb;
  const double model = slowest > 0 ? tokens_per_mb / slowest * 1e9 : 0.0;
  const double simulated = span_ns > 0 ? double(generated) / span_ns * 1e9 : 0.0;
  const char* bottleneck = slowest == t_d / double(dp_d)      ? "decode"
                           : slowest == t_p / double(dp_p) ? "prefill"
                                                           : "transfer";
  Json out{
      {"prefill_pool", stage_json(p.prefill, p.prefill_pools, span_ns)},
      {"decode_pool", stage_json(p.decode, p.decode_pools, span_ns)},
      {"buffer_max", p.buffer_max},
      {"micro_batch", p.micro_batch},
      {"sequences", p.sequences},
      {"buffer", level_over_time(p.buffer, end_ns)},
      {"backpressure_ns", p.backpressure_ns},
      {"backpressure_fraction", span_ns > 0 ? p.backpressure_ns / span_ns : 0.0},
      {"transfer",
       {{"path", p.kv_path},
        {"path_note", p.path_note},
        {"latency_ns", p.path_latency_ns},
        {"gbps", p.path_gbps},
        {"count", p.transfers.size()},
        {"bytes", bytes},
        {"busy_ns", transfer_ns},
        {"host_link_wait_ns", wait_ns},
        {"busy_fraction", span_ns > 0 ? transfer_ns / span_ns : 0.0},
        {"time", report::to_json(report::distribution(each))}}},
      {"thinfer",
       {{"t_p_ns", t_p},
        {"t_x_ns", t_x},
        {"t_d_ns", t_d},
        {"tokens_per_micro_batch", tokens_per_mb},
        {"bottleneck", bottleneck},
        {"throughput_tokens_per_s", model},
        {"simulated_tokens_per_s", simulated},
        {"simulated_over_model", model > 0 ? simulated / model : 0.0}}}};
  if (dp_p > 1) out["thinfer"]["dp_p"] = dp_p;
  if (dp_d > 1) out["thinfer"]["dp_d"] = dp_d;
  return out;
}

// Per request: the latency distributions (`ttft`, `tpot` kept for the SLO) and token counts.
Json requests_json(const ServeResult& r, std::vector<double>& ttft, std::vector<double>& tpot, int64_t& generated) {
  std::vector<double> e2e, queue, tool;
  int64_t requested = 0;
  int cancelled = 0;
  for (const RequestRecord& q : r.requests) {
    generated += q.generated_tokens;
    if (q.cancelled) {
      ++cancelled;
      continue;
    }
    requested += q.requested_tokens;
    if (q.first_token_ns >= 0) ttft.push_back(q.first_token_ns - q.ready_ns);
    if (q.generated_tokens >= 2) tpot.push_back((q.last_token_ns - q.first_token_ns) / double(q.generated_tokens - 1));
    if (q.scheduled_ns >= 0) queue.push_back(q.scheduled_ns - q.ready_ns);
    e2e.push_back(q.done_ns - q.ready_ns);
    tool.push_back(q.tool_ns);
  }
  return {{"count", r.requests.size()},
          {"cancelled", cancelled},
          {"ttft", report::to_json(report::distribution(ttft))},
          {"tpot", report::to_json(report::distribution(tpot))},
          {"end_to_end", report::to_json(report::distribution(e2e))},
          {"queueing", report::to_json(report::distribution(queue))},
          {"tool", report::to_json(report::distribution(tool))},
          {"tokens_requested", requested},
          {"tokens_generated", generated}};
}

// Per workflow; `first_arrival`: the earliest arrival (the span's start).
Json workflows_json(const ServeResult& r, double& first_arrival) {
  std::vector<double> w_ttft, w_e2e, w_queue, w_tool;
  first_arrival = r.workflows.empty() ? 0 : r.workflows.front().arrival_ns;
  for (const WorkflowRecord& f : r.workflows) {
    if (f.first_token_ns >= 0) w_ttft.push_back(f.first_token_ns - f.arrival_ns);
    w_e2e.push_back(f.done_ns - f.arrival_ns);
    w_queue.push_back(f.admitted_ns - f.arrival_ns);
    w_tool.push_back(f.tool_wait_ns);
    first_arrival = std::min(first_arrival, f.arrival_ns);
  }
  return {{"count", r.workflows.size()},
          {"ttft", report::to_json(report::distribution(w_ttft))},
          {"end_to_end", report::to_json(report::distribution(w_e2e))},
          {"queueing", report::to_json(report::distribution(w_queue))},
          {"tool_wait", report::to_json(report::distribution(w_tool))}};
}

Json slo_json(const Workload& w, const ServeResult& r, const std::vector<double>& ttft, const std::vector<double>& tpot) {
  Json slo = Json::object();
  if (w.slo.ttft_ns) slo["ttft_attained"] = attained(ttft, *w.slo.ttft_ns);
  if (w.slo.tpot_ns) slo["tpot_attained"] = attained(tpot, *w.slo.tpot_ns);
  if (w.slo.ttft_ns || w.slo.tpot_ns) {  // both targets met by the same request
    int met = 0, n = 0;
    for (const RequestRecord& q : r.requests) {
      if (q.cancelled || q.first_token_ns < 0) continue;
      ++n;
      const bool t1 = !w.slo.ttft_ns || q.first_token_ns - q.ready_ns <= *w.slo.ttft_ns;
      const bool t2 = !w.slo.tpot_ns || q.generated_tokens < 2 ||
                      (q.last_token_ns - q.first_token_ns) / double(q.generated_tokens - 1) <= *w.slo.tpot_ns;
      met += t1 && t2;
    }
    slo["both_attained"] = n ? double(met) / double(n) : 1.0;
  }
  return slo;
}

// The chip's busy fraction over the span: the steps' time, or (P-B-D, prefix_affinity) the pools'
// busy fractions weighted by groups.
double chip_busy_fraction(const HwConfig& hw, const ServeResult& r, double busy, double span_ns) {
  // P-B-D: the pools run at once, each on its share of the groups: the chip's busy fraction is
  // their busy fractions weighted by groups.
  double chip_busy = span_ns > 0 ? busy / span_ns : 0.0;
  if (r.pbd && span_ns > 0)
    // A stage's pools are alike: each has groups / DP groups, and busy_ns sums them.
    chip_busy = (double(r.pbd->prefill.groups) / double(pools_of(r.pbd->prefill_pools)) * r.pbd->prefill.busy_ns +
                 double(r.pbd->decode.groups) / double(pools_of(r.pbd->decode_pools)) * r.pbd->decode.busy_ns) /
                (double(hw.groups) * span_ns);
  // prefix_affinity: the slices too (groups past the last whole slice count as idle).
  if (!r.slices.empty() && span_ns > 0) {
    double group_ns = 0;
    for (const PoolStats& p : r.slices) group_ns += double(p.groups) * p.busy_ns;
    chip_busy = group_ns / (double(hw.groups) * span_ns);
  }
  return chip_busy;
}

// The steps' totals; `busy`: their time summed.
Json steps_json(const HwConfig& hw, const ServeResult& r, double span_ns, double& busy) {
  std::vector<double> tokens, parts, waiting;
  uint64_t hbm = 0;
  for (const StepSample& st : r.steps) {
    busy += st.ns;
    hbm += st.hbm_bytes;
    tokens.push_back(st.tokens);
    parts.push_back(st.workflows);
    waiting.push_back(st.waiting);
  }
  return {{"count", r.steps.size()},
          {"simulated", r.steps_simulated},
          {"reused", r.steps_reused},
          {"parts_by_policy", r.parts_by_policy},
          {"busy_ns", busy},
          {"chip_busy_fraction", chip_busy_fraction(hw, r, busy, span_ns)},
          {"hbm_bytes_read", hbm},
          // While a step runs: the HBM bandwidth drawn against every slice's peak (a value
          // near 1 names the HBM as the bottleneck of a saturated chip).
          {"hbm_gbps_while_busy", busy > 0 ? double(hbm) / busy : 0.0},
          {"hbm_peak_gbps", hw.pe.hbm.bandwidth_gbps * double(hw.groups * hw.pes_per_group())},
          {"batch_tokens", over_time(tokens)},
          {"batch_workflows", over_time(parts)},
          {"queue_length", over_time(waiting)}};
}

Json kv_json(const ServeResult& r) {
  std::vector<double> pages;
  for (const StepSample& st : r.steps) pages.push_back(double(st.kv_pages));
  return {{"pes", r.pes},
          {"pages_per_pe", r.pages_per_pe},
          {"copies_per_page", r.kv_copies},
          {"pages_total", r.pages_total},
          {"peak_pages", r.peak_pages},
          {"peak_fraction", r.pages_total ? double(r.peak_pages) / double(r.pages_total) : 0.0},
          {"pages_over_steps", over_time(pages)},
          {"allocations", r.allocations},
          {"frees", r.frees},
          {"in_use_end", r.in_use_end}};
}

// Energy: each step's reading, shared among its requests by new tokens (engine.h RequestRecord).
// A workflow's energy is the sum of its requests' (its branches and its answer).
Json energy_json(const HwConfig& hw, const ServeResult& r, double busy, int64_t generated) {
  std::vector<double> req_j, workflow_j(r.workflows.size(), 0.0);
  double steps_j = 0, requests_j = 0, steps_static_j = 0;
  for (const StepSample& st : r.steps) {
    steps_j += st.energy_j;
    steps_static_j += st.static_j;
  }
  // The chip's static power runs from 0 to the end whether or not a step does: what the steps'
  // readings leave out (time between steps, idle pools and groups, swaps) is idle static energy.
  const double chip_static_w = r.static_w_per_group * double(hw.groups);
  const double idle_static_j = std::max(0.0, chip_static_w * r.end_ns * 1e-9 - steps_static_j);
  for (const RequestRecord& q : r.requests) {
    requests_j += q.energy_j;
    req_j.push_back(q.energy_j);
    workflow_j[size_t(q.workflow)] += q.energy_j;
  }
  return {{"steps_j", steps_j},
          {"requests_j", requests_j},
          {"per_request", report::to_json(report::distribution(req_j), "_j")},
          {"per_workflow", report::to_json(report::distribution(workflow_j), "_j")},
          {"j_per_request", r.requests.empty() ? 0.0 : steps_j / double(r.requests.size())},
          {"j_per_workflow", r.workflows.empty() ? 0.0 : steps_j / double(r.workflows.size())},
          {"j_per_output_token", generated ? steps_j / double(generated) : 0.0},
          {"average_power_while_busy_w", busy > 0 ? steps_j / (busy * 1e-9) : 0.0},
          {"idle_static_j", idle_static_j},
          {"total_j", steps_j + idle_static_j},
          {"average_power_w", r.end_ns > 0 ? (steps_j + idle_static_j) / (r.end_ns * 1e-9) : 0.0},
          {"note", "steps_j: the chip's energy while steps run (docs/energy.md: each step's activity with the "
                   "energy.* costs plus static power over the step), shared among its requests by the new "
                   "tokens each brings (prefill tokens, 1 per decode); idle_static_j: the chip's static power "
                   "over the rest of the span (between steps, idle pools and groups, swaps), in total_j only"}};
}

// prefix_affinity only: each slice's totals.
Json placement_json(const ServeResult& r, double span_ns) {
  Json slices = Json::array();
  for (const PoolStats& p : r.slices) {
    Json j = pool_json(p, span_ns);
    j["name"] = p.name;
    j["workflows"] = p.workflows;
    j["peak_fraction"] = p.pages_total ? double(p.peak_pages) / double(p.pages_total) : 0.0;
    slices.push_back(j);
  }
  return {{"rule", r.placement}, {"slices", slices}};
}

// on_demand admission only: what preemption did, and its swaps' share of the busy time.
Json preemption_json(const Workload& w, const ServeResult& r, double busy) {
  const PreemptionResult& p = *r.preemption;
  double swap_ns = 0, wait_ns = 0;
  int64_t swap_steps = 0;
  std::vector<double> per_workflow;
  for (const StepSample& st : r.steps) {
    swap_ns += st.swap_ns;
    wait_ns += st.host_wait_ns;
    swap_steps += st.swap_ns > 0;
  }
  for (const WorkflowRecord& f : r.workflows) per_workflow.push_back(f.preemptions);
  return {{"admission", w.scheduler.admission},
          {"mode", p.mode},
          {"count", p.preemptions},
          {"workflows_preempted", p.workflows_preempted},
          {"per_workflow", report::to_json(report::distribution(per_workflow), "")},
          {"recomputed_tokens", p.recomputed_tokens},
          {"swap", {{"page_bytes", p.page_bytes},
                    {"out_count", p.swap_outs},
                    {"out_bytes", p.swap_out_bytes},
                    {"in_count", p.swap_ins},
                    {"in_bytes", p.swap_in_bytes},
                    {"ns", swap_ns},
                    {"steps", swap_steps},
                    {"host_link_wait_ns", wait_ns},
                    {"fraction_of_busy", busy > 0 ? swap_ns / busy : 0.0}}}};
}

}  // namespace

Json serve_summary(const Workload& w, const HwConfig& hw, const ServeResult& r) {
  Json s;
  s["workload"] = to_json(w);
  s["hw"] = to_json(hw);
  s["scheduler"] = r.scheduler;
  std::vector<double> ttft, tpot;
  int64_t generated = 0;
  double first_arrival = 0, busy = 0;
  s["requests"] = requests_json(r, ttft, tpot, generated);
  s["workflows"] = workflows_json(r, first_arrival);
  const double span_ns = r.end_ns - first_arrival;
  s["throughput"] = {{"span_ns", span_ns},
                     {"tokens_per_s", span_ns > 0 ? double(generated) / span_ns * 1e9 : 0.0},
                     {"workflows_per_s", span_ns > 0 ? double(r.workflows.size()) / span_ns * 1e9 : 0.0}};
  s["slo"] = slo_json(w, r, ttft, tpot);
  s["steps"] = steps_json(hw, r, span_ns, busy);
  s["kv"] = kv_json(r);
  s["energy"] = energy_json(hw, r, busy, generated);
  if (r.pbd) s["pbd"] = pbd_summary(*r.pbd, span_ns, r.end_ns, generated);
  if (!r.slices.empty()) s["placement"] = placement_json(r, span_ns);  // prefix_affinity only: a spread run's summary is as before
  if (!r.operators.is_null()) {  // a whole model only: an attention-only summary is as before
    s["operators"] = r.operators;
    s["memory_map"] = r.memory_map;
  }
  if (r.preemption) s["preemption"] = preemption_json(w, r, busy);  // on_demand admission only: a reserve run's summary is as before
  s["end_ns"] = r.end_ns;
  s["simulator"] = simulator_json(hw);
  return s;
}

std::string requests_csv(const ServeResult& r) {
  std::ostringstream os;
  os << "workflow,template,round,branch,prefill_tokens,requested_tokens,generated_tokens,ready_ns,scheduled_ns,"
        "first_token_ns,last_token_ns,tool_ns,done_ns,cancelled,energy_j"
     << (r.preemption ? ",preemptions\n" : "\n");  // the column under on_demand admission only
  for (const RequestRecord& q : r.requests) {
    os << q.workflow << ',' << r.workflows[size_t(q.workflow)].tmpl << ',' << q.round << ',' << q.branch << ','
       << q.prefill_tokens << ',' << q.requested_tokens << ',' << q.generated_tokens << ',' << num(q.ready_ns) << ','
       << num(q.scheduled_ns) << ',' << num(q.first_token_ns) << ',' << num(q.last_token_ns) << ',' << num(q.tool_ns)
       << ',' << num(q.done_ns) << ',' << (q.cancelled ? 1 : 0) << ',' << num(q.energy_j);
    if (r.preemption) os << ',' << q.preemptions;
    os << '\n';
  }
  return os.str();
}

std::string serve_trace_json(const ServeResult& r) {
  // Chrome trace events: ts and dur in µs. pid 0 = the chip (steps, counters), pid 1 = workflows.
  Json ev = Json::array();
  ev.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 0}, {"args", {{"name", "chip"}}}});
  ev.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", "workflows"}}}});
  // P-B-D: each pool's steps on a thread of its own (the prefill pools', then the decode pools'),
  // KV transfers on the next, and a counter track of the buffer's sequences.
  for (size_t i = 0; r.slices.size() > 1 && i < r.slices.size(); ++i)  // prefix_affinity: a thread per slice
    ev.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", i}, {"args", {{"name", r.slices[i].name}}}});
  if (r.pbd) {
    std::vector<std::string> names;
    for (const std::string& pool : pbd_pool_names(*r.pbd)) names.push_back(pool + " pool");
    names.push_back("kv transfer");
    for (size_t t = 0; t < names.size(); ++t)
      ev.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", t}, {"args", {{"name", names[t]}}}});
    for (const KvTransfer& t : r.pbd->transfers)
      ev.push_back({{"name", "kv transfer"}, {"ph", "X"}, {"pid", 0}, {"tid", names.size() - 1}, {"ts", t.start_ns / 1e3},
                    {"dur", t.ns / 1e3}, {"args", {{"sequences", t.sequences}, {"bytes", t.bytes}}}});
    for (const auto& [at, n] : r.pbd->buffer)
      ev.push_back({{"name", "buffer"}, {"ph", "C"}, {"pid", 0}, {"ts", at / 1e3}, {"args", {{"sequences", n}}}});
  }
  for (size_t i = 0; i < r.steps.size(); ++i) {
    const StepSample& s = r.steps[i];
    ev.push_back({{"name", "step"}, {"ph", "X"}, {"pid", 0}, {"tid", s.pool}, {"ts", s.start_ns / 1e3}, {"dur", s.ns / 1e3},
                  {"args", {{"step", i}, {"workflows", s.workflows}, {"agents", s.agents}, {"tokens", s.tokens},
                            {"reused", s.reused}}}});
    if (s.swap_ns > 0)  // preemption = swap: the boundary's swaps, at the step's start
      ev.back()["args"]["swap_ns"] = s.swap_ns;
    if (s.host_wait_ns > 0)  // before them, the wait for the host link
      ev.back()["args"]["host_wait_ns"] = s.host_wait_ns;
    ev.push_back({{"name", "kv_pages"}, {"ph", "C"}, {"pid", 0}, {"ts", s.start_ns / 1e3}, {"args", {{"in_use", s.kv_pages}}}});
    ev.push_back({{"name", "queue"}, {"ph", "C"}, {"pid", 0}, {"ts", s.start_ns / 1e3},
                  {"args", {{"waiting", s.waiting}, {"active", s.active}}}});
    ev.push_back({{"name", "batch"}, {"ph", "C"}, {"pid", 0}, {"ts", s.start_ns / 1e3},
                  {"args", {{"tokens", s.tokens}, {"workflows", s.workflows}}}});
    ev.push_back({{"name", "hbm_gbps"}, {"ph", "C"}, {"pid", 0}, {"ts", s.start_ns / 1e3},
                  {"args", {{"read", s.ns > 0 ? double(s.hbm_bytes) / s.ns : 0.0}}}});
  }
  for (const WorkflowRecord& f : r.workflows) {
    if (f.admitted_ns > f.arrival_ns)
      ev.push_back({{"name", "queued"}, {"ph", "X"}, {"pid", 1}, {"tid", f.id}, {"ts", f.arrival_ns / 1e3},
                    {"dur", (f.admitted_ns - f.arrival_ns) / 1e3}});
    ev.push_back({{"name", f.tmpl}, {"ph", "X"}, {"pid", 1}, {"tid", f.id}, {"ts", f.admitted_ns / 1e3},
                  {"dur", (f.done_ns - f.admitted_ns) / 1e3},
                  {"args", {{"workflow", f.id}, {"tokens", f.generated_tokens}}}});
  }
  return Json{{"traceEvents", ev}, {"displayTimeUnit", "ns"}}.dump() + "\n";
}

std::string serve_vcd(const ServeResult& r) {
  TraceSink t(true);
  const auto ns = [](double v) { return uint64_t(std::llround(v)); };
  const int pages = t.add_signal("serve.kv_pages", 64), waiting = t.add_signal("serve.queue.waiting", 32),
            active = t.add_signal("serve.queue.active", 32), tokens = t.add_signal("serve.batch.tokens", 32),
            workflows = t.add_signal("serve.batch.workflows", 32);
  std::vector<int> busy;  // by StepSample::pool
  if (r.pbd) {
    for (const std::string& pool : pbd_pool_names(*r.pbd))
      busy.push_back(t.add_signal("serve.pbd." + pool + "_busy", 1));
  } else if (r.slices.size() > 1) {  // prefix_affinity: the slices step at once, each its own signal
    for (const PoolStats& p : r.slices) busy.push_back(t.add_signal("serve." + p.name + ".busy", 1));
  } else {
    busy = {t.add_signal("serve.busy", 1)};
  }
  // Per signal in time order (a pool's steps follow one another): a step's end and the next
  // step's start at the same ns collapse to the start.
  for (const StepSample& s : r.steps) {
    const uint64_t at = ns(s.start_ns);
    t.set_at_ns(pages, uint64_t(s.kv_pages), at);
    t.set_at_ns(waiting, uint64_t(s.waiting), at);
    t.set_at_ns(active, uint64_t(s.active), at);
    t.set_at_ns(tokens, uint64_t(s.tokens), at);
    t.set_at_ns(workflows, uint64_t(s.workflows), at);
    t.set_at_ns(busy[size_t(s.pool)], 1, at);
    t.set_at_ns(busy[size_t(s.pool)], 0, ns(s.start_ns + s.ns));
  }
  if (r.pbd) {
    const int buffer = t.add_signal("serve.pbd.buffer", 32), transfer = t.add_signal("serve.pbd.transfer", 1);
    for (const auto& [at, n] : r.pbd->buffer) t.set_at_ns(buffer, uint64_t(n), ns(at));
    for (const KvTransfer& x : r.pbd->transfers) {
      t.set_at_ns(transfer, 1, ns(x.start_ns));
      t.set_at_ns(transfer, 0, ns(x.start_ns + x.ns));
    }
  }
  std::ostringstream os;
  t.write_vcd(os);
  return os.str();
}

void write_serve_files(OutputTarget& out, const Json& summary, const ServeResult& r, bool vcd) {
  out.write("summary.json", [&](std::ostream& os) { os << summary.dump(2) << '\n'; });
  out.write("requests.csv", [&](std::ostream& os) { os << requests_csv(r); });
  out.write("trace.json", [&](std::ostream& os) { os << serve_trace_json(r); });
  if (vcd) out.write("waves.vcd", [&](std::ostream& os) { os << serve_vcd(r); });
}

}  // namespace ahbm::serve
