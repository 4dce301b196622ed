#include <iostream>

#include <unistd.h>

#include "hw/chip/watchdog.h"
#include "hw/common/base/error.h"
#include "hw/common/config/hw_config_override.h"
#include "runtime/run/driver.h"
#include "runtime/report/progress.h"
#include "tools/cli/commands.h"
#include "tools/cli/options.h"

namespace po = boost::program_options;

namespace ahbm::cli {

std::optional<po::variables_map> parse_command_line(int argc, char** argv, const po::options_description& desc,
                                                    const char* positional, int positional_count) {
  po::positional_options_description pos;
  if (positional) pos.add(positional, positional_count);
  // Every command's terminal text: progress and notes (docs/outputs.md, "Progress").
  po::options_description all(desc);
  po::options_description text("terminal text (every command)");
  text.add_options()
      ("quiet,q", "no progress, no notes: only the results and errors (--log-level quiet)")
      ("verbose,v", "also a line on stderr per finished item (a sweep's point, a tenth of the workflows), "
                    "terminal or not (--log-level debug)")
      ("log-level", po::value<std::string>(), "quiet | info (default: progress when stderr is a terminal) | debug");
  all.add(text);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  if (vm.count("help")) {
    std::cout << all << "\n";
    return std::nullopt;
  }
  verbosity_of(vm);  // conflicting -q/-v/--log-level fail here, with the other usage errors
  return vm;
}

report::Verbosity verbosity_of(const po::variables_map& vm) {
  report::Verbosity v = report::Verbosity::info;
  if (vm.count("log-level")) {
    const std::string level = vm["log-level"].as<std::string>();
    if (level == "quiet") v = report::Verbosity::quiet;
    else if (level == "info") v = report::Verbosity::info;
    else if (level == "debug") v = report::Verbosity::debug;
    else throw UsageError("--log-level " + level + ": expected quiet, info or debug");
  }
  if (vm.count("quiet") && vm.count("verbose")) throw UsageError("-q and -v: give one of them");
  if ((vm.count("quiet") || vm.count("verbose")) && vm.count("log-level"))
    throw UsageError("--log-level and -q/-v: give one of them");
  if (vm.count("quiet")) v = report::Verbosity::quiet;
  if (vm.count("verbose")) v = report::Verbosity::debug;
  return v;
}

void add_set_option(po::options_description& desc, std::vector<std::string>& overrides) {
  desc.add_options()("set", po::value<std::vector<std::string>>(&overrides)->composing(),
                     "override one hardware-config field, e.g. --set pe.hbm.bandwidth_gbps=25.6 (repeatable; "
                     "dotted path as in the --hw file, checked as the file is; docs/model.md)");
}

int cmd_run(int argc, char** argv, SimulatorPool* sims) {
  po::options_description desc(
      "usage: ahbm-sim run SCENARIO.json --out DIR [--hw HW.json] [--set KEY=VALUE ...] [options]\n\n"
      "Simulates one scenario on the AHBM model and writes, into DIR:\n"
      "  summary.json  total simulated time, per-phase and per-component busy time, numeric check\n"
      "                against a float64 reference, resolved configuration\n"
      "  latency.csv   one row per span: start_ns,end_ns,component,activity,phase,agent,rows,bytes\n"
      "  trace.json    the spans as Chrome trace events: open in ui.perfetto.dev (trace.json.gz with\n"
      "                --trace-gz; both files at the --trace output level, docs/outputs.md)\n"
      "  stats.json    per-module counters: busy time/cycles, bytes, utilisation, high-water marks\n"
      "  power.csv     chip power per window and per energy class, W (--power-window-ns; docs/energy.md)\n"
      "  waves.vcd     state-change waveforms, scopes group/cube/pe, 1 ns time unit (not with --no-vcd)\n"
      "  waves.gtkw    GTKWave save file, with the *.gtkw-filter files it loads: `gtkwave DIR/waves.gtkw`\n"
      "                opens the waveforms grouped, states named, zoomed to the run (docs/waveforms.md)\n"
      "  join.csv      with a \"join\" block: per join strategy, join-input tokens, continuation-prefill and\n"
      "                fan-in time, new KV bytes, KV read per decode token, context use (docs/join.md)\n"
      "  tensors/      q, k, v, mask, o of the fan-out step (KV head 0) as .npy (with --dump-tensors)\n"
      "DIR is written all or nothing (docs/outputs.md). Progress goes to stderr when it is a terminal (not with -q).\n\noptions");
  std::string scenario, out, hw, noc, seed, watchdog, trace, power_window;
  std::string policy = "A", launch = "unified", gemm_mapping, objective = "time";
  std::vector<std::string> overrides;
  desc.add_options()
      ("policy", po::value<std::string>(&policy), "attention policy: A, B1, B2, B3, B4, B5 or auto (default A; docs/policies.md)")
      ("objective", po::value<std::string>(&objective),
       "what auto (and every policy's Q tile choice) minimises in the cost model's estimate: time (default), "
       "energy (the layout's activity priced by energy.*, plus static power over its time) or edp (energy x "
       "time); docs/policies.md")
      ("launch", po::value<std::string>(&launch),
       "kernel launches per step: unified (one for all KV heads, default) or per-head (one per KV head, "
       "host.kernel_launch_ns each, serially; docs/policies.md)")
      ("help,h", "show this help")
      ("scenario", po::value<std::string>(&scenario), "scenario JSON (positional)")
      ("out,o", po::value<std::string>(&out), "output directory (required)")
      ("hw", po::value<std::string>(&hw), "hardware config JSON (default: built-in defaults = hw/configs/default.json)")
      ("noc", po::value<std::string>(&noc), "NoC model (overrides the hw config's noc.model; 'ahbm-sim nocs' lists them)")
      ("seed", po::value<std::string>(&seed), "tensor seed (overrides the scenario's \"seed\"), 0 to 2^63-1")
      ("watchdog-ns", po::value<std::string>(&watchdog),
       "stall watchdog window in [1, 1e15]: simulated ns after the last progress from which processes that "
       "keep waking without progress count as a livelock (default 1e6); a long wait for a scheduled event "
       "is never a stall; a deadlock or livelock exits 4 with which modules wait on what")
      ("no-vcd", "do not write waves.vcd")
      ("trace", po::value<std::string>(&trace),
       "output level of latency.csv and trace.json: tile (every span), step (per-tile PE spans folded per "
       "step), phase (agent and step annotations only), summary (neither file), auto (default: tile up to "
       "250000 spans, step beyond)")
      ("trace-gz", "write trace.json.gz (gzip; Perfetto opens it) instead of trace.json")
      ("power-window-ns", po::value<std::string>(&power_window),
       "window of the power trace (summary.json power, power.csv, waves.vcd chip.power_w, trace.json power "
       "counters), whole ns in [1, 1e12] (default: the smallest of 1, 2, 5 x 10^k ns giving at most 1000 "
       "windows; docs/energy.md)")
      ("dump-tensors", "write tensors/{q,k,v,mask,o}.npy (float32; mask bool, true = may attend)")
      ("no-values", "timing only: no tensors computed, same simulated times, no numeric check")
      ("check", "exit 3 when O differs from the float64 reference by more than the tolerance")
      ("compare-unbatched", "also run every step unbatched (one job per agent); summary.baselines.unbatched")
      ("join-compare", "run every join strategy side by side (scenario with a \"join\" block); table on stdout, DIR/join.csv")
      ("every-layer", "whole model: simulate the operators of every layer, not once per distinct layer (same results; docs/models.md)")
      ("gemm-mapping", po::value<std::string>(&gemm_mapping),
       "whole model: the weight GEMMs' dataflow, w_stationary (default: W sharded in the slices, X broadcast) or "
       "x_stationary (rows split over the PEs, W tiles multicast from their holders; docs/models.md)");
  add_set_option(desc, overrides);
  // Exit codes: 0 ok, 2 bad input, 3 numeric failure (--check, or a NaN/Inf in the datapath),
  // 4 simulation stalled (tools/cli/main.cpp).
  const std::optional<po::variables_map> parsed = parse_command_line(argc, argv, desc, "scenario");
  if (!parsed) return 0;  // --help
  const po::variables_map& vm = *parsed;
  if (scenario.empty()) throw UsageError("missing SCENARIO.json");
  if (out.empty()) throw UsageError("missing --out DIR");
  if (vm.count("dump-tensors") && vm.count("no-values"))
    throw UsageError("--dump-tensors needs values; drop --no-values");

  RunOptions opt;
  if (vm.count("seed")) opt.seed = parse_uint_option("seed", seed, 0, uint64_t(INT64_MAX));
  if (vm.count("watchdog-ns")) opt.watchdog_ns = parse_double_option("watchdog-ns", watchdog, 1.0, kMaxWatchdogNs);
  if (vm.count("trace")) opt.trace = report::parse_trace_level(trace);
  if (vm.count("power-window-ns"))
    opt.power_window_ns = double(parse_uint_option("power-window-ns", power_window, 1, uint64_t(1e12)));
  if (vm.count("noc")) NocRegistry::with_builtin_models().get(noc, "command line", "--noc");
  if (vm.count("gemm-mapping")) opt.gemm_mapping = gemm_mapping_from_name(gemm_mapping, "--gemm-mapping");
  opt.objective = parse_objective(objective, "--objective");
  OutputTarget target(out, OutputKind::directory);  // every --out problem fails here, before simulating
  opt.vcd = !vm.count("no-vcd");
  opt.trace_gz = vm.count("trace-gz") > 0;
  opt.policy = policy;
  opt.launch = launch;  // checked by set_launch_schedule (runtime/plan/policy_report.h) at the first step
  opt.dump_tensors = vm.count("dump-tensors") > 0;
  opt.values = !vm.count("no-values");
  opt.scenario_file = scenario;
  opt.compare_unbatched = vm.count("compare-unbatched") > 0;
  opt.join_compare = vm.count("join-compare") > 0;
  opt.every_layer = vm.count("every-layer") > 0;
  opt.progress = report::terminal_progress(std::cerr, STDERR_FILENO, verbosity_of(*parsed));
  opt.sims = sims;
  const Scenario sc = load_scenario(scenario);
  if (opt.join_compare && !sc.join)
    throw UsageError("--join-compare needs a scenario with a \"join\" block (docs/scenarios.md, join phase)");
  HwConfig cfg = load_hw_config(hw, overrides);
  if (!hw.empty()) opt.hw_file = hw;
  if (!noc.empty()) cfg.noc.model = noc;  // the model's params still come from the hw config
  const RunOutput run = execute(sc, cfg, opt);
  write_run_files(target, run, opt);

  const RunSummary& s = run.summary;
  std::cout << "scenario " << sc.name << ": " << s.rows << " Q rows per KV head at the fan-out, "
            << sc.shared_prefix_tokens << " shared-prefix tokens on " << cfg.pes_per_group() << " PEs, "
            << s.steps.size() << " steps; simulated " << s.total_ns << " ns\n";
  if (opt.compare_unbatched) std::cout << "unbatched baseline: " << s.baselines.unbatched->total_ns << " ns\n";
  if (opt.values)
    std::cout << "numeric check vs float64: max_abs_err " << s.numerics.max_abs_err << " ("
              << (s.numerics.pass ? "pass" : "FAIL") << ", tolerance " << opt.tolerance << ")\n";
  if (!run.join_table.empty()) std::cout << "join (scenario strategy " << s.join["strategy"].get<std::string>() << "):\n" << run.join_table;
  std::cout << "outputs in " << out << "\n";
  check_stdout();   // a lost summary line fails the run before its directory is put in place
  target.commit();
  if (vm.count("check") && opt.values && !s.numerics.pass) return 3;
  return 0;
}

}  // namespace ahbm::cli
