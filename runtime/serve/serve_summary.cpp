#include "runtime/serve/serve_summary.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "runtime/io/provenance.h"

namespace ahbm::serve {

namespace {

// Fraction of `samples` at or under `target`; 1 for no samples.
double attained(const std::vector<double>& samples, double target) {
  if (samples.empty()) return 1.0;
  return double(std::count_if(samples.begin(), samples.end(), [&](double x) { return x <= target; })) /
         double(samples.size());
}

std::optional<MeanMax> over_time(const std::vector<double>& v) {
  if (v.empty()) return std::nullopt;
  double sum = 0, mx = v.front();
  for (double x : v) sum += x, mx = std::max(mx, x);
  return MeanMax{sum / double(v.size()), mx};
}

// Time-weighted mean and max of a level that holds from each sample to the next, up to end_ns.
MeanMax level_over_time(const std::vector<std::pair<double, int>>& v, double end_ns) {
  double area = 0, mx = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    const double until = i + 1 < v.size() ? v[i + 1].first : end_ns;
    area += double(v[i].second) * (until - v[i].first);
    mx = std::max(mx, double(v[i].second));
  }
  const double span = v.empty() ? 0 : end_ns - v.front().first;
  return MeanMax{span > 0 ? area / span : 0.0, mx};
}

ServePoolSummary pool_summary(const PoolStats& p, double span_ns) {
  return ServePoolSummary{p.name,          p.groups,       p.steps,      p.busy_ns, span_ns > 0 ? p.busy_ns / span_ns : 0.0,
                          p.pages_total,   p.peak_pages,   p.operators,  p.memory_map};
}

// The pools of a P-B-D stage (its DP): PbdResult keeps each pool's stats only when there are
// several.
size_t pools_of(const std::vector<PoolStats>& each) { return std::max<size_t>(1, each.size()); }

// model.parallel.dp: the data-parallel replicas, each on chips of its own.
size_t replicas(const ServeResult& r) { return pools_of(r.replicas); }

// A P-B-D stage (prefill or decode): its pools' totals, busy_fraction their mean; with more than
// one pool (DP > 1) also each pool's own.
StageSummary stage_summary(const PoolStats& stage, const std::vector<PoolStats>& pools, double span_ns) {
  const size_t dp = pools_of(pools);
  StageSummary s{pool_summary(stage, span_ns * double(dp)), {}};
  if (dp > 1)
    for (const PoolStats& p : pools) s.by_pool.push_back(pool_summary(p, span_ns));
  return s;
}

// P-B-D (docs/serving.md): the pools, the buffer, back-pressure, the KV transfers, and
// THInfer's throughput model (its eq. 21): a pipeline of stages runs at the pace of its slowest,
// B x N tokens per max(T_p / DP_P, T_d / DP_D) with T the time one pool spends on one micro-batch
// of B sequences and DP pools of a stage working at once; the transfer is a stage of its own here
// (THInfer overlaps it with the prefill's next layer). Measured from the run: T = the stage's busy
// time over its pools x B / sequences. At saturation the simulated throughput reaches the model's;
// below, arrivals bound it.
PbdSummary pbd_summary(const PbdResult& p, double span_ns, double end_ns, int64_t generated) {
  PbdSummary s;
  KvTransferSummary& x = s.transfer;
  std::vector<double> each;
  for (const KvTransfer& t : p.transfers) {
    x.busy_ns += t.ns;
    x.host_link_wait_ns += t.wait_ns;
    x.bytes += t.bytes;
    x.overlap_ns += t.overlap_ns;
    each.push_back(t.ns);
  }
  x.path = p.kv_path;
  x.migration = p.kv_migration;
  x.path_note = p.path_note;
  x.latency_ns = p.path_latency_ns;
  x.gbps = p.path_gbps;
  x.count = p.transfers.size();
  x.busy_fraction = span_ns > 0 ? x.busy_ns / span_ns : 0.0;
  x.time = report::distribution(each);
  ThinferSummary& m = s.thinfer;
  const double per_mb = p.sequences > 0 ? double(p.micro_batch) / double(p.sequences) : 0.0;
  // The transfer stage: its time after the pulls (per-layer migration hides the rest behind the
  // prefills; a whole transfer has no overlap).
  m.t_p_ns = p.prefill.busy_ns * per_mb, m.t_x_ns = (x.busy_ns - x.overlap_ns) * per_mb,
  m.t_d_ns = p.decode.busy_ns * per_mb;
  m.dp_p = pools_of(p.prefill_pools), m.dp_d = pools_of(p.decode_pools);
  const double slowest = std::max({m.t_p_ns / double(m.dp_p), m.t_x_ns, m.t_d_ns / double(m.dp_d)});
  m.tokens_per_micro_batch = double(generated) * per_mb;
  m.throughput_tokens_per_s = slowest > 0 ? m.tokens_per_micro_batch / slowest * 1e9 : 0.0;
  m.simulated_tokens_per_s = span_ns > 0 ? double(generated) / span_ns * 1e9 : 0.0;
  m.simulated_over_model = m.throughput_tokens_per_s > 0 ? m.simulated_tokens_per_s / m.throughput_tokens_per_s : 0.0;
  m.bottleneck = slowest == m.t_d_ns / double(m.dp_d)   ? "decode"
                 : slowest == m.t_p_ns / double(m.dp_p) ? "prefill"
                                                        : "transfer";
  s.prefill_pool = stage_summary(p.prefill, p.prefill_pools, span_ns);
  s.decode_pool = stage_summary(p.decode, p.decode_pools, span_ns);
  s.buffer_max = p.buffer_max;
  s.micro_batch = p.micro_batch;
  s.sequences = p.sequences;
  s.buffer = level_over_time(p.buffer, end_ns);
  s.backpressure_ns = p.backpressure_ns;
  s.backpressure_fraction = span_ns > 0 ? p.backpressure_ns / span_ns : 0.0;
  return s;
}

// Per request: the latency distributions (`ttft`, `tpot` kept for the SLO) and token counts.
RequestsSummary requests_summary(const ServeResult& r, std::vector<double>& ttft, std::vector<double>& tpot) {
  RequestsSummary s;
  std::vector<double> e2e, queue, tool;
  for (const RequestRecord& q : r.requests) {
    s.tokens_generated += q.generated_tokens;
    if (q.cancelled) {
      ++s.cancelled;
      continue;
    }
    s.tokens_requested += q.requested_tokens;
    if (q.first_token_ns >= 0) ttft.push_back(q.first_token_ns - q.ready_ns);
    if (q.generated_tokens >= 2) tpot.push_back((q.last_token_ns - q.first_token_ns) / double(q.generated_tokens - 1));
    if (q.scheduled_ns >= 0) queue.push_back(q.scheduled_ns - q.ready_ns);
    if (q.done_ns < 0) continue;  // a partial run (stopped): not finished
    e2e.push_back(q.done_ns - q.ready_ns);
    tool.push_back(q.tool_ns);
  }
  s.count = r.requests.size();
  s.ttft = report::distribution(ttft);
  s.tpot = report::distribution(tpot);
  s.end_to_end = report::distribution(e2e);
  s.queueing = report::distribution(queue);
  s.tool = report::distribution(tool);
  return s;
}

// Per workflow; `first_arrival`: the earliest arrival (the span's start).
WorkflowsSummary workflows_summary(const ServeResult& r, double& first_arrival) {
  std::vector<double> w_ttft, w_e2e, w_queue, w_tool;
  first_arrival = r.workflows.empty() ? 0 : r.workflows.front().arrival_ns;
  for (const WorkflowRecord& f : r.workflows) {
    if (f.first_token_ns >= 0) w_ttft.push_back(f.first_token_ns - f.arrival_ns);
    if (f.admitted_ns >= 0) w_queue.push_back(f.admitted_ns - f.arrival_ns);
    if (f.done_ns >= 0) {  // a partial run (stopped): finished workflows only
      w_e2e.push_back(f.done_ns - f.arrival_ns);
      w_tool.push_back(f.tool_wait_ns);
    }
    first_arrival = std::min(first_arrival, f.arrival_ns);
  }
  return {r.workflows.size(), report::distribution(w_ttft), report::distribution(w_e2e),
          report::distribution(w_queue), report::distribution(w_tool)};
}

SloSummary slo_summary(const Workload& w, const ServeResult& r, const std::vector<double>& ttft,
                       const std::vector<double>& tpot) {
  SloSummary slo;
  if (w.slo.ttft_ns) slo.ttft_attained = attained(ttft, *w.slo.ttft_ns);
  if (w.slo.tpot_ns) slo.tpot_attained = attained(tpot, *w.slo.tpot_ns);
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
    slo.both_attained = n ? double(met) / double(n) : 1.0;
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
  // prefix_affinity: the slices too (groups past the last whole slice count as idle); data-parallel
  // replicas: their groups-weighted busy time over every replica's chip.
  for (const std::vector<PoolStats>* pools : {&r.slices, &r.replicas}) {
    if (pools->empty() || span_ns <= 0) continue;
    double group_ns = 0;
    for (const PoolStats& p : *pools) group_ns += double(p.groups) * p.busy_ns;
    chip_busy = group_ns / (double(hw.groups) * double(replicas(r)) * span_ns);
  }
  return chip_busy;
}

// The steps' totals.
ServeStepsSummary steps_summary(const HwConfig& hw, const ServeResult& r, double span_ns) {
  ServeStepsSummary s;
  std::vector<double> tokens, parts, waiting;
  for (const StepSample& st : r.steps) {
    s.busy_ns += st.ns;
    s.hbm_bytes_read += st.hbm_bytes;
    tokens.push_back(st.tokens);
    parts.push_back(st.workflows);
    waiting.push_back(st.waiting);
  }
  s.count = r.steps.size();
  s.simulated = r.steps_simulated;
  s.reused = r.steps_reused;
  s.parts_by_policy = r.parts_by_policy;
  s.chip_busy_fraction = chip_busy_fraction(hw, r, s.busy_ns, span_ns);
  // While a step runs: the HBM bandwidth drawn against every slice's peak (a value near 1 names
  // the HBM as the bottleneck of a saturated chip).
  s.hbm_gbps_while_busy = s.busy_ns > 0 ? double(s.hbm_bytes_read) / s.busy_ns : 0.0;
  s.hbm_peak_gbps = hw.pe.hbm.bandwidth_gbps * double(hw.groups * hw.pes_per_group()) * double(replicas(r));
  s.batch_tokens = over_time(tokens);
  s.batch_workflows = over_time(parts);
  s.queue_length = over_time(waiting);
  return s;
}

ServeKvSummary kv_summary(const ServeResult& r) {
  std::vector<double> pages;
  for (const StepSample& st : r.steps) pages.push_back(double(st.kv_pages));
  ServeKvSummary s;
  s.pes = r.pes;
  s.pages_per_pe = r.pages_per_pe;
  s.copies_per_page = r.kv_copies;
  s.pages_total = r.pages_total;
  s.peak_pages = r.peak_pages;
  s.peak_fraction = r.pages_total ? double(r.peak_pages) / double(r.pages_total) : 0.0;
  s.pages_over_steps = over_time(pages);
  s.allocations = r.allocations;
  s.frees = r.frees;
  s.in_use_end = r.in_use_end;
  return s;
}

// Energy: each step's reading, shared among its requests by new tokens (engine.h RequestRecord).
// A workflow's energy is the sum of its requests' (its branches and its answer).
ServeEnergySummary energy_summary(const HwConfig& hw, const ServeResult& r, double busy, int64_t generated) {
  ServeEnergySummary s;
  std::vector<double> req_j, workflow_j(r.workflows.size(), 0.0);
  double steps_static_j = 0;
  for (const StepSample& st : r.steps) {
    s.steps_j += st.energy_j;
    steps_static_j += st.static_j;
  }
  // The chip's static power runs from 0 to the end whether or not a step does: what the steps'
  // readings leave out (time between steps, idle pools and groups, swaps) is idle static energy.
  const double chip_static_w = r.static_w_per_group * double(hw.groups) * double(replicas(r));  // every replica's
  s.idle_static_j = std::max(0.0, chip_static_w * r.end_ns * 1e-9 - steps_static_j);
  for (const RequestRecord& q : r.requests) {
    s.requests_j += q.energy_j;
    req_j.push_back(q.energy_j);
    workflow_j[size_t(q.workflow)] += q.energy_j;
  }
  s.per_request = report::distribution(req_j);
  s.per_workflow = report::distribution(workflow_j);
  s.j_per_request = r.requests.empty() ? 0.0 : s.steps_j / double(r.requests.size());
  s.j_per_workflow = r.workflows.empty() ? 0.0 : s.steps_j / double(r.workflows.size());
  s.j_per_output_token = generated ? s.steps_j / double(generated) : 0.0;
  s.average_power_while_busy_w = busy > 0 ? s.steps_j / (busy * 1e-9) : 0.0;
  s.total_j = s.steps_j + s.idle_static_j;
  s.average_power_w = r.end_ns > 0 ? s.total_j / (r.end_ns * 1e-9) : 0.0;
  return s;
}

SliceSummary slice_summary(const PoolStats& p, double span_ns) {
  return {pool_summary(p, span_ns), p.workflows, p.pages_total ? double(p.peak_pages) / double(p.pages_total) : 0.0};
}

// prefix_affinity only: each slice's totals.
PlacementSummary placement_summary(const ServeResult& r, double span_ns) {
  PlacementSummary s{r.placement, {}};
  for (const PoolStats& p : r.slices) s.slices.push_back(slice_summary(p, span_ns));
  return s;
}

// model.parallel.dp above 1 only: each replica's totals.
DataParallelSummary data_parallel_summary(const ServeResult& r, double span_ns) {
  DataParallelSummary s{r.chips_per_replica, {}};
  for (const PoolStats& p : r.replicas) s.replicas.push_back(slice_summary(p, span_ns));
  return s;
}

// on_demand admission only: what preemption did, and its swaps' share of the busy time.
PreemptionSummary preemption_summary(const Workload& w, const ServeResult& r, double busy) {
  const PreemptionResult& p = *r.preemption;
  PreemptionSummary s;
  SwapSummary& swap = s.swap;
  for (const StepSample& st : r.steps) {
    swap.ns += st.swap_ns;
    swap.host_link_wait_ns += st.host_wait_ns;
    swap.steps += st.swap_ns > 0;
  }
  std::vector<double> per_workflow;
  for (const WorkflowRecord& f : r.workflows) per_workflow.push_back(f.preemptions);
  s.admission = w.scheduler.admission;
  s.mode = p.mode;
  s.count = p.preemptions;
  s.workflows_preempted = p.workflows_preempted;
  s.per_workflow = report::distribution(per_workflow);
  s.recomputed_tokens = p.recomputed_tokens;
  swap.page_bytes = p.page_bytes, swap.out_bytes = p.swap_out_bytes, swap.in_bytes = p.swap_in_bytes;
  swap.out_count = p.swap_outs, swap.in_count = p.swap_ins;
  swap.fraction_of_busy = busy > 0 ? swap.ns / busy : 0.0;
  return s;
}

// What sampling did, and each headline metric's interval: the sampled value shifted by the
// replays' mean change from the unperturbed reference, ± t(0.975, K - 1) x their standard
// deviation (K perturbed replays; sampling.h).
SamplingSummary sampling_summary(const SamplingResult& r, const std::vector<StepSample>& steps,
                                 const std::vector<std::pair<std::string, double>>& values) {
  SamplingSummary s;
  s.spec = sampling_json(r.spec);
  s.steps = int64_t(steps.size());
  for (const StepSample& x : steps) s.predicted += x.predicted;
  s.detailed = s.steps - s.predicted;
  s.detailed_fraction = s.steps > 0 ? double(s.detailed) / double(s.steps) : 0.0;
  s.classes = r.classes;
  s.operators = r.operators;
  const size_t k = r.replays.empty() ? 0 : r.replays.size() - 1;
  s.replays = int(k);
  if (k >= 2) s.t_quantile = t_quantile_975(int(k) - 1);
  for (size_t m = 0; m < values.size(); ++m) {
    MetricInterval mi{values[m].first, values[m].second, values[m].second, values[m].second};
    if (k >= 2) {
      double sum = 0, sq = 0;
      for (size_t i = 1; i <= k; ++i) sum += r.replays[i][m].second - r.replays[0][m].second;
      const double mean = sum / double(k);
      for (size_t i = 1; i <= k; ++i) {
        const double d = r.replays[i][m].second - r.replays[0][m].second - mean;
        sq += d * d;
      }
      const double half = s.t_quantile * std::sqrt(sq / double(k - 1));
      mi.low = mi.value + mean - half;
      mi.high = mi.value + mean + half;
    }
    s.metrics.push_back(mi);
  }
  return s;
}

}  // namespace

