#pragma once
// Runs a set of attention jobs on a freshly elaborated chip in its own SystemC context and
// returns the outputs, the latency spans, the waveform changes and per-module statistics.
// The one entry point the runtime's driver uses.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hw/chip/job.h"
#include "hw/common/attn_state.h"
#include "hw/common/hw_config.h"
#include "hw/common/span_recorder.h"
#include "hw/common/trace_sink.h"
#include "hw/noc/noc.h"

namespace ahbm {

// Progress of a running simulation: the phase of the oldest Q tile not yet back at the host,
// the simulated time, and the fraction of the planned PE work (MACs) done. `done` on the last call.
struct SimProgress {
  std::string phase;
  double sim_ns = 0;
  double fraction = 0;
  bool done = false;
};

struct SimOptions {
  bool vcd = false;
  std::string hw_file = "hw config";  // named in error messages
  const NocRegistry* nocs = nullptr;  // nullptr: the built-in models
  // Called every few simulated microseconds (steps sized to ~50 ms of wall time) when set;
  // results are the same with or without it.
  std::function<void(const SimProgress&)> progress;
  // Stall watchdog window (hw/chip/watchdog.h): simulated ns without progress that count as a
  // livelock; 0 = detect deadlocks only.
  double watchdog_ns = 1e6;
};

struct SimResult {
  std::vector<MatrixRM> outputs;      // per job (empty matrices in timing-only runs)
  double end_ns = 0;                  // when the last O tile reached the host
  std::vector<double> tile_done_ns;   // per global tile, in send order
  std::vector<std::pair<int, int>> tile_of;  // global tile -> (job, index in job)
  std::unique_ptr<TraceSink> trace;
  std::unique_ptr<SpanRecorder> spans;
  Json stats;
};

// Throws InputError when the jobs do not fit the hardware (shard count, SRAM, HBM capacity).
void check_jobs(const HwConfig& cfg, const std::vector<AttentionJob>& jobs, const std::string& hw_file);

// Throws SimStall on a deadlock or livelock (with which modules wait on what) and NumericFault
// when a NaN or Inf appears in the datapath.
SimResult simulate(const HwConfig& cfg, const std::vector<AttentionJob>& jobs, const SimOptions& opt = {});

}  // namespace ahbm
