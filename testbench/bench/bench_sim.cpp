// Simulation-speed benchmarks (issue 8). The bound for a real-values run is the host's own
// arithmetic: the same masked attention computed with single-threaded float32 OpenBLAS, measured
// here in the same process. tools/bench runs this binary and prints the ratios.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <utility>
#include <systemc>

#include <sys/resource.h>
#include <unistd.h>

#include "hw/chip/simulate.h"
#include "hw/bench/noc_bench.h"
#include "runtime/run/driver.h"
#include "runtime/plan/planner.h"
#include "runtime/scenario/scenario.h"
#include "runtime/numerics/reference.h"

namespace {

using namespace ahbm;

Scenario fanout(int agents, int new_tokens, int prefix) {
  Scenario s;
  s.name = "bench";
  s.model.head_dim = 128;
  s.shared_prefix_tokens = prefix;
  for (int a = 0; a < agents; ++a) s.agents.push_back({"agent" + std::to_string(a), new_tokens});
  return s;
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) / 1024.0;
}

// Resident memory now.
double rss_mib() {
  std::ifstream statm("/proc/self/statm");
  double pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * double(sysconf(_SC_PAGESIZE)) / double(1 << 20);
}

// Resident memory of the process before any case ran (code, libraries, benchmark framework):
// each case runs in its own process (tools/bench), so peak - this is what the case added.
double g_base_rss_mib = 0;  // set once in sc_main, read-only afterwards