double t_quantile_975(int df) {
  static constexpr double table[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228};
  if (df < 1) throw std::logic_error("t_quantile_975: df < 1");
  if (df <= 10) return table[df - 1];
  // Cornish-Fisher expansion about the normal quantile: within 0.001 of the exact value above 10.
  const double z = 1.959964, n = double(df);
  return z + (z * z * z + z) / (4 * n) + (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * n * n);
}

std::vector<std::pair<std::string, double>> headline_metrics(const ServeSummary& s) {
  std::vector<std::pair<std::string, double>> m = {
      {"requests.ttft_p50_ns", s.requests.ttft.p50},     {"requests.ttft_p90_ns", s.requests.ttft.p90},
      {"requests.ttft_p99_ns", s.requests.ttft.p99},     {"requests.tpot_p50_ns", s.requests.tpot.p50},
      {"requests.tpot_p90_ns", s.requests.tpot.p90},     {"requests.tpot_p99_ns", s.requests.tpot.p99},
      {"requests.end_to_end_p50_ns", s.requests.end_to_end.p50},
      {"throughput.tokens_per_s", s.throughput.tokens_per_s}, {"throughput.span_ns", s.throughput.span_ns},
      {"energy.total_j", s.energy.total_j},              {"energy.j_per_output_token", s.energy.j_per_output_token}};
  if (s.slo.ttft_attained) m.emplace_back("slo.ttft_attained", *s.slo.ttft_attained);
  if (s.slo.tpot_attained) m.emplace_back("slo.tpot_attained", *s.slo.tpot_attained);
  if (s.slo.both_attained) m.emplace_back("slo.both_attained", *s.slo.both_attained);
  return m;
}

