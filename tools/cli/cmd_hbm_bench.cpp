// `ahbm-sim hbm-bench`: the bank-level HBM pseudo-channel testbench (hw/bench/hbm_bench.h).
#include <cstring>
#include <fstream>
#include <iostream>

#include "hw/common/base/error.h"
#include "hw/bench/hbm_bench.h"
#include "runtime/io/output_dir.h"
#include "tools/cli/commands.h"
#include "tools/cli/options.h"

namespace po = boost::program_options;

namespace ahbm::cli {

int cmd_hbm_bench(int argc, char** argv) {
  po::options_description desc(
      "usage: ahbm-sim hbm-bench [--pattern sequential|random|stream-write] [--chunk-bytes N] [--bytes N]\n"
      "                          [--write-bytes N --write-every N] [--mapping NAME|LAYOUT] [--refresh all|per-bank|off]\n"
      "                          [--page open|closed] [--queue N] [--inflight N] [--pseudo-channels N] [--seed S]\n"
      "                          [--check] [--hw FILE] [--allow-large]\n"
      "                          [--trace FILE [--trace-format dramsys|ramulator] [--trace-clock-mhz F]]\n"
      "                          [--command-trace FILE] [--out FILE]\n\n"
      "Chunked traffic on one HBM3-6400 pseudo-channel of the bank-level model (docs/hbm.md). --bytes are read\n"
      "in chunks of --chunk-bytes (consecutive, or at random chunk-aligned addresses); a write chunk of\n"
      "--write-bytes follows every --write-every bytes read (stream-write: 512 B per 16 KiB by default).\n"
      "--inflight chunks are outstanding at once (1: one after another, like the PE DMA). Prints one line,\n"
      "then the JSON report (or writes it to --out). --hw FILE: a JSON file whose \"dram\" object overrides\n"
      "the preset (org, timing in tCK, mapping, page, refresh, queue_depth); the options above override it.\n"
      "--trace FILE replays a memory trace instead of the pattern: DRAMSys' STL (\"<cycle>: [(<length>)] read|write\n"
      "<hex address>\", cycles of --trace-clock-mhz, default the DRAM's) or Ramulator's memory trace (\"<hex address>\n"
      "R|W\", back to back); --inflight requests outstanding (default 1024 with --trace). --command-trace FILE\n"
      "writes the commands of the pseudo-channel as DRAMPower's \"<cycle>,<command>,<bank>\" lines (docs/hbm.md).\n"
      "On a terminal, stderr shows the chunks done and an ETA (not with -q; -v: a line per tenth of the chunks).\n\noptions");
  hbm::HbmBenchOptions o;
  std::string mapping, refresh, page, hw, out, seed, trace, trace_format = "dramsys", command_trace;
  double trace_clock_mhz = 0;
  // As text: Boost's conversion to an unsigned type wraps "-1" to 2^64 - 1.
  std::string chunk_bytes = std::to_string(o.chunk_bytes), bytes = std::to_string(o.bytes),
              write_bytes = std::to_string(o.write_bytes), write_every = std::to_string(o.write_every);
  int queue = 0;
  desc.add_options()
      ("help,h", "show this help")
      ("pattern", po::value<std::string>(&o.pattern)->default_value(o.pattern), "sequential | random | stream-write")
      ("chunk-bytes", po::value<std::string>(&chunk_bytes)->default_value(chunk_bytes), "bytes per chunk")
      ("bytes", po::value<std::string>(&bytes)->default_value(bytes), "bytes read in all")
      ("write-bytes", po::value<std::string>(&write_bytes)->default_value(write_bytes), "bytes per write chunk")
      ("write-every", po::value<std::string>(&write_every)->default_value(write_every), "bytes read between writes")
      ("mapping", po::value<std::string>(&mapping), "bg_interleaved | row_interleaved | bank_above_row | \"field:bits ...\"")
      ("refresh", po::value<std::string>(&refresh), "all | per-bank | off (default all)")
      ("page", po::value<std::string>(&page), "open | closed (default open)")
      ("queue", po::value<int>(&queue), "controller queue depth (default 32)")
      ("inflight", po::value<int>(&o.inflight)->default_value(o.inflight), "chunks outstanding at once")
      ("pseudo-channels", po::value<int>(&o.pseudo_channels)->default_value(o.pseudo_channels),
       "pseudo-channels side by side, bursts interleaved over them (a PE's slice: 12)")
      ("seed", po::value<std::string>(&seed)->default_value(std::to_string(o.seed)), "random-pattern seed, 0 to 2^64-1")
      ("check", po::bool_switch(&o.check), "check every command against the timing rules")
      ("hw", po::value<std::string>(&hw), "JSON file with a \"dram\" object")
      ("out,o", po::value<std::string>(&out), "write the JSON report to FILE instead of stdout")
      ("trace", po::value<std::string>(&trace), "replay this memory trace instead of --pattern")
      ("trace-format", po::value<std::string>(&trace_format)->default_value(trace_format), "dramsys | ramulator")
      ("trace-clock-mhz", po::value<double>(&trace_clock_mhz), "clock of a dramsys trace's cycles (default: the DRAM's)")
      ("command-trace", po::value<std::string>(&command_trace),
       "write the DRAM commands to FILE in DRAMPower's command-trace format (--pseudo-channels 1)")
      ("allow-large", po::bool_switch(&o.allow_large),
       "run beyond the work bound (2e7 chunks, 2e8 bursts or 2e7 with --check: about 8 minutes and 1 GiB; docs/hbm.md)");
  const auto vm = parse_command_line(argc, argv, desc);
  if (!vm) return 0;  // --help
  std::optional<OutputTarget> target;  // every --out problem fails here, before the bench runs
  if (!out.empty()) target.emplace(out, OutputKind::file);
  std::optional<OutputTarget> commands_target;
  if (!command_trace.empty()) commands_target.emplace(command_trace, OutputKind::file);
  o.seed = parse_uint_option("seed", seed, 0, UINT64_MAX);  // as text: Boost's conversion wraps "-1"
  o.chunk_bytes = parse_uint_option("chunk-bytes", chunk_bytes, 0, UINT64_MAX);
  o.bytes = parse_uint_option("bytes", bytes, 0, UINT64_MAX);
  o.write_bytes = parse_uint_option("write-bytes", write_bytes, 0, UINT64_MAX);
  o.write_every = parse_uint_option("write-every", write_every, 0, UINT64_MAX);
  Json over = Json::object();
  if (!hw.empty()) {
    const Json file = load_json_file(hw);
    if (!file.is_object() || !file.contains("dram") || !file["dram"].is_object())
      throw InputError(hw + ": needs a \"dram\" object");
    over = file["dram"];
  }
  if (!mapping.empty()) over["mapping"] = mapping;
  if (!refresh.empty()) over["refresh"] = refresh;
  if (!page.empty()) over["page"] = page;
  if (queue) over["queue_depth"] = queue;
  o.spec = hbm::read_dram_spec(JsonReader(over, hw.empty() ? "hbm-bench options" : hw, hw.empty() ? "" : "dram"),
                               hbm::hbm3_6400());
  if (trace.empty() && (trace_format != "dramsys" || trace_clock_mhz != 0))
    throw InputError(std::string(trace_clock_mhz != 0 ? "--trace-clock-mhz" : "--trace-format") + " needs --trace FILE");
  if (!trace.empty()) {
    o.trace = hbm::read_mem_trace(trace, trace_format, o.spec.org.bytes() * uint64_t(std::max(o.pseudo_channels, 1)),
                                  uint64_t(o.spec.org.burst_bytes));
    o.trace_file = trace;
    o.trace_format = trace_format;
    o.trace_clock_mhz = trace_clock_mhz;
    // As a trace player without a limit (DRAMSys' default): the controller's queue holds them back.
    bool inflight_given = false;
    for (int i = 1; i < argc; ++i) inflight_given = inflight_given || std::strncmp(argv[i], "--inflight", 10) == 0;
    if (!inflight_given) o.inflight = 1024;
  }
  o.keep_commands = commands_target.has_value();
  report::ProgressLine progress = stderr_progress(verbosity_of(*vm));
  if (progress.active())
    o.progress = [&progress](uint64_t done, uint64_t total, double now_ns) {
      if (!progress.due(double(done), double(total))) return;
      progress.update(double(done), double(total),
                      "hbm-bench: " + std::to_string(done) + "/" + std::to_string(total) + " chunks | " +
                          report::time_text(now_ns) + " simulated");
    };
  const hbm::HbmBenchResult r = hbm::run_hbm_bench(o);
  progress.clear();
  if (commands_target) commands_target->write([&](std::ostream& os) { hbm::write_drampower_commands(os, r.commands); });
  std::cout << r.line() << "\n";
  if (out.empty()) {
    std::cout << r.to_json().dump(2) << "\n";
  } else {
    target->write([&](std::ostream& os) { os << r.to_json().dump(2) << "\n"; });
    check_stdout();
    target->commit();
  }
  if (commands_target) commands_target->commit();
  return 0;
}

}  // namespace ahbm::cli
