// A user's own SystemC platform with ahbm's chip inside it, built against the installed package
// (find_package(ahbm), target ahbm::hw). Next to the chip, two modules of the platform itself:
//   - Launcher: at 100 ns hands the chip one attention job of KV-head group 0 (4 CUBEs x 8 PEs,
//     each PE holding a 96-token KV shard) and records when the O rows are back at the chip's host.
//   - SliceProbe: a TLM-2.0 initiator of the platform bound to PE 0's HBM slice (the slice's
//     target socket takes several initiators): reads back the first K row the chip placed there.
// The program checks O against a float64 softmax(Q K^T / sqrt(d)) V of its own and the probed row
// against the job's K, and exits 0 only when both match.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "hw/chip/chip.h"
#include "hw/chip/simulate.h"
#include "hw/common/config/hw_config.h"
#include "hw/common/contract/job.h"
#include "hw/common/sim/sim_context.h"

namespace {

constexpr int kRows = 4, kHeadDim = 64, kTokensPerPe = 96;

ahbm::AttentionJob make_job(const ahbm::HwConfig& cfg) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.f, 1.f);
  ahbm::AttentionJob job;
  job.phase = "embed";
  job.group = 0;
  job.head_dim = kHeadDim;
  job.dtype = ahbm::DType::fp32;
  job.scale = 1.f / std::sqrt(float(kHeadDim));
  job.agents = {"platform"};
  for (int r = 0; r < kRows; ++r) job.rows.push_back({0, 1 << 20});  // every key is visible
  for (int i = 0; i < kRows * kHeadDim; ++i) job.q.push_back(normal(rng));
  job.tiles = {ahbm::QTile(0, kRows)};
  int pos = 0;
  for (int p = 0; p < cfg.pes_per_group(); ++p) {
    ahbm::KvShard s;
    s.tokens = kTokensPerPe;
    for (int i = 0; i < kTokensPerPe * kHeadDim; ++i) {
      s.k.push_back(normal(rng));
      s.v.push_back(normal(rng));
    }
    for (int t = 0; t < kTokensPerPe; ++t) s.info.push_back({ahbm::kSharedOwner, pos++});
    job.shards.push_back(std::move(s));
  }
  return job;
}

// float64 attention over every PE's shard.
double max_error_vs_reference(const ahbm::AttentionJob& job, const ahbm::MatrixRM& o) {
  double worst = 0;
  for (int r = 0; r < kRows; ++r) {
    std::vector<double> scores, acc(kHeadDim, 0.0);
    double m = -INFINITY;
    for (const auto& s : job.shards)
      for (int t = 0; t < s.tokens; ++t) {
        double dot = 0;
        for (int c = 0; c < kHeadDim; ++c) dot += double(job.q[size_t(r * kHeadDim + c)]) * s.k[size_t(t * kHeadDim + c)];
        scores.push_back(dot * job.scale);
        m = std::max(m, scores.back());
      }
    double l = 0;
    size_t i = 0;
    for (const auto& s : job.shards)
      for (int t = 0; t < s.tokens; ++t, ++i) {
        const double w = std::exp(scores[i] - m);
        l += w;
        for (int c = 0; c < kHeadDim; ++c) acc[size_t(c)] += w * s.v[size_t(t * kHeadDim + c)];
      }
    for (int c = 0; c < kHeadDim; ++c) worst = std::max(worst, std::abs(acc[size_t(c)] / l - double(o(r, c))));
  }
  return worst;
}

struct Launcher : sc_core::sc_module {
  SC_HAS_PROCESS(Launcher);
  Launcher(sc_core::sc_module_name name, ahbm::SimShared& sh, ahbm::Chip& chip,
           const std::vector<ahbm::AttentionJob>& jobs)
      : sc_core::sc_module(name), sh_(sh), chip_(chip), jobs_(jobs) {
    SC_THREAD(run);
  }
  void run() {
    wait(100, sc_core::SC_NS);  // the platform's own boot, before the accelerator is used
    started = sc_core::sc_time_stamp();
    sh_.begin_run(jobs_, started);  // the run's tiles and time base
    chip_.begin_run();              // places the KV in the HBM slices and sends the Q tiles
    launched.notify(sc_core::SC_ZERO_TIME);
  }
  sc_core::sc_time started;
  sc_core::sc_event launched;