ServeSummary serve_summary(const Workload& w, const HwConfig& hw, const ServeResult& r) {
  ServeSummary s;
  s.workload = to_json(w);
  s.hw = to_json(hw);
  s.scheduler = r.scheduler;
  std::vector<double> ttft, tpot;
  double first_arrival = 0;
  s.requests = requests_summary(r, ttft, tpot);
  s.workflows = workflows_summary(r, first_arrival);
  const double span_ns = r.end_ns - first_arrival;
  const int64_t generated = s.requests.tokens_generated;
  s.throughput = {span_ns, span_ns > 0 ? double(generated) / span_ns * 1e9 : 0.0,
                  span_ns > 0 ? double(r.workflows.size()) / span_ns * 1e9 : 0.0};
  s.slo = slo_summary(w, r, ttft, tpot);
  s.steps = steps_summary(hw, r, span_ns);
  s.kv = kv_summary(r);
  s.energy = energy_summary(hw, r, s.steps.busy_ns, generated);
  if (r.pbd) s.pbd = pbd_summary(*r.pbd, span_ns, r.end_ns, generated);
  if (!r.slices.empty()) s.placement = placement_summary(r, span_ns);
  if (!r.replicas.empty()) s.data_parallel = data_parallel_summary(r, span_ns);
  s.operators = r.operators;
  s.memory_map = r.memory_map;
  if (r.preemption) s.preemption = preemption_summary(w, r, s.steps.busy_ns);
  s.end_ns = r.end_ns;
  if (r.sampling) s.sampling = sampling_summary(*r.sampling, r.steps, headline_metrics(s));
  if (r.partial) {
    s.partial.emplace();
    s.partial->reason = r.partial_reason;
    s.partial->simulated_ns = r.end_ns;
    s.partial->workflows = r.workflows.size();
    for (const WorkflowRecord& f : r.workflows) s.partial->workflows_finished += f.done_ns >= 0;
    for (const RequestRecord& q : r.requests) s.partial->requests_finished += q.done_ns >= 0;
  }
  s.simulator = simulator_json(hw);
  return s;
}

