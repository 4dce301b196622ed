// The Python module `ahbm` (pybind11): the simulator in-process, results as Python objects.
//   ahbm.run(scenario, hw=None, ...)      one scenario -> {"summary": dict, "o": [ndarray], "spans": columns}
//   ahbm.Simulator(hw=None, ...).run(...) the same, with elaborated chips kept between runs
//   ahbm.serve(workload, hw=None, ...)    one serving workload -> {"summary": dict, "requests": columns}
//   ahbm.Simulator(...).serve(...)        the same, on the simulator's elaborated chips
//   ahbm.noc_bench([...])                 `ahbm-sim noc-bench` -> its JSON report as a dict
//   ahbm.cli([...])                       any ahbm-sim command -> (exit status, stdout, stderr)
//   ahbm.run_points(jobs)                 tools/sweep's in-process runner (one `run` or `serve` per job)
// Scenarios and hardware configs are dicts or file paths, parsed and checked exactly as the CLI
// parses them; errors raise ahbm.InputError (a ValueError) etc. with the same field-path message.
// docs/python.md.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cblas.h>

#include "hw/chip/watchdog.h"
#include "hw/common/base/error.h"
#include "hw/common/config/hw_config_override.h"
#include "hw/common/base/json_reader.h"
#include "runtime/run/driver.h"
#include "runtime/serve/engine.h"
#include "runtime/serve/serve_report.h"
#include "runtime/serve/workload.h"
#include "runtime/io/version.h"
#include "tools/cli/commands.h"

namespace py = pybind11;

// libsystemc's main() refers to sc_main; a Python extension has no program of its own, and
// without a definition the module would not load (Python resolves every symbol at dlopen). It
// must be visible: pybind11 builds the module with hidden symbols.
__attribute__((visibility("default"))) int sc_main(int, char**) { return 1; }

