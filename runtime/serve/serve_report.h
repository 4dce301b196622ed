#pragma once
// What `ahbm-sim serve` writes (docs/serving.md, metrics): summary.json (the workload echoed,
// latency distributions per request and per workflow, throughput, SLO attainment, KV, batch
// and queue figures, steps simulated vs reused), requests.csv (one row per request with its
// timestamps) and trace.json (the steps as slices, the workflows as slices, KV occupancy,
// queue length and batch size as counter tracks; Chrome trace format, ui.perfetto.dev).
#include <string>

#include "hw/common/hw_config.h"
#include "hw/common/json_reader.h"
#include "runtime/output_dir.h"
#include "runtime/serve/engine.h"
#include "runtime/serve/workload.h"

namespace ahbm::serve {

Json serve_summary(const Workload& w, const HwConfig& hw, const ServeResult& r);
std::string requests_csv(const ServeResult& r);
std::string serve_trace_json(const ServeResult& r);

// Writes the three files into the staging tree of `out` (commit() puts them in place).
void write_serve_files(OutputTarget& out, const Json& summary, const ServeResult& r);

}  // namespace ahbm::serve
