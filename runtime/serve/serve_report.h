#pragma once
// What `ahbm-sim serve` writes (docs/serving.md, metrics): summary.json (serve_summary.h: the
// workload echoed, latency distributions per request and per workflow, throughput, SLO
// attainment, KV, batch and queue figures, steps simulated vs reused), requests.csv (one row
// per request with its timestamps) and trace.json (the steps as slices, the workflows as
// slices, KV occupancy, queue length and batch size as counter tracks; Chrome trace format,
// ui.perfetto.dev).
#include <string>

#include "hw/common/config/hw_config.h"
#include "hw/common/base/json_reader.h"
#include "runtime/io/output_dir.h"
#include "runtime/serve/engine.h"
#include "runtime/serve/serve_summary.h"
#include "runtime/serve/workload.h"

namespace ahbm::serve {

std::string requests_csv(const ServeResult& r);
std::string serve_trace_json(const ServeResult& r);
// trace.json's counter tracks as VCD signals (hw/common/observe/trace_sink.h's writer, 1 ns): under
// scope `serve`, kv_pages, queue.waiting, queue.active, batch.tokens and batch.workflows (each
// step's values from its start), busy (1 while a step runs); P-B-D: pbd.buffer, pbd.prefill_busy,
// pbd.decode_busy and pbd.transfer instead of busy.
std::string serve_vcd(const ServeResult& r);

// Writes the three files (and waves.vcd with `vcd`) into the staging tree of `out` (commit()
// puts them in place).
void write_serve_files(OutputTarget& out, const ServeSummary& summary, const ServeResult& r, bool vcd = false);

}  // namespace ahbm::serve
