#pragma once
// Standalone collectives testbench (`ahbm-sim coll-bench`, docs/system.md): one collective
// over a size sweep on a system network, as nccl-tests prints it (size, time, algorithm and bus
// bandwidth), beside the alpha-beta closed form of an idle network. Several groups of ranks may
// run the collective at once on the same network (each size: all groups start at time 0), which
// shows their contention.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hw/system/collectives.h"

namespace ahbm {

struct CollBenchOptions {
  SystemNetworkSpec network;  // model, params, chips; where they came from (error messages)
  std::string collective = "all_reduce";
  std::string algo;           // "" = the collective's first algorithm (ring, direct)
  uint64_t min_bytes = 1 << 10, max_bytes = 64 << 20;
  double step_factor = 4;     // sizes min, min x f, ... up to max (nccl-tests' -b, -e, -f)
  // Concurrent groups of ranks (chip indices); empty = one group of every chip in order.
  std::vector<std::vector<int>> groups;
  double reduce_ns_per_byte = 0;
  // Called before each size and once at the end: sizes done, sizes in all, the next size (0 at
  // the end); the CLI's progress line. Results are the same with or without it.
  std::function<void(size_t done, size_t total, uint64_t next_bytes)> progress;
};
// The sweep's sizes (at most kMaxCollBenchSizes) and its bound on the bytes per run.
constexpr int kMaxCollBenchSizes = 64;
constexpr uint64_t kMaxCollBenchBytes = uint64_t(1) << 32;

struct CollBenchRow {
  uint64_t bytes = 0;
  double time_us = 0;                // the slowest group's
  std::vector<double> group_time_us;
  double algbw_gbps = 0, busbw_gbps = 0;  // of the slowest group: bytes / time, x the bus factor
  double closed_form_us = -1;        // -1: the network has no closed form (not packet-level)
  double error_pct = 0;              // (time - closed form) / closed form x 100
};

struct CollBenchResult {
  CollBenchOptions options;
  CollectiveKind kind = CollectiveKind::all_reduce;
  CollectiveAlgo algo = CollectiveAlgo::ring;
  int ranks = 0;                     // per group
  std::optional<AlphaBeta> alpha_beta;  // the closed form's, of the first group
  double bus_factor = 1;
  std::vector<CollBenchRow> rows;
  StatsNode network_stats;           // the network's, at the largest size
};

// Throws InputError naming the option, the value and what is allowed.
CollBenchResult run_coll_bench(const NocRegistry& registry, const CollBenchOptions& options);
// nccl-tests-style table: size, time, algbw, busbw, closed form, error.
std::string coll_bench_table(const CollBenchResult& result);
Json coll_bench_json(const CollBenchResult& result);

}  // namespace ahbm
