#include "hw/chip/simulate.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "hw/chip/chip.h"
#include "hw/chip/watchdog.h"
#include "hw/common/base/component.h"
#include "hw/common/model/engines.h"
#include "hw/common/base/error.h"
#include "hw/common/sim/sim_context.h"
#include "hw/pe/sram_budget.h"

namespace ahbm {

void check_jobs(const HwConfig& cfg, const std::vector<AttentionJob>& jobs, const std::string& hw_file) {
  std::vector<uint64_t> hbm_used(size_t(cfg.groups) * size_t(cfg.pes_per_group()), 0);
  for (size_t j = 0; j < jobs.size(); ++j) {
    const AttentionJob& job = jobs[j];
    const std::string where = "job " + std::to_string(j) + " (" + job.phase + ")";
    if (job.group < 0 || job.group >= cfg.groups)
      throw InputError(where + ": KV-head group " + std::to_string(job.group) + " does not exist (" + hw_file +
                       ": groups = " + std::to_string(cfg.groups) + ")");
    if (int(job.shards.size()) != cfg.pes_per_group())
      throw InputError(where + ": " + std::to_string(job.shards.size()) + " KV shards for " +
                       std::to_string(cfg.pes_per_group()) + " PEs per group");
    int next = 0;
    for (const QTile& t : job.tiles) {
      if (t.row_begin != next || t.row_end <= t.row_begin || t.row_end > job.row_count())
        throw InputError(where + ": Q tiles must cover rows [0, " + std::to_string(job.row_count()) +
                         ") in order without gaps");
      next = t.row_end;
      const SramBudget b = sram_budget(cfg.pe, uint64_t(t.rows()), uint64_t(job.head_dim), job.elem_bytes());
      if (b.total() > cfg.pe.sram_bytes)
        throw InputError(hw_file + ": pe.sram_bytes = " + std::to_string(cfg.pe.sram_bytes) + " is too small for a " +
                         std::to_string(t.rows()) + "-row Q tile with pe.dma.kv_tile_tokens = " +
                         std::to_string(cfg.pe.dma.kv_tile_tokens) + " and pe.dma.buffers = " +
                         std::to_string(cfg.pe.dma.buffers) + " in " + dtype_name(job.dtype) + ": needs " + b.describe());
      const uint64_t qbytes = q_tile_bytes(job, t.rows());
      if (qbytes > cfg.cube.q_buffer.bytes)
        throw InputError(hw_file + ": cube.q_buffer.bytes = " + std::to_string(cfg.cube.q_buffer.bytes) +
                         " cannot hold a " + std::to_string(t.rows()) + "-row Q tile (" + std::to_string(qbytes) +
                         " bytes in " + dtype_name(job.dtype) + ")");
    }
    if (next != job.row_count())
      throw InputError(where + ": Q tiles cover " + std::to_string(next) + " of " + std::to_string(job.row_count()) +
                       " rows");
    for (int p = 0; p < cfg.pes_per_group(); ++p) {
      const KvShard& s = job.shards[size_t(p)];
      uint64_t& used = hbm_used[size_t(job.group) * size_t(cfg.pes_per_group()) + size_t(p)];
      used += 2 * pe_held_tokens(job, p) * kv_row_bytes(job);
      if (used > cfg.pe.hbm.capacity_bytes)
        throw InputError(hw_file + ": pe.hbm.capacity_bytes = " + std::to_string(cfg.pe.hbm.capacity_bytes) +
                         " is exceeded on PE " + std::to_string(p) + " of group " + std::to_string(job.group) +
                         " (KV needs " + std::to_string(used) + " bytes, replicas included)");
      if (job.values && (s.k.size() != size_t(s.tokens) * size_t(job.head_dim) || s.v.size() != s.k.size()))
        throw InputError(where + ": KV shard of PE " + std::to_string(p) + " has the wrong size");
      if (s.info.size() != size_t(s.tokens))
        throw InputError(where + ": KV shard of PE " + std::to_string(p) + " lacks token metadata");
    }
  }
  check_run_length(cfg, jobs, hw_file);
}

void check_run_length(const HwConfig& cfg, const std::vector<AttentionJob>& jobs, const std::string& hw_file) {
  // Lower bounds of each PE's busy time in closed form: its GEMM and vector work (one block per
  // Q tile with all the KV the tile meets: Q tiles of ceil(n / tile) engine tiles summed over
  // KV blocks are at least that), and the KV bytes it streams from its own HBM slice. A PE
  // does both for every job of the run one after another, so the run lasts at least as long.
  const size_t pes = size_t(cfg.groups) * size_t(cfg.pes_per_group());
  std::vector<uint64_t> cycles(pes, 0), local_bytes(pes, 0);
  for (const AttentionJob& job : jobs) {
    const uint64_t d = uint64_t(job.head_dim);
    for (int p = 0; p < cfg.pes_per_group(); ++p) {
      const size_t at = size_t(job.group) * size_t(cfg.pes_per_group()) + size_t(p);
      uint64_t met = 0, local = 0;  // KV tokens one Q tile of this PE meets, and of them local
      if (job.kv_broadcast) {
        for (const KvShard& s : job.shards) met += uint64_t(s.tokens);
      } else {
        for (const KvSegment& s : pe_segments(job, p)) {
          met += uint64_t(s.count);
          if (!s.remote) local += uint64_t(s.count);
        }
      }
      for (const QTile& t : job.tiles) {
        if (!tile_has_pe(t, p) || met == 0) continue;
        cycles[at] = add_sat(cycles[at], block_cycles(cfg.pe, uint64_t(t.rows()), met, d, job.dtype));
        local_bytes[at] = add_sat(local_bytes[at], mul_sat(2 * local, kv_row_bytes(job)));
      }
    }
  }
  const double limit = max_run_ns();
  for (size_t at = 0; at < pes; ++at) {
    const double compute_ns = double(cycles[at]) / cfg.clock_ghz;
    const double dma_ns = double(local_bytes[at]) / cfg.pe.hbm.bandwidth_gbps;
    if (std::max(compute_ns, dma_ns) < limit) continue;
    std::ostringstream os;
    os << hw_file << ": the run would last longer than simulated time can represent (" << limit
       << " ns = 2^62 ps from its start): PE " << at % size_t(cfg.pes_per_group()) << " of group "
       << at / size_t(cfg.pes_per_group()) << " alone ";
    if (compute_ns >= dma_ns)
      os << "computes for at least " << compute_ns << " ns (" << cycles[at] << " GEMM and vector cycles at clock_ghz = "
         << cfg.clock_ghz << ")";
    else
      os << "streams " << local_bytes[at] << " KV bytes from its HBM slice, at least " << dma_ns
         << " ns at pe.hbm.bandwidth_gbps = " << cfg.pe.hbm.bandwidth_gbps;
    os << "; " << slow_parameters(cfg);
    throw InputError(os.str());
  }
}

namespace {

// Progress reports between the watchdog's slices of simulated time (run_with_watchdog sizes
// the slices to about 50 ms of wall time when reports are asked for).
std::function<void(bool)> progress_reporter(Chip& chip, const SimShared& sh,
                                            const std::function<void(const SimProgress&)>& report) {
  uint64_t planned = 0;
  for (const AttentionJob& j : sh.jobs)
    for (const KvShard& s : j.shards) planned += 2 * uint64_t(j.row_count()) * uint64_t(s.tokens) * uint64_t(j.head_dim);
  return [&chip, &sh, report, planned](bool done) {
    uint64_t macs = 0;
    for (const auto& group : chip.groups)
      for (const auto& cube : group->cubes)
        for (const auto& pe : cube->pes) macs += pe->macs() + pe->macs_skipped();  // planned counts masked tiles
    SimProgress p;
    p.sim_ns = to_ns(sc_core::sc_time_stamp() - sh.epoch);
    p.fraction = planned ? double(macs) / double(planned) : 1.0;
    p.done = done;
    for (size_t gt = 0; gt < sh.tiles.size(); ++gt)
      if (!chip.host->tile_received[gt]) {
        p.phase = sh.jobs[size_t(sh.tiles[gt].job)].phase;
        break;
      }
    report(p);
  };
}

}  // namespace

// A chip with its context, sinks and shared state. Members are destroyed in reverse order: the
// chip (after its threads are unwound), then the shared state and sinks, the context last.
struct Simulator::Elaborated {
  Elaborated(const HwConfig& cfg, const SimOptions& opt, const NocRegistry& nocs, std::vector<int> groups)
      : trace(opt.vcd), shared(cfg, trace, spans) {
    SimContext::Scope use(context);
    if (opt.check_tlm) shared.tlm_checks = &tlm_checks;
    chip = std::make_unique<Chip>("chip", shared, nocs, opt.hw_file, std::move(groups));
    shared.waits.add(component_path(*chip->noc), [this, model = cfg.noc.model] {
      const uint64_t n = chip->noc->packets_in_flight();
      return n ? std::to_string(n) + " packets in flight (model " + model + ")" : std::string();
    });
    sc_core::sc_start(sc_core::SC_ZERO_TIME);  // elaborate; every thread runs to its first wait
    resync_sanitizer_stack();
  }
  ~Elaborated() {
    SimContext::Scope use(context);
    unwind_threads();  // idle loops are suspended: free what their stacks hold
    chip.reset();
  }
  // Whether a run may start on this chip: its epoch must stay below 2^61 time units, so that
  // the run's whole range (max_run_ns() from the epoch, hw/common/base/timing.h) stays representable.
  // Runs that went on for weeks of simulated time get a new chip (same results: see above).
  bool young() {
    SimContext::Scope use(context);
    return sc_core::sc_time_stamp().value() < kMaxRunUnits / 2;
  }

