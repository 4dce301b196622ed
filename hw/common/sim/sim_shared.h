#pragma once
// Everything the modules of one simulation share, in two parts: the run context (config, clock,
// observability sinks, epoch) and the job table (the run's jobs and its Q tiles). Owned by the
// Chip; no globals.
#include <string>
#include <vector>

#include "hw/common/model/engines.h"
#include "hw/common/contract/gemm_job.h"
#include "hw/common/contract/vector_kernel.h"
#include "hw/common/config/hw_config.h"
#include "hw/common/contract/job.h"
#include "hw/common/observe/numeric_guard.h"
#include "hw/common/observe/span_recorder.h"
#include "hw/common/base/timing.h"
#include "hw/common/observe/tlm_checker.h"
#include "hw/common/observe/trace_sink.h"
#include "hw/common/sim/wait_registry.h"

namespace ahbm {

// One Q tile in the order the Q source sends them.
struct TileRef {
  int job = 0;
  int index = 0;        // within the job
  int row_begin = 0, row_end = 0;
  int group = 0;
  int phase_id = 0;     // interned in the span recorder
  int agent_id = 0;     // interned label: the agent's name, or "*" for a tile of several agents
  int rows() const { return row_end - row_begin; }
};

// The jobs of the current run, read in place (the caller keeps them alive for the run). A
// reference that can be re-pointed: the chip outlives one run (Simulator in simulate.h).
template <class Job>
class RunList {
 public:
  void bind(const std::vector<Job>& jobs) { jobs_ = &jobs; }
  void unbind() { jobs_ = &none_; }
  const Job& operator[](size_t i) const { return (*jobs_)[i]; }
  size_t size() const { return jobs_->size(); }
  bool empty() const { return jobs_->empty(); }
  typename std::vector<Job>::const_iterator begin() const { return jobs_->begin(); }
  typename std::vector<Job>::const_iterator end() const { return jobs_->end(); }
  operator const std::vector<Job>&() const { return *jobs_; }

 private:
  const std::vector<Job>* jobs_ = &none_;
  static inline const std::vector<Job> none_{};
};
using JobList = RunList<AttentionJob>;

// The weight GEMMs of the current run (a run holds attention jobs or GEMM jobs, not both;
// hw/chip/simulate.h): the jobs, what the PEs gathered and counted, and how many Y blocks are
// still to finish (the run is over at 0).
struct GemmRun {
  RunList<GemmJob> jobs;
  std::vector<std::vector<GemmPePlan>> plans;  // per job, per chip PE (gemm_pe_plans)
  std::vector<std::vector<GemmColumns>> columns;  // per job, x_stationary: its W stream's column groups
  std::vector<GemmXChunk> x_chunks;    // w_stationary: X as the host sends it (gemm_x_chunks)
  std::vector<MatrixRM> y;             // per job, M x N fp32 (values only); K-split parts summed by their owners
  std::vector<GemmOpStats> stats;      // per job
  uint64_t blocks_left = 0;
  int activity_in = 0, activity_out = 0;  // interned "w_in", "y_out"
  std::vector<int> op_ids;             // per job, its interned operator name
};

// The unfused vector kernels of the current run (hw/common/contract/vector_kernel.h; a run holds them
// alone): the jobs, each PE's part, the counters (GemmOpStats: the summary treats a kernel as an
// operator) and outputs, and how many row blocks are still to finish (the run is over at 0).
struct VectorKernelRun {
  RunList<VectorKernelJob> jobs;
  std::vector<std::vector<VectorKernelPlan>> plans;  // per job, per chip PE
  std::vector<MatrixRM> y;                            // per job, M x N (values only)
  std::vector<GemmOpStats> stats;                     // per job
  std::vector<int> op_ids;                            // per job, its interned operator name
  uint64_t blocks_left = 0;
};

// What every module of one simulation shares whatever the run holds: the config, the clock, the
// observability sinks, the run's epoch and kernel launch times, the wait registry, the numeric
// guard. A module that needs no job reads only this.
struct RunContext {
  RunContext(const HwConfig& c, TraceSink& t, SpanRecorder& s);