 private:
  ahbm::SimShared& sh_;
  ahbm::Chip& chip_;
  const std::vector<ahbm::AttentionJob>& jobs_;
};

struct SliceProbe : sc_core::sc_module {
  SC_HAS_PROCESS(SliceProbe);
  tlm_utils::simple_initiator_socket<SliceProbe> socket;
  SliceProbe(sc_core::sc_module_name name, Launcher& launcher, const ahbm::KvFabric& group)
      : sc_core::sc_module(name), socket("socket"), launcher_(launcher), group_(group) {
    SC_THREAD(run);
  }
  void run() {
    wait(launcher_.launched);
    tlm::tlm_generic_payload read;
    read.set_command(tlm::TLM_READ_COMMAND);
    read.set_address(group_.kv_base(0, 0));  // PE 0's K rows of job 0, placed by the group
    read.set_data_ptr(reinterpret_cast<unsigned char*>(row.data()));
    read.set_data_length(unsigned(row.size() * sizeof(float)));
    read.set_streaming_width(unsigned(row.size() * sizeof(float)));
    read.set_byte_enable_ptr(nullptr);
    read.set_dmi_allowed(false);
    read.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    socket->b_transport(read, delay);
    ok = read.is_response_ok();
  }
  std::vector<float> row = std::vector<float>(kHeadDim);
  bool ok = false;

 private:
  Launcher& launcher_;
  const ahbm::KvFabric& group_;
};

}  // namespace

int sc_main(int, char*[]) {
  const ahbm::HwConfig cfg;  // the default chip (docs/model.md); ahbm::load_hw_config(path) reads a file
  const std::vector<ahbm::AttentionJob> jobs = {make_job(cfg)};
  ahbm::check_jobs(cfg, jobs, "platform");  // the job fits the hardware
  ahbm::check_job_dataflow(cfg, jobs, "platform");

  ahbm::TraceSink trace(false);  // no VCD
  ahbm::SpanRecorder spans;
  ahbm::SimShared shared(cfg, trace, spans);
  const ahbm::NocRegistry nocs = ahbm::NocRegistry::with_builtin_models();
  ahbm::Chip chip("ahbm", shared, nocs, "platform", {0});
  Launcher launcher("launcher", shared, chip, jobs);
  SliceProbe probe("probe", launcher, *chip.groups[0]);
  probe.socket.bind(chip.groups[0]->cubes[0]->slices[0]->socket);

  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS), sc_core::SC_EXIT_ON_STARVATION);

  const bool done = chip.host->tiles_received == shared.tiles.size();
  const double err = done ? max_error_vs_reference(jobs[0], chip.host->outputs[0]) : INFINITY;
  float probe_err = 0;
  for (int c = 0; c < kHeadDim; ++c) probe_err = std::max(probe_err, std::abs(probe.row[size_t(c)] - jobs[0].shards[0].k[size_t(c)]));
  std::printf("O back at the host: %s, after %.1f ns (started at %.1f ns)\n", done ? "yes" : "no",
              done ? (chip.host->tile_done[0] - launcher.started).to_seconds() * 1e9 : 0.0,
              launcher.started.to_seconds() * 1e9);
  std::printf("max |O - float64 reference| = %.3g\n", err);
  std::printf("probe read of PE 0's first K row: %s, max difference %.3g\n", probe.ok ? "ok" : "failed", double(probe_err));
  ahbm::unwind_threads();  // finish the suspended threads while the modules exist
  const bool pass = done && err < 1e-4 && probe.ok && probe_err == 0.f;
  std::printf("%s\n", pass ? "PASS" : "FAIL");
  return pass ? 0 : 1;
}