  SimContext context;
  TlmCheckLog tlm_checks;  // with SimOptions::check_tlm
  TraceSink trace;
  SpanRecorder spans;
  SimShared shared;
  std::unique_ptr<Chip> chip;
  bool reusable = true;  // false after a run that did not end cleanly
};

Simulator::Simulator(HwConfig cfg, SimOptions opt) : cfg_(std::move(cfg)), opt_(std::move(opt)) {
  check_watchdog_window(opt_.watchdog_ns, "SimOptions::watchdog_ns");
}

Simulator::~Simulator() = default;

SimResult Simulator::run(const std::vector<AttentionJob>& jobs) { return run_any(jobs, {}); }

SimResult Simulator::run_gemms(const std::vector<GemmJob>& gemms) { return run_any({}, gemms); }

SimResult Simulator::run_vector_kernels(const std::vector<VectorKernelJob>& kernels) { return run_any({}, {}, kernels); }

SimResult Simulator::run_any(const std::vector<AttentionJob>& jobs_in, const std::vector<GemmJob>& gemms,
                             const std::vector<VectorKernelJob>& kernels) {
  check_jobs(cfg_, jobs_in, opt_.hw_file);
  check_job_dataflow(cfg_, jobs_in, opt_.hw_file);
  check_gemm_jobs(cfg_, gemms, opt_.hw_file);
  check_vector_kernels(cfg_, kernels, opt_.hw_file);
  // The modules read the caller's jobs in place (the HBM slices keep their own stored bytes):
  // no extra copy of the tensors here. Only jobs that leave `scale` unset are copied, to fill it in.
  std::vector<AttentionJob> defaulted;
  const bool needs_scale =
      std::any_of(jobs_in.begin(), jobs_in.end(), [](const AttentionJob& j) { return j.scale == 0.f; });
  if (needs_scale) {
    defaulted = jobs_in;
    for (auto& j : defaulted)
      if (j.scale == 0.f) j.scale = 1.0f / std::sqrt(float(j.head_dim));
  }
  const std::vector<AttentionJob>& jobs = needs_scale ? defaulted : jobs_in;

  std::vector<int> groups = Chip::groups_of(cfg_, jobs);
  // A GEMM or kernel run has nothing else: its groups are those whose PEs hold a part of a job.
  const auto groups_holding = [&](const auto& plans) {
    std::vector<int> out;
    for (int g = 0; g < cfg_.groups; ++g) {
      bool used = false;
      for (const auto& per_pe : plans)
        for (int p = 0; p < cfg_.pes_per_group(); ++p) used = used || per_pe[size_t(g * cfg_.pes_per_group() + p)].active();
      if (used) out.push_back(g);
    }
    return out;
  };
  if (!gemms.empty()) groups = groups_holding(gemm_pe_plans(cfg_, gemms));
  if (!kernels.empty()) groups = groups_holding(vector_kernel_plans(cfg_, kernels));
  if (chip_ && !(chip_->reusable && chip_->chip->restartable() && chip_->chip->active_groups == groups &&
                 chip_->young()))
    chip_.reset();
  const bool fresh = !chip_;
  if (fresh) {
    const NocRegistry builtin = NocRegistry::with_builtin_models();
    chip_ = with_internal_errors(
        [&] { return std::make_unique<Elaborated>(cfg_, opt_, opt_.nocs ? *opt_.nocs : builtin, std::move(groups)); });
    ++elaborations_;
  }
  Elaborated& e = *chip_;
  SimContext::Scope use(e.context);
  Chip& chip = *e.chip;
  SimShared& shared = e.shared;
  // The run starts at the first clock edge after the previous run went idle (time 0 on a new
  // chip): with every clock edge where it is in a new chip, cycle-based models see the same.
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const uint64_t period = shared.clock.period().value();
  const sc_core::sc_time epoch =
      fresh ? now : sc_core::sc_time::from_value((now.value() / period + 1) * period);
  if (epoch > now) sc_core::sc_start(epoch - now);  // nothing is pending: time just advances
  // A run that fails leaves threads mid-run: the chip goes now (its threads unwound) and the
  // next run gets a new one. A SystemC error report (a broken invariant) becomes InternalError.
  auto or_drop_chip = [this](auto&& step) {
    try {
      step();
    } catch (const sc_core::sc_report& report) {
      const InternalError error = internal_error(report);
      chip_.reset();
      throw error;
    } catch (...) {
      chip_.reset();
      throw;
    }
  };
  or_drop_chip([&] {
    shared.begin_run(jobs, epoch);
    shared.begin_gemms(gemms);
    shared.begin_vector_kernels(kernels);
    chip.begin_run();
  });

  WatchdogSetup w;
  w.window_ns = opt_.watchdog_ns;
  w.epoch = epoch;
  w.done = [&] { return chip.host->tiles_received == shared.tiles.size() && shared.gemm.blocks_left == 0 &&
                         shared.kernels.blocks_left == 0; };
  w.progress = [&] { return uint64_t(e.spans.spans().size()) + chip.host->tiles_received; };
  w.status = [&] {
    if (!gemms.empty()) return std::to_string(shared.gemm.blocks_left) + " Y blocks of the weight GEMMs still to finish";
    if (!kernels.empty()) return std::to_string(shared.kernels.blocks_left) + " row blocks of the vector kernels still to finish";
    return std::to_string(chip.host->tiles_received) + " of " + std::to_string(shared.tiles.size()) +
           " Q tiles returned to the host";
  };
  w.progress_at = [&] { return e.spans.spans().empty() ? epoch : epoch + e.spans.spans().back().end; };
  w.too_long_hint = [this] { return slow_parameters(cfg_); };
  w.waits = &shared.waits;
  w.guard = &shared.guard;
  if (opt_.progress) w.on_slice = progress_reporter(chip, shared, opt_.progress);
  or_drop_chip([&] { run_with_watchdog(w); });

  SimResult r;
  r.outputs = std::move(chip.host->outputs);
  for (size_t gt = 0; gt < shared.tiles.size(); ++gt) {
    const double t = to_ns(chip.host->tile_done[gt] - epoch);
    r.tile_done_ns.push_back(t);
    r.end_ns = std::max(r.end_ns, t);
    r.tile_of.emplace_back(shared.tiles[gt].job, shared.tiles[gt].index);
  }
  r.gemms = shared.gemm.stats;
  r.gemm_outputs = std::move(shared.gemm.y);
  for (const GemmOpStats& g : r.gemms) r.end_ns = std::max(r.end_ns, g.end_ns);
  r.kernels = shared.kernels.stats;
  r.kernel_outputs = std::move(shared.kernels.y);
  for (const GemmOpStats& k : r.kernels) r.end_ns = std::max(r.end_ns, k.end_ns);
  chip.report_stats(r.stats);
  r.tlm_checks = e.tlm_checks;
  e.tlm_checks.violations.clear();
  e.tlm_checks.transactions = e.tlm_checks.dmi_grants = 0;
  r.trace = std::make_unique<TraceSink>(e.trace.take_run());
  if (opt_.keep_spans) {
    r.spans = std::make_unique<SpanRecorder>(e.spans.take_run());
  } else {
    r.spans = std::make_unique<SpanRecorder>();
    e.spans.drop_run();
  }
  // The next run must find nothing pending. A run ends when the last O tile is back, which is
  // normally also when the chip goes idle; anything still scheduled (a progress slice can end
  // earlier) runs out here, outside this run's results.
  if (sc_core::sc_pending_activity()) {
    or_drop_chip([&] {
      sc_core::sc_start(sc_core::sc_time(opt_.watchdog_ns > 0 ? opt_.watchdog_ns : 1e6, sc_core::SC_NS),
                        sc_core::SC_EXIT_ON_STARVATION);
    });
    resync_sanitizer_stack();
    e.trace.take_run();
    e.spans.drop_run();
    if (sc_core::sc_pending_activity()) e.reusable = false;
  }
  shared.jobs.unbind();  // the caller's jobs may go once this returns
  shared.gemm.jobs.unbind();
  shared.kernels.jobs.unbind();
  return r;
}

SimResult simulate(const HwConfig& cfg, const std::vector<AttentionJob>& jobs, const SimOptions& opt) {
  return Simulator(cfg, opt).run(jobs);
}

Simulator& SimulatorPool::simulator(const HwConfig& cfg, const SimOptions& opt) {
  std::ostringstream key;
  key.precision(17);
  key << to_json(cfg).dump() << '|' << opt.vcd << '|' << opt.hw_file << '|' << static_cast<const void*>(opt.nocs)
      << '|' << opt.watchdog_ns << '|' << opt.check_tlm;
  std::unique_ptr<Simulator>& sim = sims_[key.str()];
  if (!sim) sim = std::make_unique<Simulator>(cfg, opt);
  sim->set_progress(opt.progress);
  sim->set_keep_spans(opt.keep_spans);
  return *sim;
}

SimResult SimulatorPool::run(const HwConfig& cfg, const std::vector<AttentionJob>& jobs, const SimOptions& opt) {
  return simulator(cfg, opt).run(jobs);
}

SimResult SimulatorPool::run_gemms(const HwConfig& cfg, const std::vector<GemmJob>& gemms, const SimOptions& opt) {
  return simulator(cfg, opt).run_gemms(gemms);
}

SimResult SimulatorPool::run_vector_kernels(const HwConfig& cfg, const std::vector<VectorKernelJob>& kernels,
                                            const SimOptions& opt) {
  return simulator(cfg, opt).run_vector_kernels(kernels);
}

int SimulatorPool::elaborations() const {
  int n = 0;
  for (const auto& [key, sim] : sims_) n += sim->elaborations();
  return n;
}

}  // namespace ahbm
