#pragma once
// The runtime's join phase with a strategy (docs/join.md, "On the hardware"; note 5.4-5.9):
//  1. the branches finish: their page tables are released (private pages freed);
//  2. hierarchical: the reducer agents fork from the shared prefix, prefill their inputs as one
//     batched step (their rows run side by side) and decode their summaries together, then
//     are released;
//  3. pointer: each requested evidence item is fetched on the host, one after another, at
//     JoinSpec::evidence_fetch_ns each (no hardware activity);
//  4. the main agent prefills the join input on top of the shared prefix (its page table
//     becomes shared prefix + join-input pages), checked against float64 like every step;
//  5. it then decodes the join phase's `tokens` continuation tokens (continuation pages).
// Prefills of more than max_simulated_tokens tokens per agent simulate the last
// max_simulated_tokens tokens' query rows over the whole KV, cut into the Q tiles the full
// prefill would have, probe half as many off the timeline, and extrapolate the time affinely
// in rows (docs/join.md).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/join/report.h"
#include "runtime/join/spec.h"
#include "runtime/step/step_runner.h"

namespace ahbm::join {

// How the join phase reaches the hardware; no_hardware() does the page-table work only.
// `q_tile_rows` > 0 fixes the Q tile size of the step (hardware config q_tile_rows).
struct JoinHost {
  std::function<StepRecord(const Step&, int q_tile_rows)> run;  // simulate on the timeline and record
  std::function<StepRecord(const Step&, double ns)> wait;       // host-side wait on the timeline, recorded
  std::function<double(const Step&, int q_tile_rows)> probe;    // simulated ns off the timeline, timing only
  // The Q tile rows the planner would give a job of `rows` rows of this scenario (0 without hardware).
  std::function<int(int64_t rows)> tile_rows;
};
JoinHost no_hardware();
using RecordStep = std::function<void(const Step&, StepRun&&)>;
// Steps through `steps` (runtime/step/step_runner.h) on `tl`, reading the pages of `kv`.
JoinHost hardware_host(StepRunner& steps, const KvPageManager& kv, Timeline& tl, RecordStep record);

// One prefill step (one or several agents batched).
struct PrefillTiming {
  int64_t tokens = 0;            // new tokens of every agent of the step
  int64_t simulated_tokens = 0;  // whose query rows were simulated on the timeline
  double simulated_ns = 0;
  double probe_ns = 0;           // the half-size probe (extrapolated only)
  double ns = 0;                 // the full prefill (= simulated_ns unless extrapolated)
  bool extrapolated = false;
  // The full prefill's energy: the simulated step's, scaled by ns / simulated_ns when extrapolated.
  EnergyReading energy;
};

// Reference counts after the join (before the continuation decode).
struct JoinKvCheck {
  int live_sequences = 0;                // the parent only
  int64_t pages_in_use = 0;
  int64_t prefix_pages = 0;              // the parent's table when the join started
  int64_t prefix_pages_referenced_once = 0;
  int64_t join_input_pages = 0;          // pages the join input added to the parent's table
  int64_t private_pages = 0;             // pages only branches or reducers referenced
  int64_t private_pages_live = 0;        // of those, not freed
  int64_t continuation_pages = 0;        // added by the continuation decode
};

struct JoinRun {
  std::string strategy;
  double start_ns = 0;
  int reducers = 0;
  PrefillTiming reduce_prefill;
  std::vector<double> reducer_prefill_done_ns;  // per reducer, from the prefill step's start
  int reduce_decode_steps = 0;
  double reduce_decode_ns = 0;
  int evidence_fetches = 0;
  double evidence_ns = 0;
  PrefillTiming prefill;  // the main agent's continuation prefill of the join input
  std::optional<NumericCheck> prefill_check;
  double fan_in_ns = 0;   // reducers + evidence + prefill
  int continuation_steps = 0;
  double continuation_ns = 0;
  // Energy of the hardware steps (hw/chip/energy.h): the fan-in (reducers + prefill; host-side
  // evidence fetches are not counted) and the continuation decode.
  EnergyReading fan_in_energy, continuation_energy;
  JoinKvCheck kv;
};

JoinRun run_join(AgentSession& s, const JoinPlan& plan, const JoinSpec& spec, const JoinHost& host);

// The model dims of the closed forms from the scenario's model block.
ModelDims model_dims(const Scenario& sc, const JoinSpec& spec);

struct JoinOutcome {
  std::vector<JoinPlan> plans;  // the strategy's, or every one (compare); latencies filled
  std::vector<JoinRun> runs;    // same order
  Json summary;                 // summary.json "join"
  std::string table, csv;       // the side-by-side table (CLI) and join.csv
};

// Runs the join phase of `s` (stopped before it) for the scenario's strategy on the run's
// timeline and, with `compare`, every other strategy on copies of the page state and private
// timelines (same step times: each step is simulated on a fresh chip).
JoinOutcome run_join_phase(AgentSession& s, StepRunner& steps, Timeline& tl, const RecordStep& record, bool compare);

}  // namespace ahbm::join