  const HwConfig& cfg;
  Clock clock;
  sc_core::sc_time epoch = sc_core::SC_ZERO_TIME;
  TraceSink& trace;
  SpanRecorder& spans;
  int none_agent = 0;  // interned "-" for spans that belong to no agent
  WaitRegistry waits;  // what each module waits for, for the stall watchdog's report
  NumericGuard guard;  // first NaN/Inf in the datapath
  TileScratch scratch;  // the PEs' per-KV-tile arithmetic (engines.h)
  // Set (tests, SimOptions::check_tlm): every TLM link is built through a base-protocol checker
  // that records its violations here (hw/common/observe/tlm_checker.h).
  TlmCheckLog* tlm_checks = nullptr;

  // A process that works through the run's jobs waits on a start event of its own between runs;
  // its module's begin_run() notifies it for one delta later. The chip calls begin_run() in one
  // fixed order, so the processes begin each run in that order.
  static void start(sc_core::sc_event& e) { e.notify(sc_core::SC_ZERO_TIME); }

  // When job `j`'s kernel has been launched (host.kernel_launch_ns per launch, serially), as a
  // simulated time: nothing of the job starts earlier.
  const sc_core::sc_time& kernel_launched(int j) const { return kernel_launched_[size_t(j)]; }
  // An operator's kernel (weight GEMM, vector kernel; GemmOpStats::launch_ns): the calling
  // process waits until the host has launched it, `launch_ns` after the run's epoch.
  void wait_launched(double launch_ns) const {
    const sc_core::sc_time launched = epoch + sc_core::sc_time(launch_ns, sc_core::SC_NS);
    if (launched > sc_core::sc_time_stamp()) sc_core::wait(launched - sc_core::sc_time_stamp());
  }

  sc_core::sc_time cycles(uint64_t n) const { return clock.cycles(n); }
  void span(const sc_core::sc_time& start, const sc_core::sc_time& end, int component, const char* activity,
            const TileRef& t, int64_t rows, int64_t bytes) {
    span(start, end, component, spans.intern(activity), t, rows, bytes);
  }
  // With the activity already interned (hot paths: once per KV tile).
  void span(const sc_core::sc_time& start, const sc_core::sc_time& end, int component, int activity,
            const TileRef& t, int64_t rows, int64_t bytes) {
    spans.record(start, end, component, activity, t.phase_id, t.agent_id, rows, bytes);
  }

 protected:
  // The run's epoch into the sinks and the jobs' launch times (SimShared::begin_run).
  void begin_epoch(const std::vector<AttentionJob>& run_jobs, const sc_core::sc_time& run_epoch);

 private:
  std::vector<sc_core::sc_time> kernel_launched_;  // per job of the run (begin_run)
};

// What the run asks of the chip: its jobs of one kind (attention, weight GEMMs or vector
// kernels), the table of Q tiles in send order, and where each PE's CUBE sits on the NoC.
struct JobTable {
  JobList jobs;
  GemmRun gemm;
  VectorKernelRun kernels;
  std::vector<TileRef> tiles;  // the run's Q tiles; a tile's index is its place in the Q source's send order
  std::vector<std::vector<int>> tiles_of_group;  // global tile indices per group, in send order
  // Per chip PE, its CUBE's NoC endpoint (-1: its group is not elaborated); set by the chip.
  std::vector<int> pe_endpoint;
};

// Both parts, owned by the Chip and passed by reference; no globals. A module that needs only
// one part takes that part (the PE's children do: hw/pe/).
struct SimShared : RunContext, JobTable {
  SimShared(const HwConfig& c, TraceSink& t, SpanRecorder& s) : RunContext(c, t, s) {}
  // Points everything at a new run's jobs: the tile table, and the epoch (the simulated time the
  // run starts at) of the sinks, so recorded times count from the run's start.
  void begin_run(const std::vector<AttentionJob>& run_jobs, const sc_core::sc_time& epoch);
  // The run's weight GEMMs (after begin_run; none for a run of attention jobs).
  void begin_gemms(const std::vector<GemmJob>& run_gemms);
  // The run's unfused vector kernels (after begin_run; none for other runs).
  void begin_vector_kernels(const std::vector<VectorKernelJob>& run_kernels);

  // A span of weight-GEMM job `j` of the run: its phase, agent = its operator.
  void gemm_span(const sc_core::sc_time& start, const sc_core::sc_time& end, int component, int activity, int j,
                 int64_t rows, int64_t bytes) {
    spans.record(start, end, component, activity, spans.intern(gemm.jobs[size_t(j)].phase), gemm.op_ids[size_t(j)], rows,
                 bytes);
  }
};

}  // namespace ahbm
