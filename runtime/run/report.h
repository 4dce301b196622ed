#pragma once
// The run directory's report files beyond summary.json (docs/outputs.md): latency.csv and
// trace.json (or trace.json.gz) at the run's output level (trace_level.h), waves.vcd +
// waves.gtkw + GTKWave filters (when the VCD is enabled), stats.json, power.csv.
#include <string>

#include "runtime/io/output_dir.h"
#include "runtime/run/run_types.h"

namespace ahbm::report {

void write_report_files(OutputTarget& out, const RunOutput& run, const RunOptions& opt);

}  // namespace ahbm::report
