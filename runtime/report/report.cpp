#include "runtime/report/report.h"

#include <fstream>
#include <stdexcept>

#include "runtime/report/latency.h"
#include "runtime/report/stats_json.h"
#include "runtime/report/trace_json.h"
#include "runtime/report/waves.h"

namespace ahbm::report {

void add_latency(RunOutput& run) { run.summary["latency"] = latency_summary(*run.sim.spans); }

void write_report_files(const std::string& dir, const RunOutput& run, const RunOptions& opt) {
  if (opt.vcd) write_waves(dir, *run.sim.trace, *run.sim.spans, run.sim.tile_done_ns, run.sim.end_ns);
  {
    std::ofstream t(dir + "/trace.json");
    write_trace_json(t, *run.sim.spans);
    t.close();  // flush now: a write error in the last buffer must not go unnoticed
    if (!t) throw std::runtime_error("cannot write trace.json");
  }
  std::ofstream s(dir + "/stats.json");
  const Json& summary = run.summary;
  const Json hw = summary.contains("config") ? summary["config"].value("hw", Json::object()) : Json::object();
  s << module_stats(*run.sim.spans, run.sim.stats, hw, run.sim.end_ns).dump(2) << '\n';
  s.close();
  if (!s) throw std::runtime_error("cannot write stats.json");
}

}  // namespace ahbm::report
