#include "runtime/report/report.h"


#include "runtime/report/latency.h"
#include "runtime/report/stats_json.h"
#include "runtime/report/trace_json.h"
#include "runtime/report/waves.h"

namespace ahbm::report {

void add_latency(RunOutput& run) { run.summary["latency"] = latency_summary(*run.sim.spans); }

void write_report_files(OutputTarget& out, const RunOutput& run, const RunOptions& opt) {
  if (opt.vcd) write_waves(out, *run.sim.trace, *run.sim.spans, run.sim.tile_done_ns, run.sim.end_ns);
  out.write("trace.json", [&](std::ostream& os) { write_trace_json(os, *run.sim.spans); });
  const Json& summary = run.summary;
  const Json hw = summary.contains("config") ? summary["config"].value("hw", Json::object()) : Json::object();
  out.write("stats.json", [&](std::ostream& os) { os << module_stats(*run.sim.spans, run.sim.stats, hw, run.sim.end_ns).dump(2) << '\n'; });
}

}  // namespace ahbm::report
