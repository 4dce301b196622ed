#pragma once
// The runtime's one door to the hardware model: runs a scenario's phases over the paged KV
// cache, simulates every step, checks the numbers against the float64 reference and assembles
// the summary; writes the run directory.
#include <string>

#include "hw/common/config/hw_config.h"
#include "runtime/io/output_dir.h"
#include "runtime/run/run_types.h"
#include "runtime/scenario/scenario.h"

namespace ahbm {

// Throws InputError (bad or inconsistent input, checked before planning and simulating; e.g. an
// x_stationary GEMM mapping without a whole model),
// SimStall (deadlock/livelock) or NumericFault (NaN/Inf in the datapath).
RunOutput execute(const Scenario& sc, const HwConfig& hw, const RunOptions& opt);

// Writes summary.json, latency.csv and trace.json (at RunOptions::trace), stats.json, waves.* (if enabled), join.csv (with
// a join) and tensors/*.npy (if asked) into the staging tree of `out` (a claimed --out directory,
// runtime/io/output_dir.h); out.commit() puts them in place. Throws OutputError on a failed write.
void write_run_files(OutputTarget& out, const RunOutput& run, const RunOptions& opt);
// Claims `dir`, writes the run and commits it: all or nothing (InputError if `dir` may not be
// replaced, OutputError if a write fails).
void write_run_dir(const std::string& dir, const RunOutput& run, const RunOptions& opt);

}  // namespace ahbm