namespace ahbm::python {

namespace {

// libsystemc has one simulation kernel per process: two Python threads simulating at once (the
// GIL is released while a chip runs) corrupted it (abort, segfault). Every call that elaborates,
// runs or destroys a chip holds this lock, the one process-wide state of the module, as the kernel
// it guards is. It is only ever waited for with the GIL released (exclusive()): its holder takes
// the GIL back now and then to look for Ctrl-C (check_interrupt()).
std::mutex& kernel_lock() {
  static std::mutex m;
  return m;
}

// Runs `f` with the GIL released (other Python threads run meanwhile) and the kernel to itself.
template <class F>
auto exclusive(F&& f) {
  py::gil_scoped_release release;
  std::lock_guard<std::mutex> lock(kernel_lock());
  return f();
}

// While the GIL is released, Python's SIGINT handler only notes Ctrl-C. Called between slices of
// simulated time and between serve steps: runs the pending signal handlers (the main thread
// only) and turns their exception (KeyboardInterrupt) into a C++ one that unwinds the simulation,
// drops its chip and removes a partial out= directory; pybind11 raises it again in Python.
void check_interrupt() {
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
}

Json to_json_value(const py::handle& obj) {
  return Json::parse(py::module_::import("json").attr("dumps")(obj, py::arg("allow_nan") = false).cast<std::string>());
}

// A JSON value as a Python object, walked (no JSON text in between): the object json.loads(j.dump())
// gives. Objects become dicts in the value's key order (nlohmann's: sorted), integers ints,
// numbers floats (the same double; a non-finite one, which dump() writes as null, None),
// strings str, booleans bool, null None.
py::object to_python(const Json& j) {
  switch (j.type()) {
    case Json::value_t::object: {
      py::dict d;
      for (auto it = j.begin(); it != j.end(); ++it) d[py::str(it.key())] = to_python(it.value());
      return std::move(d);
    }
    case Json::value_t::array: {
      py::list l;
      for (const Json& e : j) l.append(to_python(e));
      return std::move(l);
    }
    case Json::value_t::string:
      return py::str(j.get_ref<const std::string&>());
    case Json::value_t::boolean:
      return py::bool_(j.get<bool>());
    case Json::value_t::number_integer:
      return py::int_(j.get<int64_t>());
    case Json::value_t::number_unsigned:
      return py::int_(j.get<uint64_t>());
    case Json::value_t::number_float: {
      const double v = j.get<double>();
      if (!std::isfinite(v)) return py::none();
      return py::float_(v);
    }
    case Json::value_t::null:
      return py::none();
    default:  // binary and discarded values: no summary or report holds them
      throw InternalError("to_python: a JSON value of type " + std::string(j.type_name()));
  }
}

// The path a str or os.PathLike names; nothing for any other object.
std::optional<std::string> path_of(const py::object& obj) {
  if (!py::isinstance<py::str>(obj) && !py::hasattr(obj, "__fspath__")) return std::nullopt;
  return py::str(py::module_::import("os").attr("fspath")(obj)).cast<std::string>();
}

// A scenario from a dict or a path.
Scenario scenario_of(const py::object& scenario, RunOptions& opt) {
  if (const auto path = path_of(scenario)) {
    opt.scenario_file = *path;
    return load_scenario(opt.scenario_file);
  }
  if (!py::isinstance<py::dict>(scenario)) throw InputError("scenario: expected a dict or a path, got " + std::string(py::str(py::type::of(scenario).attr("__name__"))));
  opt.scenario_file = "(scenario dict)";
  return parse_scenario(to_json_value(scenario), opt.scenario_file);
}

// A hardware config from None (the built-in defaults), a dict or a path, with `set` overrides.
HwConfig hw_of(const py::object& hw, const std::vector<std::string>& overrides, const std::optional<std::string>& noc,
               std::string& name) {
  HwConfig cfg;
  if (hw.is_none()) {
    name = "(built-in defaults)";
    cfg = load_hw_config("", overrides);
  } else if (const auto path = path_of(hw)) {
    name = *path;
    cfg = load_hw_config(name, overrides);
  } else if (py::isinstance<py::dict>(hw)) {
    name = "(hw dict)";
    cfg = parse_hw_config(to_json_value(hw), name, overrides);
  } else {
    throw InputError("hw: expected None, a dict or a path");
  }
  if (noc) {
    NocRegistry::with_builtin_models().get(*noc, "noc", "noc");  // an unknown name is an InputError
    cfg.noc.model = *noc;
  }
  return cfg;
}

// The spans as columns (what latency.csv holds): pandas.DataFrame(result["spans"]) takes them.
py::dict span_columns(const SpanRecorder& rec) {
  // latency.csv's row order (runtime/report/latency.cpp): by start time, ties in recording order.
  std::vector<const Span*> spans;
  spans.reserve(rec.spans().size());
  for (const Span& x : rec.spans()) spans.push_back(&x);
  std::stable_sort(spans.begin(), spans.end(), [](const Span* a, const Span* b) { return a->start < b->start; });
  const size_t n = spans.size();
  py::array_t<double> start(n), end(n);
  py::array_t<int64_t> rows(n), bytes(n);
  py::list component, activity, phase, agent;
  auto s = start.mutable_unchecked<1>();
  auto e = end.mutable_unchecked<1>();
  auto r = rows.mutable_unchecked<1>();
  auto b = bytes.mutable_unchecked<1>();
  for (size_t i = 0; i < n; ++i) {
    const Span& x = *spans[i];
    s(py::ssize_t(i)) = x.start.to_seconds() * 1e9;
    e(py::ssize_t(i)) = x.end.to_seconds() * 1e9;
    r(py::ssize_t(i)) = x.rows;
    b(py::ssize_t(i)) = x.bytes;
    component.append(rec.name(x.component));
    activity.append(rec.name(x.activity));
    phase.append(rec.name(x.phase));
    agent.append(rec.name(x.agent));
  }
  py::dict cols;
  cols["start_ns"] = start;
  cols["end_ns"] = end;
  cols["component"] = component;
  cols["activity"] = activity;
  cols["phase"] = phase;
  cols["agent"] = agent;
  cols["rows"] = rows;
  cols["bytes"] = bytes;
  return cols;
}

// A CSV table (header row, then rows; no quoted fields) as columns, each typed as
// pandas.read_csv types the file's column: an int64 array where every cell is an integer, a
// float64 array where every cell is a number, else a list of str. serve() returns requests.csv
// this way, so the columns are exactly the file's (one writer, serve_report.cpp).
py::dict csv_columns(const std::string& csv) {
  std::vector<std::vector<std::string>> cells;  // per column
  std::vector<std::string> names;
  std::istringstream lines(csv);
  std::string line;
  for (bool header = true; std::getline(lines, line); header = false) {
    std::vector<std::string> fields;
    std::istringstream row(line);
    for (std::string f; std::getline(row, f, ',');) fields.push_back(f);
    if (header) {
      names = fields;
      cells.resize(names.size());
    } else {
      for (size_t c = 0; c < names.size(); ++c) cells[c].push_back(c < fields.size() ? fields[c] : "");
    }
  }
  py::dict cols;
  for (size_t c = 0; c < names.size(); ++c) {
    std::vector<int64_t> integers;
    for (const std::string& x : cells[c]) {
      int64_t v = 0;
      const char* last = x.data() + x.size();
      const auto [end, ec] = std::from_chars(x.data(), last, v);
      if (x.empty() || ec != std::errc() || end != last) break;
      integers.push_back(v);
    }
    std::vector<double> numbers;
    if (integers.size() != cells[c].size()) {
      for (const std::string& x : cells[c]) {
        char* end = nullptr;
        const double v = x.empty() ? 0 : std::strtod(x.c_str(), &end);
        if (x.empty() || *end != '\0') break;
        numbers.push_back(v);
      }
    }
    if (integers.size() == cells[c].size()) {
      py::array_t<int64_t> a(py::ssize_t(integers.size()));
      std::copy(integers.begin(), integers.end(), a.mutable_data());
      cols[py::str(names[c])] = a;
    } else if (numbers.size() == cells[c].size()) {
      py::array_t<double> a(py::ssize_t(numbers.size()));
      std::copy(numbers.begin(), numbers.end(), a.mutable_data());
      cols[py::str(names[c])] = a;
    } else {
      py::list l;
      for (const std::string& x : cells[c]) l.append(x);
      cols[py::str(names[c])] = l;
    }
  }
  return cols;
}

// seed=: None, or an int in [0, 2^64 - 1]; a bool (an int to Python) was taken as 0 or 1.
std::optional<uint64_t> seed_of(const py::object& seed) {
  if (seed.is_none()) return std::nullopt;
  const std::string bad = "seed: value " + std::string(py::repr(seed)) + " is not an integer in [0, 18446744073709551615]";
  if (!py::isinstance<py::int_>(seed) || py::isinstance<py::bool_>(seed)) throw InputError(bad);
  try {
    return seed.cast<uint64_t>();
  } catch (const py::cast_error&) {
    throw InputError(bad);
  }
}

// A serving workload from a dict or a path.
serve::Workload workload_of(const py::object& workload) {
  if (const auto path = path_of(workload)) return serve::load_workload(*path);
  if (!py::isinstance<py::dict>(workload))
    throw InputError("workload: expected a dict or a path, got " +
                     std::string(py::str(py::type::of(workload).attr("__name__"))));
  return serve::parse_workload(to_json_value(workload), "(workload dict)");
}

py::dict result_of(const RunOutput& run) {
  py::dict out;
  out["summary"] = to_python(to_json(run.summary));
  py::list o;
  for (const MatrixRM& m : run.sim.outputs) {
    py::array_t<float> a({py::ssize_t(m.rows()), py::ssize_t(m.cols())});
    std::copy(m.data(), m.data() + m.size(), a.mutable_data());
    o.append(a);
  }
  out["o"] = o;
  out["spans"] = run.sim.spans ? span_columns(*run.sim.spans) : py::dict();
  return out;
}

// One in-process simulator: a hardware config and the chips elaborated for it so far.
class PySimulator {
 public:
  PySimulator(const py::object& hw, const std::vector<std::string>& set, const std::optional<std::string>& noc)
      : cfg_(hw_of(hw, set, noc, hw_name_)) {}