namespace {

using report::to_json;

Json to_json(const MeanMax& m) { return Json{{"mean", m.mean}, {"max", m.max}}; }
// Over the steps: {"count": 0} without steps.
Json to_json(const std::optional<MeanMax>& m) { return m ? to_json(*m) : Json{{"count", 0}}; }

// A pool without its name.
Json to_json(const ServePoolSummary& p) {
  Json j{{"groups", p.groups},           {"steps", p.steps},          {"busy_ns", p.busy_ns},
         {"busy_fraction", p.busy_fraction}, {"pages_total", p.pages_total}, {"peak_pages", p.peak_pages}};
  if (!p.operators.is_null()) {
    j["operators"] = p.operators;
    j["memory_map"] = p.memory_map;
  }
  return j;
}

Json to_json(const StageSummary& s) {
  Json j = to_json(s.totals);
  if (!s.by_pool.empty()) {
    j["pools"] = s.by_pool.size();
    j["by_pool"] = Json::array();
    for (const ServePoolSummary& p : s.by_pool) {
      j["by_pool"].push_back(to_json(p));
      j["by_pool"].back()["name"] = p.name;
    }
  }
  return j;
}

Json to_json(const PbdSummary& p) {
  const KvTransferSummary& x = p.transfer;
  const ThinferSummary& m = p.thinfer;
  Json out{{"prefill_pool", to_json(p.prefill_pool)}, {"decode_pool", to_json(p.decode_pool)},
           {"buffer_max", p.buffer_max}, {"micro_batch", p.micro_batch}, {"sequences", p.sequences},
           {"buffer", to_json(p.buffer)},
           {"backpressure_ns", p.backpressure_ns}, {"backpressure_fraction", p.backpressure_fraction},
           {"transfer", {{"path", x.path}, {"path_note", x.path_note}, {"latency_ns", x.latency_ns}, {"gbps", x.gbps},
                         {"count", x.count}, {"bytes", x.bytes}, {"busy_ns", x.busy_ns},
                         {"host_link_wait_ns", x.host_link_wait_ns}, {"busy_fraction", x.busy_fraction},
                         {"time", to_json(x.time)}}},
           {"thinfer", {{"t_p_ns", m.t_p_ns}, {"t_x_ns", m.t_x_ns}, {"t_d_ns", m.t_d_ns},
                        {"tokens_per_micro_batch", m.tokens_per_micro_batch}, {"bottleneck", m.bottleneck},
                        {"throughput_tokens_per_s", m.throughput_tokens_per_s},
                        {"simulated_tokens_per_s", m.simulated_tokens_per_s},
                        {"simulated_over_model", m.simulated_over_model}}}};
  if (x.migration != "whole") {  // per-layer migration only: a whole transfer's summary is as before
    out["transfer"]["migration"] = x.migration;
    out["transfer"]["overlap_ns"] = x.overlap_ns;
  }
  if (m.dp_p > 1) out["thinfer"]["dp_p"] = m.dp_p;
  if (m.dp_d > 1) out["thinfer"]["dp_d"] = m.dp_d;
  return out;
}

Json to_json(const std::vector<SliceSummary>& slices) {
  Json out = Json::array();
  for (const SliceSummary& s : slices) {
    Json j = to_json(s.pool);
    j["name"] = s.pool.name;
    j["workflows"] = s.workflows;
    j["peak_fraction"] = s.peak_fraction;
    out.push_back(j);
  }
  return out;
}

Json to_json(const PlacementSummary& p) { return {{"rule", p.rule}, {"slices", to_json(p.slices)}}; }

Json to_json(const DataParallelSummary& d) {
  return {{"replicas", d.replicas.size()}, {"chips_per_replica", d.chips_per_replica}, {"by_replica", to_json(d.replicas)},
          {"note", "each replica a copy of the model on chips of its own, each workflow admitted to the least-loaded "
                   "replica it fits; a replica's collectives are timed alone (docs/system.md, Data parallelism)"}};
}

Json to_json(const PreemptionSummary& p) {
  const SwapSummary& s = p.swap;
  return {{"admission", p.admission}, {"mode", p.mode}, {"count", p.count},
          {"workflows_preempted", p.workflows_preempted}, {"per_workflow", to_json(p.per_workflow, "")},
          {"recomputed_tokens", p.recomputed_tokens},
          {"swap", {{"page_bytes", s.page_bytes}, {"out_count", s.out_count}, {"out_bytes", s.out_bytes},
                    {"in_count", s.in_count}, {"in_bytes", s.in_bytes}, {"ns", s.ns}, {"steps", s.steps},
                    {"host_link_wait_ns", s.host_link_wait_ns}, {"fraction_of_busy", s.fraction_of_busy}}}};
}

Json to_json(const RequestsSummary& q) {
  return {{"count", q.count}, {"cancelled", q.cancelled}, {"ttft", to_json(q.ttft)}, {"tpot", to_json(q.tpot)},
          {"end_to_end", to_json(q.end_to_end)}, {"queueing", to_json(q.queueing)}, {"tool", to_json(q.tool)},
          {"tokens_requested", q.tokens_requested}, {"tokens_generated", q.tokens_generated}};
}

Json to_json(const WorkflowsSummary& f) {
  return {{"count", f.count}, {"ttft", to_json(f.ttft)}, {"end_to_end", to_json(f.end_to_end)},
          {"queueing", to_json(f.queueing)}, {"tool_wait", to_json(f.tool_wait)}};
}

Json to_json(const SloSummary& s) {
  Json slo = Json::object();
  if (s.ttft_attained) slo["ttft_attained"] = *s.ttft_attained;
  if (s.tpot_attained) slo["tpot_attained"] = *s.tpot_attained;
  if (s.both_attained) slo["both_attained"] = *s.both_attained;
  return slo;
}

Json to_json(const ServeStepsSummary& s) {
  return {{"count", s.count}, {"simulated", s.simulated}, {"reused", s.reused},
          {"parts_by_policy", s.parts_by_policy}, {"busy_ns", s.busy_ns}, {"chip_busy_fraction", s.chip_busy_fraction},
          {"hbm_bytes_read", s.hbm_bytes_read}, {"hbm_gbps_while_busy", s.hbm_gbps_while_busy},
          {"hbm_peak_gbps", s.hbm_peak_gbps}, {"batch_tokens", to_json(s.batch_tokens)},
          {"batch_workflows", to_json(s.batch_workflows)}, {"queue_length", to_json(s.queue_length)}};
}

Json to_json(const ServeKvSummary& k) {
  return {{"pes", k.pes}, {"pages_per_pe", k.pages_per_pe}, {"copies_per_page", k.copies_per_page},
          {"pages_total", k.pages_total}, {"peak_pages", k.peak_pages}, {"peak_fraction", k.peak_fraction},
          {"pages_over_steps", to_json(k.pages_over_steps)}, {"allocations", k.allocations}, {"frees", k.frees},
          {"in_use_end", k.in_use_end}};
}

Json to_json(const ServeEnergySummary& e) {
  return {{"steps_j", e.steps_j}, {"requests_j", e.requests_j},
          {"per_request", to_json(e.per_request, "_j")}, {"per_workflow", to_json(e.per_workflow, "_j")},
          {"j_per_request", e.j_per_request}, {"j_per_workflow", e.j_per_workflow},
          {"j_per_output_token", e.j_per_output_token}, {"average_power_while_busy_w", e.average_power_while_busy_w},
          {"idle_static_j", e.idle_static_j}, {"total_j", e.total_j}, {"average_power_w", e.average_power_w},
          {"note", "steps_j: the chip's energy while steps run (docs/energy.md: each step's activity with the "
                   "energy.* costs plus static power over the step), shared among its requests by the new "
                   "tokens each brings (prefill tokens, 1 per decode); idle_static_j: the chip's static power "
                   "over the rest of the span (between steps, idle pools and groups, swaps), in total_j only"}};
}

}  // namespace

