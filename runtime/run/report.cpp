#include "runtime/run/report.h"

#include "runtime/report/gzip_stream.h"
#include "runtime/report/latency.h"
#include "runtime/report/power.h"
#include "runtime/report/stats_json.h"
#include "runtime/report/trace_json.h"
#include "runtime/report/trace_level.h"
#include "runtime/report/waves.h"

namespace ahbm::report {

void write_report_files(OutputTarget& out, const RunOutput& run, const RunOptions& opt) {
  const SpanRecorder& all = *run.sim.spans;
  const TraceLevel level = resolve_trace_level(opt.trace, all.spans().size());
  if (level != TraceLevel::summary) {
    // The tile level is the record itself; coarser levels fold or drop spans (trace_level.h).
    SpanRecorder folded;
    if (level != TraceLevel::tile) folded = spans_at_level(all, level);
    const SpanRecorder& spans = level == TraceLevel::tile ? all : folded;
    out.write("latency.csv", [&](std::ostream& os) { write_latency_csv(os, spans); });
    if (opt.trace_gz) {
      out.write("trace.json.gz", [&](std::ostream& os) {
        GzipOstream gz(os);
        write_trace_json(gz, spans, &run.power);
        gz.finish();
      });
    } else {
      out.write("trace.json", [&](std::ostream& os) { write_trace_json(os, spans, &run.power); });
    }
  }
  if (opt.vcd) write_waves(out, *run.sim.trace, all, run.sim.tile_done_ns, run.sim.end_ns, &run.power);
  out.write("power.csv", [&](std::ostream& os) { write_power_csv(os, run.power); });
  const Json& hw = run.summary.config.hw.is_null() ? Json::object() : run.summary.config.hw;
  out.write("stats.json", [&](std::ostream& os) { os << module_stats(all, run.sim.stats, hw, run.sim.end_ns).dump(2) << '\n'; });
}

}  // namespace ahbm::report
