#pragma once
// The HBM analogue of noc-bench: synthetic chunked traffic on one pseudo-channel of the
// bank-level model (dram_controller.h), or on several side by side, reporting achieved / peak bandwidth, the first access's
// latency, the row-hit rate, the refresh share and per-bank utilisation (docs/hbm.md).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hw/bench/mem_trace.h"
#include "hw/common/base/json_reader.h"
#include "hw/hbm/dram_controller.h"
#include "hw/hbm/dram_spec.h"

namespace ahbm::hbm {

struct HbmBenchOptions {
  std::string pattern = "sequential";  // sequential | random | stream-write
  uint64_t chunk_bytes = 32 * 1024;    // bytes one chunk (a DMA transfer) moves
  uint64_t bytes = 4 << 20;            // bytes read in all
  uint64_t write_bytes = 0;            // a write chunk of this size ...
  uint64_t write_every = 0;            // ... after every this many bytes read (stream-write: 512 B per 16 KiB)
  int inflight = 4;                    // chunks outstanding at once (1: one after another, like the PE DMA)
  uint64_t seed = 1;                   // random chunk addresses
  bool check = false;                  // replay the command log through the rule checker
  // Pseudo-channels side by side (a PE's slice: 12), consecutive bursts interleaved over them;
  // each has its own controller. Addresses, capacity and peak scale with them.
  int pseudo_channels = 1;
  DramSpec spec = hbm3_6400();         // mapping, refresh and page policy included
  // Runs whose work (hbm_bench_work) exceeds the bounds below are refused unless this is set
  // (--allow-large).
  bool allow_large = false;
  // Called as chunks complete: chunks done, chunks in all, simulated time (ns); the CLI's progress
  // line. Results are the same with or without it.
  std::function<void(uint64_t done, uint64_t total, double now_ns)> progress;
  // Trace replay (--trace): these requests instead of the pattern's chunks, each one chunk, in file
  // order; a time stamp is the earliest cycle of the trace clock (trace_clock_mhz; 0: the DRAM's
  // tCK) its first burst may enter. The pattern and chunk options are not used.
  std::vector<MemTraceRequest> trace;
  std::string trace_file, trace_format;
  double trace_clock_mhz = 0;
  // Keep pseudo-channel 0's commands for HbmBenchResult::commands (--command-trace; one
  // pseudo-channel only: DRAMPower models one rank).
  bool keep_commands = false;
};

// What a bench run costs at most, known before it starts: chunks (each held for the whole run,
// about 48 bytes with its bookkeeping: the memory goes with it) and bursts simulated (the time
// goes with them; with `check` each burst's commands are logged too, about 54 bytes a burst).
struct HbmBenchWork {
  double chunks = 0;
  double bursts = 0;
};
HbmBenchWork hbm_bench_work(const HbmBenchOptions& o);
// Documented bounds (docs/hbm.md, "Work bound"), from rates measured on the 2-core reference
// machine under load (4.3e5 bursts/s): about 8 minutes and 1 GiB at most.
constexpr double kMaxHbmBenchBursts = 2e8;
constexpr double kMaxHbmBenchChunks = 2e7;
constexpr double kMaxHbmBenchCheckedBursts = 2e7;  // with `check`

struct HbmBenchResult {
  HbmBenchOptions options;
  uint64_t bytes_read = 0, bytes_written = 0, chunks = 0;
  double total_ns = 0;
  double first_access_ns = 0;   // the first burst from an idle pseudo-channel, request to last data
  double chunk_ns_mean = 0;     // request to completion, per chunk
  double achieved_gbps = 0, peak_gbps = 0, efficiency = 0;
  double row_hit_rate = 0, refresh_share = 0;
  uint64_t acts = 0, refreshes = 0;
  std::vector<double> bank_utilisation;  // per bank (mean over pseudo-channels): share of the run its bursts held the data bus
  int64_t rule_violations = -1;          // with `check`
  std::vector<std::string> first_violations;
  std::vector<DramCommand> commands;     // with keep_commands
  Json to_json() const;
  std::string line() const;
};

// Throws InputError for bad options (naming the option, its value and the allowed range).
HbmBenchResult run_hbm_bench(const HbmBenchOptions& o);

}  // namespace ahbm::hbm