Json to_json(const ErrorStats& e) {
  return {{"count", e.n},         {"mean", e.mean},   {"rms", e.rms},
          {"max_abs", e.max_abs}, {"ratio", e.ratio}, {"ratio_standard_error", e.ratio_se}};
}

Json to_json(const SamplingSummary& s) {
  Json classes = Json::array();
  for (const SamplingResult::Class& c : s.classes)
    classes.push_back({{"name", c.name}, {"steps", c.steps}, {"detailed", c.detailed}, {"warmup", c.warmup},
                       {"novel", c.novel}, {"held_back", c.held_back}, {"period_at_end", c.period},
                       {"error_ns", to_json(c.ns)}, {"error_energy", to_json(c.energy)}});
  Json metrics = Json::object();
  for (const MetricInterval& m : s.metrics) metrics[m.name] = {{"value", m.value}, {"ci95", {m.low, m.high}}};
  return {{"spec", s.spec},           {"steps", s.steps},       {"detailed", s.detailed},
          {"predicted", s.predicted}, {"detailed_fraction", s.detailed_fraction}, {"classes", classes},
          {"operators", {{"simulated_row_counts", s.operators.simulated},
                         {"interpolated_row_counts", s.operators.interpolated},
                         {"error", to_json(s.operators.error)}}},
          {"replays", s.replays},     {"t_quantile", s.t_quantile}, {"metrics", metrics},
          {"note", "operators (summary \"operators\") count the detailed steps only; steps.parts_by_policy likewise"}};
}

