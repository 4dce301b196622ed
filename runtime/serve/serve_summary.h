#pragma once
// summary.json of `ahbm-sim serve` (docs/serving.md, metrics; its schema
// docs/schema/serve_summary.schema.json) as a typed value, ServeSummary: serve_summary computes
// it from a ServeResult, one function per section; to_json(const ServeSummary&) is the one place
// it becomes JSON. The workload and hardware echoed, a whole model's operators and memory map
// and provenance stay Json (their JSON is owned by workload.cpp, hw_config, model_steps and
// provenance).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hw/common/base/json_reader.h"
#include "hw/common/config/hw_config.h"
#include "runtime/report/percentiles.h"
#include "runtime/serve/engine.h"
#include "runtime/serve/workload.h"

namespace ahbm::serve {

using report::Distribution;

// The mean and max of a quantity over the steps (or, time-weighted, over the span).
struct MeanMax {
  double mean = 0, max = 0;
};

// "requests": per request (cancelled ones counted, not measured), ns.
struct RequestsSummary {
  size_t count = 0;
  int cancelled = 0;
  Distribution ttft, tpot, end_to_end, queueing, tool;
  int64_t tokens_requested = 0, tokens_generated = 0;
};

// "workflows": per workflow, from its arrival, ns.
struct WorkflowsSummary {
  size_t count = 0;
  Distribution ttft, end_to_end, queueing, tool_wait;
};

// "throughput": over the span from the first arrival to the end.
struct ThroughputSummary {
  double span_ns = 0, tokens_per_s = 0, workflows_per_s = 0;
};

// "slo": the fraction of requests that met each target the workload sets (none set: empty).
struct SloSummary {
  std::optional<double> ttft_attained, tpot_attained, both_attained;
};

// "steps": the steps' totals; the batch and queue over the steps (none without steps).
struct ServeStepsSummary {
  size_t count = 0;
  int simulated = 0, reused = 0;
  std::map<std::string, int64_t> parts_by_policy;
  double busy_ns = 0, chip_busy_fraction = 0;
  uint64_t hbm_bytes_read = 0;
  double hbm_gbps_while_busy = 0, hbm_peak_gbps = 0;
  std::optional<MeanMax> batch_tokens, batch_workflows, queue_length;
};

// "kv": the page pool and its use.
struct ServeKvSummary {
  int pes = 0;
  int64_t pages_per_pe = 0;
  int copies_per_page = 1;
  int64_t pages_total = 0, peak_pages = 0;
  double peak_fraction = 0;
  std::optional<MeanMax> pages_over_steps;  // none without steps
  int64_t allocations = 0, frees = 0, in_use_end = 0;
};

// "energy": the steps' energy shared among their requests, and the idle static energy, J.
struct ServeEnergySummary {
  double steps_j = 0, requests_j = 0;
  Distribution per_request, per_workflow;  // J
  double j_per_request = 0, j_per_workflow = 0, j_per_output_token = 0, average_power_while_busy_w = 0;
  double idle_static_j = 0, total_j = 0, average_power_w = 0;
};

// A pool of groups (a P-B-D stage or one of its pools, a prefix_affinity slice).
struct ServePoolSummary {
  std::string name;  // written for a stage's pools and for slices
  int groups = 0, steps = 0;
  double busy_ns = 0, busy_fraction = 0;
  int64_t pages_total = 0, peak_pages = 0;
  Json operators, memory_map;  // P-B-D with a whole model: the pool's (operators null: neither written)
};
// A P-B-D stage: its pools' totals and, with several pools (DP > 1), each pool's.
struct StageSummary {
  ServePoolSummary totals;
  std::vector<ServePoolSummary> by_pool;  // empty with one pool
};

// "pbd": the pools, the buffer, back-pressure, the KV transfers and THInfer's throughput model.
struct KvTransferSummary {
  std::string path, path_note;
  double latency_ns = 0, gbps = 0;
  size_t count = 0;
  uint64_t bytes = 0;
  double busy_ns = 0, host_link_wait_ns = 0, busy_fraction = 0;
  Distribution time;
  std::string migration = "whole";  // scheduler.pbd.kv_migration
  double overlap_ns = 0;  // layer: the transfers' time alongside their sequences' prefills, summed
};
struct ThinferSummary {
  double t_p_ns = 0, t_x_ns = 0, t_d_ns = 0, tokens_per_micro_batch = 0;
  std::string bottleneck;  // prefill | transfer | decode
  double throughput_tokens_per_s = 0, simulated_tokens_per_s = 0, simulated_over_model = 0;
  size_t dp_p = 1, dp_d = 1;  // written when above 1
};
struct PbdSummary {
  StageSummary prefill_pool, decode_pool;
  int buffer_max = 0, micro_batch = 0;
  int64_t sequences = 0;
  MeanMax buffer;  // sequences in the buffer, time-weighted
  double backpressure_ns = 0, backpressure_fraction = 0;
  KvTransferSummary transfer;
  ThinferSummary thinfer;
};

// "placement" (prefix_affinity): the rule and each slice.
struct SliceSummary {
  ServePoolSummary pool;
  int workflows = 0;
  double peak_fraction = 0;
};
struct PlacementSummary {
  std::string rule;
  std::vector<SliceSummary> slices;
};
// "data_parallel" (model.parallel.dp above 1): the replicas and each one's totals.
struct DataParallelSummary {
  int chips_per_replica = 1;
  std::vector<SliceSummary> replicas;
};

// "preemption" (on_demand admission): what preemption did, and its swaps' share of the busy time.
struct SwapSummary {
  uint64_t page_bytes = 0, out_bytes = 0, in_bytes = 0;
  int64_t out_count = 0, in_count = 0, steps = 0;  // swaps out and in, steps with swaps
  double ns = 0, host_link_wait_ns = 0, fraction_of_busy = 0;
};
struct PreemptionSummary {
  std::string admission, mode;
  int64_t count = 0, workflows_preempted = 0;
  Distribution per_workflow;  // preemptions per workflow
  int64_t recomputed_tokens = 0;
  SwapSummary swap;
};

// "sampling" (sampled serving): what was simulated in detail, the predictor's measured error per
// shape class, and each headline metric with its 95% confidence interval.
struct MetricInterval {
  std::string name;  // headline_metrics' name
  double value = 0, low = 0, high = 0;
};
struct SamplingSummary {
  Json spec;
  int64_t steps = 0, detailed = 0, predicted = 0;
  double detailed_fraction = 0;
  std::vector<SamplingResult::Class> classes;
  SamplingResult::Operators operators;
  int replays = 0;  // perturbed replays behind the intervals (0: no intervals)
  double t_quantile = 0;
  std::vector<MetricInterval> metrics;
};

struct ServeSummary {
  Json workload, hw;  // as resolved
  std::string scheduler;
  RequestsSummary requests;
  WorkflowsSummary workflows;
  ThroughputSummary throughput;
  SloSummary slo;
  ServeStepsSummary steps;
  ServeKvSummary kv;
  ServeEnergySummary energy;
  std::optional<PbdSummary> pbd;                // P-B-D
  std::optional<PlacementSummary> placement;    // prefix_affinity
  std::optional<DataParallelSummary> data_parallel;  // model.parallel.dp above 1
  Json operators, memory_map;                   // a whole model (operators null: neither written)
  std::optional<PreemptionSummary> preemption;  // on_demand admission
  std::optional<SamplingSummary> sampling;      // sampled serving
  // A run stopped before every workflow finished (ServeResult::partial): what it got to.
  struct Partial {
    std::string reason;  // ServeResult::partial_reason
    double simulated_ns = 0;
    size_t workflows = 0, workflows_finished = 0, requests_finished = 0;
  };
  std::optional<Partial> partial;
  double end_ns = 0;
  Json simulator;  // provenance (runtime/io/provenance.h)
};

ServeSummary serve_summary(const Workload& w, const HwConfig& hw, const ServeResult& r);
// The metrics sampled serving reports with an interval, by name ("requests.ttft_p50_ns",
// "throughput.tokens_per_s", "slo.both_attained", "energy.total_j", ...), in a fixed order; an
// SLO's attainment only when the workload sets that SLO.
std::vector<std::pair<std::string, double>> headline_metrics(const ServeSummary& s);
// The 0.975 quantile of Student's t with `df` degrees of freedom (df >= 1).
double t_quantile_975(int df);
// summary.json, keys in alphabetical order (nlohmann's objects).
Json to_json(const ServeSummary& s);

}  // namespace ahbm::serve