  py::dict run(const py::object& scenario, const std::string& policy, const py::object& seed_arg, bool values,
               bool vcd, double watchdog_ns, const std::optional<std::string>& out, const std::string& launch,
               bool compare_unbatched, const std::string& trace, bool trace_gz, const std::string& gemm_mapping,
               std::optional<int64_t> power_window_ns, const std::string& objective) {
    RunOptions opt;
    opt.policy = policy;
    opt.objective = parse_objective(objective, "objective");
    opt.seed = seed_of(seed_arg);
    opt.values = values;
    opt.vcd = vcd;
    opt.launch = launch;  // checked at the first step, as the CLI's --launch
    opt.compare_unbatched = compare_unbatched;
    opt.trace = report::parse_trace_level(trace);
    opt.trace_gz = trace_gz;
    opt.gemm_mapping = gemm_mapping_from_name(gemm_mapping, "gemm_mapping");
    if (power_window_ns) {  // as the CLI's --power-window-ns: [1, 1e12] ns
      if (*power_window_ns < 1 || *power_window_ns > int64_t(1e12))
        throw InputError("power_window_ns: value " + std::to_string(*power_window_ns) + " is out of range [1, 1e12]");
      opt.power_window_ns = double(*power_window_ns);
    }
    opt.watchdog_ns = watchdog_ns;
    opt.hw_file = hw_name_;
    opt.sims = sims_.get();
    check_watchdog_window(watchdog_ns, "watchdog_ns");  // as the CLI: [1, kMaxWatchdogNs] ns
    if (watchdog_ns < 1)
      throw InputError("watchdog_ns: value " + std::to_string(watchdog_ns) + " is out of range [1, 1e+15]");
    opt.progress = [](const SimProgress&) { check_interrupt(); };  // results are the same with it
    std::optional<OutputTarget> target;  // every out problem fails here, before simulating
    if (out) target.emplace(*out, OutputKind::directory, /*handle_signals=*/false);
    const Scenario sc = scenario_of(scenario, opt);
    RunOutput run = exclusive([&] { return execute(sc, cfg_, opt); });
    if (target) {
      write_run_files(*target, run, opt);
      target->commit();
    }
    return result_of(run);
  }
  py::dict serve(const py::object& workload, const std::optional<std::string>& scheduler,
                 const py::object& seed_arg, std::optional<double> rate_per_s, const std::optional<std::string>& out,
                 bool vcd, const std::string& gemm_mapping, std::optional<double> stop_at_s) {
    const GemmMapping mapping = gemm_mapping_from_name(gemm_mapping, "gemm_mapping");
    // As the CLI's --stop-at-s: a window [0, T] s of the workload, the summary `partial`.
    if (stop_at_s && !(*stop_at_s >= 1e-9 && *stop_at_s <= 1e9))
      throw InputError("stop_at_s: " + Json(*stop_at_s).dump() + " is out of range [1e-09, 1e+09] s");  // as rate_per_s
    std::optional<OutputTarget> target;  // every out problem fails here, before simulating
    if (out) target.emplace(*out, OutputKind::directory, /*handle_signals=*/false);
    serve::Workload w = workload_of(workload);
    serve::WorkloadOverrides changes;
    changes.seed = seed_of(seed_arg);
    changes.rate_per_s = rate_per_s;
    changes.scheduler = scheduler.value_or("");
    serve::apply_overrides(w, changes, "serve()");
    serve::ServeOptions opt;
    opt.hw_file = hw_name_;
    opt.scheduler = changes.scheduler;
    opt.sims = sims_.get();
    opt.gemm_mapping = mapping;
    opt.poll = check_interrupt;
    if (stop_at_s) opt.stop_at_ns = *stop_at_s * 1e9;
    const serve::ServeResult r = exclusive([&] { return serve::serve(w, cfg_, opt); });
    const serve::ServeSummary summary = serve::serve_summary(w, cfg_, r);
    if (target) {
      serve::write_serve_files(*target, summary, r, vcd);
      target->commit();
    }
    py::dict result;
    result["summary"] = to_python(serve::to_json(summary));
    result["requests"] = csv_columns(serve::requests_csv(r));
    if (vcd) result["vcd"] = serve::serve_vcd(r);  // the text of waves.vcd, with or without out
    return result;
  }
  int elaborations() const { return sims_->elaborations(); }
  ~PySimulator() {  // its chips are the kernel's: destroyed while no other thread simulates
    exclusive([&] {
      sims_.reset();
      return 0;
    });
  }