// Runs the model on `jobs` per iteration and reports simulated time per wall second. `reuse`:
// one Simulator for every iteration, so its chip is elaborated once (the CLI's steps, policy
// evaluation and sweeps of one hardware config run this way); else a new chip per iteration
// (simulate(): one run in a process).
void run_sim(benchmark::State& state, const HwConfig& hw, const std::vector<AttentionJob>& jobs, bool reuse = true) {
  double sim_ns = 0;
  Simulator sim(hw);
  for (auto _ : state) {
    const SimResult r = reuse ? sim.run(jobs) : simulate(hw, jobs);
    sim_ns = r.end_ns;
    benchmark::DoNotOptimize(r.outputs.data());
  }
  double tensor_bytes = 0;
  for (const auto& j : jobs) {
    tensor_bytes += double(j.q.size()) * 4 * 2;  // Q and O
    for (const auto& s : j.shards) tensor_bytes += double(s.k.size() + s.v.size()) * 4;
  }
  state.counters["sim_ns"] = sim_ns;
  state.counters["sim_cycles_per_s"] =
      benchmark::Counter(sim_ns * hw.clock_ghz * double(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["tensor_MiB"] = tensor_bytes / (1 << 20);
  state.counters["peak_rss_MiB"] = peak_rss_mib();
  state.counters["base_rss_MiB"] = g_base_rss_mib;
}

std::vector<AttentionJob> one_job(const HwConfig& hw, int agents, int new_tokens, int prefix, bool values) {
  return plan_fanout(fanout(agents, new_tokens, prefix), hw, 1, values).jobs;
}

void BM_Default(benchmark::State& state) {
  const HwConfig hw;
  run_sim(state, hw, one_job(hw, 8, 20, 8192, state.range(0) != 0), state.range(1) != 0);
}
BENCHMARK(BM_Default)->ArgNames({"values", "reuse"})->ArgsProduct({{1, 0}, {1, 0}})->Unit(benchmark::kMillisecond);

// LLaMA-3-8B as a whole model, timing only (issue 16): traces/llama3_8b_agentic.json, every
// layer of every step (prefill 4096, 8 × 64 fan-out, 32 decode steps, schema join). Simulated
// operations: the MACs of the weight GEMMs of every layer and step plus the attention's.
void BM_Llama3_8bWholeModel(benchmark::State& state) {
  const Scenario sc = load_scenario(std::string(AHBM_SOURCE_DIR) + "/traces/llama3_8b_agentic.json");
  RunOptions opt;
  opt.values = false;
  opt.vcd = false;
  double sim_ns = 0, macs = 0;
  for (auto _ : state) {
    const RunOutput r = execute(sc, HwConfig{}, opt);
    sim_ns = r.summary.total_ns;
    macs = double(r.summary.arithmetic.macs_simulated) * sc.model.layers;
    for (const auto& op : r.summary.operators->totals["by_operator"]) macs += double(op["macs"].get<uint64_t>());
  }
  state.counters["sim_ns"] = sim_ns;
  state.counters["sim_macs"] = macs;
  state.counters["sim_macs_per_s"] = benchmark::Counter(macs * double(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}
BENCHMARK(BM_Llama3_8bWholeModel)->Unit(benchmark::kMillisecond)->Iterations(1);

// The same masked attention (shapes, mask) on the host: S = Q K^T, masked softmax, O = P V.
void BM_BlasBound(benchmark::State& state) {
  const HwConfig hw;
  const Plan plan = plan_fanout(fanout(int(state.range(0)), 20, int(state.range(1))), hw, 1, true);
  const AttentionJob& job = plan.jobs.at(0);
  const FlatKv kv = flatten_kv(job);
  const int m = job.row_count(), n = int(kv.info.size()), d = job.head_dim;
  std::vector<float> s(size_t(m) * size_t(n)), o(size_t(m) * size_t(d));
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, d, job.scale, job.q.data(), d, kv.k.data(), d,
                0.f, s.data(), n);
    for (int r = 0; r < m; ++r) {
      float* row = s.data() + size_t(r) * size_t(n);
      float mx = -std::numeric_limits<float>::infinity();
      for (int c = 0; c < n; ++c) {
        if (!visible(job.rows[size_t(r)], kv.info[size_t(c)])) row[c] = -std::numeric_limits<float>::infinity();
        mx = std::max(mx, row[c]);
      }
      float sum = 0;
      for (int c = 0; c < n; ++c) sum += (row[c] = std::exp(row[c] - mx));
      const float inv = 1.f / sum;
      for (int c = 0; c < n; ++c) row[c] *= inv;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, d, n, 1.f, s.data(), n, kv.v.data(), d, 0.f,
                o.data(), d);
    benchmark::DoNotOptimize(o.data());
  }
  // Its memory too: OpenBLAS's own GEMM work buffer is part of any BLAS run's footprint.
  state.counters["tensor_MiB"] = double(job.q.size() + kv.k.size() + kv.v.size() + s.size() + o.size()) * 4 / (1 << 20);
  state.counters["peak_rss_MiB"] = peak_rss_mib();
  state.counters["base_rss_MiB"] = g_base_rss_mib;
}
BENCHMARK(BM_BlasBound)->ArgNames({"agents", "prefix"})->Args({8, 8192})->Unit(benchmark::kMillisecond);

// The float64 reference the runtime checks every values run against (not part of simulate()).
void BM_Reference(benchmark::State& state) {
  const HwConfig hw;
  const AttentionJob job = one_job(hw, 8, 20, 8192, true).at(0);
  for (auto _ : state) {
    const FlatKv kv = flatten_kv(job);
    const Eigen::MatrixXd ref = reference_attention(job.q, job.rows, kv.k, kv.v, kv.info, job.head_dim, job.scale);
    benchmark::DoNotOptimize(ref.data());
  }
}
BENCHMARK(BM_Reference)->Unit(benchmark::kMillisecond);

void BM_PrefixScaling(benchmark::State& state) {
  const HwConfig hw;
  run_sim(state, hw, one_job(hw, 8, 20, int(state.range(0)), state.range(1) != 0));
}
BENCHMARK(BM_PrefixScaling)->ArgNames({"prefix", "values"})->ArgsProduct({{2048, 8192, 32768, 65536}, {1, 0}})
    ->Unit(benchmark::kMillisecond);

void BM_AgentScaling(benchmark::State& state) {
  const HwConfig hw;
  run_sim(state, hw, one_job(hw, int(state.range(0)), 20, 8192, state.range(1) != 0));
}
BENCHMARK(BM_AgentScaling)->ArgNames({"agents", "values"})->ArgsProduct({{1, 8, 32, 64}, {1, 0}})
    ->Unit(benchmark::kMillisecond);

// KV-head groups running concurrently, one KV head each.
void BM_GroupScaling(benchmark::State& state) {
  HwConfig hw;
  hw.groups = int(state.range(0));
  std::vector<AttentionJob> jobs;
  for (int g = 0; g < hw.groups; ++g) {
    AttentionJob j = std::move(one_job(hw, 8, 20, 8192, true)[0]);  // no transient copy of the tensors
    j.group = g;
    jobs.push_back(std::move(j));
  }
  run_sim(state, hw, jobs);
}
BENCHMARK(BM_GroupScaling)->ArgName("groups")->Arg(1)->Arg(8)->Unit(benchmark::kMillisecond);

void BM_PesPerCube(benchmark::State& state) {
  HwConfig hw;
  hw.cube.pes = int(state.range(0));
  run_sim(state, hw, one_job(hw, 8, 20, 8192, true));
}
BENCHMARK(BM_PesPerCube)->ArgName("pes")->Arg(4)->Arg(8)->Arg(16)->Unit(benchmark::kMillisecond);

// The HBM slice's two timing models on the default job, timing only (the banked model's cost:
// docs/hbm.md, "End to end"; tools/hbm-compare measures whole multi-step runs).
void BM_HbmModel(benchmark::State& state) {
  HwConfig hw;
  hw.pe.hbm.model = state.range(0) != 0 ? HbmModel::banked : HbmModel::simple;
  run_sim(state, hw, one_job(hw, 8, 20, 8192, false));
}
BENCHMARK(BM_HbmModel)->ArgName("banked")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// The flit-level NoC engine alone (docs/noc.md, "Simulation cost"): noc-bench on an 8 x 8 mesh,
// uniform 4-flit packets, 4000 cycles after a 1000-cycle warm-up. Arguments: router preset
// (0 classic, 1 booksim-iq) and offered load in thousandths of a flit/node/cycle (50: mostly idle
// routers, which the engine does not visit; 300: below saturation). sim_cycles_per_s: simulated
// network cycles per second; node_cycles_per_s: the same times 64 routers.
void BM_FlitEngine(benchmark::State& state) {
  const NocRegistry nocs = NocRegistry::with_builtin_models();
  NocBenchOptions o;
  o.noc = "mesh";
  o.nodes = 64;
  o.params = {{"router", state.range(0) ? "booksim-iq" : "classic"}};
  o.rate = double(state.range(1)) / 1000;
  o.cycles = 4000;
  o.drain = 4000;
  double cycles = 0;
  for (auto _ : state) {
    const NocBenchResult r = run_noc_bench(nocs, o);
    cycles = double(r.end_cycle);
    benchmark::DoNotOptimize(r.accepted);
  }
  state.counters["sim_cycles_per_s"] = benchmark::Counter(cycles * double(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["node_cycles_per_s"] =
      benchmark::Counter(cycles * 64 * double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FlitEngine)->ArgNames({"booksim", "load"})->ArgsProduct({{0, 1}, {50, 300}})->Unit(benchmark::kMillisecond);

}  // namespace

int sc_main(int argc, char** argv) {
  openblas_set_num_threads(1);  // the bound and the simulator both single-threaded
  g_base_rss_mib = rss_mib();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