Json to_json(const ServeSummary& s) {
  Json j;
  j["workload"] = s.workload;
  j["hw"] = s.hw;
  j["scheduler"] = s.scheduler;
  j["requests"] = to_json(s.requests);
  j["workflows"] = to_json(s.workflows);
  j["throughput"] = {{"span_ns", s.throughput.span_ns}, {"tokens_per_s", s.throughput.tokens_per_s},
                     {"workflows_per_s", s.throughput.workflows_per_s}};
  j["slo"] = to_json(s.slo);
  j["steps"] = to_json(s.steps);
  j["kv"] = to_json(s.kv);
  j["energy"] = to_json(s.energy);
  if (s.pbd) j["pbd"] = to_json(*s.pbd);
  if (s.placement) j["placement"] = to_json(*s.placement);  // prefix_affinity only: a spread run's summary is as before
  if (s.data_parallel) j["data_parallel"] = to_json(*s.data_parallel);  // dp above 1 only
  if (!s.operators.is_null()) {  // a whole model only: an attention-only summary is as before
    j["operators"] = s.operators;
    j["memory_map"] = s.memory_map;
  }
  if (s.preemption) j["preemption"] = to_json(*s.preemption);  // on_demand admission only
  if (s.sampling) j["sampling"] = to_json(*s.sampling);        // sampled serving only
  if (s.partial)  // stopped early: said at the top level so no reader takes it for a whole run
    j["partial"] = {{"reason", s.partial->reason},
                    {"simulated_ns", s.partial->simulated_ns},
                    {"workflows", s.partial->workflows},
                    {"workflows_finished", s.partial->workflows_finished},
                    {"requests_finished", s.partial->requests_finished}};
  j["end_ns"] = s.end_ns;
  j["simulator"] = s.simulator;
  return j;
}

}  // namespace ahbm::serve