 private:
  std::string hw_name_;
  HwConfig cfg_;
  std::unique_ptr<SimulatorPool> sims_ = std::make_unique<SimulatorPool>();
};

// A new directory only this process can enter (mkdtemp under $TMPDIR or /tmp, mode 0700), removed
// with what it holds.
class PrivateDir {
 public:
  PrivateDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ahbm-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      throw OutputError("cannot create a temporary directory " + pattern + ": " + std::strerror(errno));
    path_ = pattern;
  }
  ~PrivateDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  PrivateDir(const PrivateDir&) = delete;
  PrivateDir& operator=(const PrivateDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Runs an ahbm-sim command in-process; stdout and stderr of the command are captured.
struct CliResult {
  int code;
  std::string out, err;
};
CliResult run_cli(const std::vector<std::string>& args, SimulatorPool* sims) {
  if (args.empty()) throw InputError("cli: expected a command and its arguments, e.g. [\"run\", \"scenario.json\", ...]");
  std::vector<std::string> owned = args;
  std::vector<char*> argv;
  for (std::string& a : owned) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::ostringstream out, err;
  const int code = exclusive([&] {  // std::cout is the process's too
    std::streambuf* old_out = std::cout.rdbuf(out.rdbuf());
    try {
      cli::CommandContext ctx;
      ctx.sims = sims;
      const int c = cli::run_command(int(owned.size()), argv.data(), ctx, err);
      std::cout.rdbuf(old_out);
      return c;
    } catch (...) {
      std::cout.rdbuf(old_out);
      throw;
    }
  });
  return {code, out.str(), err.str()};
}

// The docstrings help() shows after pybind11's signature line: every argument with its type, unit
// and default. tools/python/ahbm/__init__.pyi declares the same signatures; the test
// PythonModule.MatchesTheCli holds the stubs, the signatures and these texts to the same arguments.
#define AHBM_HW_ARGS                                                                                      \
  "    hw: None (the default: built-in defaults, hw/configs/default.json), a dict (a hardware\n"           \
  "        config's JSON, docs/configuration.md) or a path (str or os.PathLike) to one.\n"                 \
  "    set: list of str, default []. Overrides 'key.path=value' as ahbm-sim's --set takes them, e.g.\n"    \
  "        ['pe.hbm.bandwidth_gbps=25.6'], each checked as the file's field is (unit: the field's).\n"     \
  "    noc: str or None, default None (the config's noc.model). A NoC model name, as --noc\n"              \
  "        ('ahbm-sim nocs' lists them).\n"

#define AHBM_RUN_ARGS                                                                                     \
  "    policy: str, default 'A'. Attention policy, as --policy: A, B1, B2, B3, B4, B5 or auto\n"           \
  "        (docs/policies.md).\n"                                                                          \
  "    objective: str, default 'time'. What auto and the Q tile choice minimise, as --objective:\n"       \
  "        time, energy or edp (docs/policies.md).\n"                                                      \
  "    seed: int or None, default None (the scenario's \"seed\"). Tensor seed, as --seed, 0 to 2^63-1.\n" \
  "    values: bool, default True. False: timing only (--no-values): no tensors computed, the same\n"     \
  "        simulated times, no numeric check; 'o' then holds empty arrays.\n"                              \
  "    vcd: bool, default False. With out=DIR, also write waves.vcd (the CLI writes it unless\n"          \
  "        --no-vcd).\n"                                                                                   \
  "    watchdog_ns: float, default 1e6, simulated ns in [1, 1e15]. Stall watchdog window, as\n"          \
  "        --watchdog-ns (docs/reliability.md); a stall raises StallError.\n"                              \
  "    out: str or None, default None. A directory: also write the run directory there, as --out\n"     \
  "        does (docs/outputs.md).\n"                                                                      \
  "    launch: str, default 'unified'. Kernel launches per step, as --launch: unified or per-head.\n"    \
  "    compare_unbatched: bool, default False. As --compare-unbatched: also run every step unbatched\n"   \
  "        (summary['baselines']['unbatched']).\n"                                                         \
  "    trace: str, default 'auto'. Output level of latency.csv, trace.json and 'spans', as --trace:\n"   \
  "        tile, step, phase, summary (no spans) or auto.\n"                                               \
  "    trace_gz: bool, default False. With out=DIR, write trace.json.gz instead of trace.json\n"          \
  "        (--trace-gz).\n"                                                                                \
  "    gemm_mapping: str, default 'w_stationary'. A whole model's weight-GEMM dataflow, as\n"            \
  "        --gemm-mapping: w_stationary or x_stationary (docs/models.md).\n"                               \
  "    power_window_ns: int or None, default None (the smallest of 1, 2, 5 x 10^k ns giving at most\n"  \
  "        1000 windows). Power-trace window, whole ns in [1, 1e12], as --power-window-ns\n"               \
  "        (docs/energy.md).\n"

#define AHBM_RUN_RETURNS                                                                                  \
  "\nReturns a dict:\n"                                                                                    \
  "    'summary': dict, summary.json (keys in its order; a non-finite number is None).\n"                  \
  "    'o': list of float32 ndarrays (rows x head_dim), O of the fan-out step, one per job (KV head);\n"  \
  "        o[0] is tensors/o.npy of --dump-tensors, bit for bit.\n"                                        \
  "    'spans': dict of columns, latency.csv's rows in its order (by start time, ties in recording\n"     \
  "        order): start_ns, end_ns (float64 ndarrays, ns), component, activity, phase, agent (lists\n"   \
  "        of str), rows, bytes (int64 ndarrays); pandas.DataFrame(result['spans']) takes it as is.\n"     \
  "Raises InputError (a bad scenario, config or argument, with the CLI's field-path message),\n"          \
  "NumericError, StallError, OutputError, InternalError; KeyboardInterrupt on Ctrl-C.\n"

#define AHBM_SERVE_ARGS                                                                                   \
  "    scheduler: str or None, default None (the workload's scheduler.policy). As --scheduler: fcfs\n"    \
  "        or srf.\n"                                                                                      \
  "    seed: int or None, default None (the workload's \"seed\"). Workload seed, as --seed, 0 to\n"       \
  "        2^63-1.\n"                                                                                      \
  "    rate_per_s: float or None, default None (the workload's arrival.rate_per_s). Poisson arrival\n"    \
  "        rate, requests per second in [1e-6, 1e12], as --rate-per-s.\n"                                  \
  "    out: str or None, default None. A directory: also write the serve directory there, as --out.\n"  \
  "    vcd: bool, default False. As --vcd: add 'vcd' to the result (and waves.vcd to out=DIR).\n"         \
  "    gemm_mapping: str, default 'w_stationary'. A whole model's weight-GEMM dataflow, as\n"            \
  "        --gemm-mapping: w_stationary or x_stationary (docs/models.md).\n"                               \
  "    stop_at_s: float or None, default None. As --stop-at-s: end the run at this simulated time,\n"    \
  "        seconds in [1e-9, 1e9] (a window of a long trace; the summary's 'partial' says so).\n"        \
  "\nReturns a dict:\n"                                                                                    \
  "    'summary': dict, the serve summary.json.\n"                                                         \
  "    'requests': dict of columns, requests.csv's rows in its order, each column typed as\n"             \
  "        pandas.read_csv types the file's: an int64 ndarray where every value is an integer (ids,\n"    \
  "        token counts, cancelled), a float64 ndarray where every value is a number (times in ns,\n"     \
  "        energy_j in J), else a list of str (template).\n"                                               \
  "    'vcd': str, only with vcd=True: the text of waves.vcd, byte-identical to ahbm-sim serve --vcd's.\n" \
  "Raises InputError, OutputError, InternalError as run() does; KeyboardInterrupt on Ctrl-C.\n"

constexpr const char* kRunDoc =
    "Simulates one scenario on a chip of its own: Simulator(hw, set=set, noc=noc).run(scenario, ...).\n"
    "\nArguments:\n"
    "    scenario: a dict (the scenario JSON, docs/scenarios.md) or a path (str or os.PathLike) to one.\n"
    AHBM_HW_ARGS AHBM_RUN_ARGS AHBM_RUN_RETURNS;
constexpr const char* kSimulatorRunDoc =
    "Simulates one scenario on this simulator's hardware config, reusing the chips it elaborated\n"
    "before (results are the same as on a new chip).\n"
    "\nArguments:\n"
    "    scenario: a dict (the scenario JSON, docs/scenarios.md) or a path (str or os.PathLike) to one.\n"
    AHBM_RUN_ARGS AHBM_RUN_RETURNS;
constexpr const char* kServeDoc =
    "Serves one workload (timing only) on a chip of its own: Simulator(hw, set=set, noc=noc).serve(...).\n"
    "\nArguments:\n"
    "    workload: a dict (the workload JSON, docs/serving.md; its scenario and arrival.file relative\n"
    "        to the current directory) or a path (str or os.PathLike) to one.\n"
    AHBM_HW_ARGS AHBM_SERVE_ARGS;
constexpr const char* kSimulatorServeDoc =
    "Serves one workload (timing only) on this simulator's hardware config and its elaborated chips.\n"
    "\nArguments:\n"
    "    workload: a dict (the workload JSON, docs/serving.md; its scenario and arrival.file relative\n"
    "        to the current directory) or a path (str or os.PathLike) to one.\n"
    AHBM_SERVE_ARGS;
constexpr const char* kSimulatorInitDoc =
    "A hardware config and the chips elaborated for it, kept between runs (run(), serve()).\n"
    "\nArguments:\n" AHBM_HW_ARGS;
constexpr const char* kCliDoc =
    "Runs one ahbm-sim command in-process, e.g. cli(['run', 'traces/fanout_8x20.json', '--out', 'r']).\n"
    "\nArguments:\n"
    "    args: list of str, no default. The command and its arguments as on ahbm-sim's command line.\n"
    "\nReturns (exit status: int, stdout: str, stderr: str), with the CLI's exit codes (0 ok, 1 output\n"
    "or internal error, 2 bad input, 3 numeric failure, 4 stall) and messages.\n";
constexpr const char* kNocBenchDoc =
    "`ahbm-sim noc-bench ARGS` in-process, e.g. noc_bench(['--noc', 'mesh', '--rate', '0.1']).\n"
    "\nArguments:\n"
    "    args: list of str, no default. noc-bench's arguments without --out (ahbm-sim noc-bench --help).\n"
    "\nReturns its JSON report as a dict; a bad argument raises InputError with the CLI's message.\n";
constexpr const char* kRunPointsDoc =
    "tools/sweep's in-process runner: as many `ahbm-sim run` / `serve` calls on shared elaborated chips.\n"
    "\nArguments:\n"
    "    jobs: list of dicts, no default. Each {'command': 'run' (default) or 'serve', 'scenario' (run)\n"
    "        or 'workload' (serve): a path, 'hw': a path, 'out': a directory, 'args': list of str\n"
    "        (optional: more command-line arguments)}.\n"
    "\nReturns [(exit status: int, message: str)], one per job, in order.\n";

}  // namespace

// Built as ahbm._ahbm, re-exported by the package ahbm (tools/python/ahbm/__init__.py).
PYBIND11_MODULE(_ahbm, m) {
  // As the CLI does (tools/cli/main.cpp): no SystemC banner, one BLAS thread per simulation.
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  openblas_set_num_threads(1);
  m.doc() = "ahbm-sim in-process: cycle-approximate SystemC/TLM-2.0 model of AHBM (docs/python.md; help(ahbm.run))";
  m.attr("__version__") = simulator_version();
  m.attr("commit") = simulator_commit();

  // The CLI's error classes (hw/common/base/error.h), each with the CLI's exit code as `exit_code`.
  static py::exception<InputError> input_error(m, "InputError", PyExc_ValueError);
  static py::exception<NumericFault> numeric_error(m, "NumericError", PyExc_ArithmeticError);
  static py::exception<SimStall> stall_error(m, "StallError", PyExc_RuntimeError);
  static py::exception<OutputError> output_error(m, "OutputError", PyExc_OSError);
  static py::exception<InternalError> internal_error(m, "InternalError", PyExc_RuntimeError);
  input_error.attr("exit_code") = 2;
  numeric_error.attr("exit_code") = 3;
  stall_error.attr("exit_code") = 4;
  output_error.attr("exit_code") = 1;
  internal_error.attr("exit_code") = 1;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      input_error(e.what());
    } catch (const NumericFault& e) {
      numeric_error(e.what());
    } catch (const SimStall& e) {
      stall_error(e.what());
    } catch (const OutputError& e) {
      output_error(e.what());
    } catch (const InternalError& e) {
      internal_error(e.what());
    } catch (const Interrupted& e) {
      PyErr_SetInterrupt();
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    } catch (const py::error_already_set&) {
      throw;  // a Python exception (KeyboardInterrupt from check_interrupt) goes back as it was
    } catch (const py::builtin_exception&) {
      throw;  // pybind11's own (a TypeError of an argument's conversion)
    } catch (const std::bad_alloc&) {
      throw;  // MemoryError
    } catch (const std::exception& e) {
      internal_error(e.what());  // any other failure is an internal error, as the CLI's exit 1
    }
  });

  py::class_<PySimulator>(m, "Simulator",
                          "A hardware config and the chips elaborated for it: runs of scenarios on it reuse them "
                          "(results are the same as on a new chip).")
      .def(py::init<const py::object&, const std::vector<std::string>&, const std::optional<std::string>&>(),
           py::arg("hw") = py::none(), py::arg("set") = std::vector<std::string>{}, py::arg("noc") = py::none(),
           kSimulatorInitDoc)
      .def("run", &PySimulator::run, py::arg("scenario"), py::kw_only(), py::arg("policy") = "A",
           py::arg("seed") = py::none(), py::arg("values") = true, py::arg("vcd") = false,
           py::arg("watchdog_ns") = 1e6, py::arg("out") = py::none(), py::arg("launch") = "unified",
           py::arg("compare_unbatched") = false, py::arg("trace") = "auto", py::arg("trace_gz") = false,
           py::arg("gemm_mapping") = "w_stationary", py::arg("power_window_ns") = py::none(),
           py::arg("objective") = "time", kSimulatorRunDoc)
      .def("serve", &PySimulator::serve, py::arg("workload"), py::kw_only(), py::arg("scheduler") = py::none(),
           py::arg("seed") = py::none(), py::arg("rate_per_s") = py::none(), py::arg("out") = py::none(),
           py::arg("vcd") = false, py::arg("gemm_mapping") = "w_stationary", py::arg("stop_at_s") = py::none(),
           kSimulatorServeDoc)
      .def_property_readonly("elaborations", &PySimulator::elaborations, "chips elaborated so far");

  m.def(
      "serve",
      [](const py::object& workload, const py::object& hw, const std::vector<std::string>& set,
         const std::optional<std::string>& noc, const std::optional<std::string>& scheduler,
         const py::object& seed_arg, std::optional<double> rate_per_s, const std::optional<std::string>& out,
         bool vcd, const std::string& gemm_mapping, std::optional<double> stop_at_s) {
        return PySimulator(hw, set, noc).serve(workload, scheduler, seed_arg, rate_per_s, out, vcd, gemm_mapping, stop_at_s);
      },
      py::arg("workload"), py::arg("hw") = py::none(), py::kw_only(), py::arg("set") = std::vector<std::string>{},
      py::arg("noc") = py::none(), py::arg("scheduler") = py::none(), py::arg("seed") = py::none(),
      py::arg("rate_per_s") = py::none(), py::arg("out") = py::none(), py::arg("vcd") = false,
      py::arg("gemm_mapping") = "w_stationary", py::arg("stop_at_s") = py::none(),
      kServeDoc);

  m.def(
      "run",
      [](const py::object& scenario, const py::object& hw, const std::vector<std::string>& set,
         const std::optional<std::string>& noc, const std::string& policy, const py::object& seed_arg, bool values,
         bool vcd, double watchdog_ns, const std::optional<std::string>& out, const std::string& launch,
         bool compare_unbatched, const std::string& trace, bool trace_gz, const std::string& gemm_mapping,
         std::optional<int64_t> power_window_ns, const std::string& objective) {
        return PySimulator(hw, set, noc)
            .run(scenario, policy, seed_arg, values, vcd, watchdog_ns, out, launch, compare_unbatched, trace, trace_gz,
                 gemm_mapping, power_window_ns, objective);
      },
      py::arg("scenario"), py::arg("hw") = py::none(), py::kw_only(), py::arg("set") = std::vector<std::string>{},
      py::arg("noc") = py::none(), py::arg("policy") = "A", py::arg("seed") = py::none(), py::arg("values") = true,
      py::arg("vcd") = false, py::arg("watchdog_ns") = 1e6, py::arg("out") = py::none(), py::arg("launch") = "unified",
      py::arg("compare_unbatched") = false, py::arg("trace") = "auto", py::arg("trace_gz") = false,
      py::arg("gemm_mapping") = "w_stationary", py::arg("power_window_ns") = py::none(), py::arg("objective") = "time",
      kRunDoc);

  m.def(
      "cli",
      [](const std::vector<std::string>& args) {
        const CliResult r = run_cli(args, nullptr);
        return py::make_tuple(r.code, r.out, r.err);
      },
      py::arg("args"),
      kCliDoc);

  m.def(
      "noc_bench",
      [](std::vector<std::string> args) {
        // The report goes to a directory of this call's own (mkdtemp: a new name, mode 0700), never
        // to a guessable path in the shared temporary directory, where a planted symbolic link
        // redirected the write onto another file.
        const PrivateDir dir;
        const std::string file = (dir.path() / "report.json").string();
        args.insert(args.begin(), "noc-bench");
        args.push_back("--out");
        args.push_back(file);
        const CliResult r = run_cli(args, nullptr);
        if (r.code != 0)
          throw InputError(r.err.empty() ? "noc-bench exited " + std::to_string(r.code) : r.err.substr(0, r.err.find_last_not_of('\n') + 1));
        std::ifstream in(file);
        return to_python(Json::parse(in));
      },
      py::arg("args"),
      kNocBenchDoc);

  m.def(
      "run_points",
      [](const std::vector<py::dict>& jobs) {
        // tools/sweep's in-process runner: one `ahbm-sim run` (or `serve`: "command") per job, every
        // job on chips kept for the whole call (points that share a hardware config share its
        // elaborated chips).
        SimulatorPool sims;
        std::vector<std::pair<int, std::string>> out;
        for (const py::dict& j : jobs) {
          const std::string command = j.contains("command") ? j["command"].cast<std::string>() : "run";
          if (command != "run" && command != "serve")
            throw InputError("run_points: job \"command\": \"" + command + "\" (allowed: run, serve)");
          const char* input = command == "serve" ? "workload" : "scenario";
          std::vector<std::string> args = {command, j[input].cast<std::string>(), "--hw", j["hw"].cast<std::string>(),
                                            "--out", j["out"].cast<std::string>()};
          if (j.contains("args")) {  // a str would be split into its characters
            const py::object more = j["args"];
            if (!py::isinstance<py::list>(more) && !py::isinstance<py::tuple>(more))
              throw InputError("run_points: job \"args\": expected a list of strings, got " +
                               std::string(py::str(py::type::of(more).attr("__name__"))));
            for (const auto& a : more) args.push_back(a.cast<std::string>());
          }
          const CliResult r = run_cli(args, &sims);
          out.emplace_back(r.code, r.err);
        }
        return out;
      },
      py::arg("jobs"),
      kRunPointsDoc);
}

}  // namespace ahbm::python
