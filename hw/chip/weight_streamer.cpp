#include "hw/chip/weight_streamer.h"

#include <set>

#include "hw/common/base/component.h"
#include "hw/common/base/timing.h"
#include "hw/common/sim/tlm_payload.h"
#include "hw/pe/pe.h"

namespace ahbm {

WeightStreamer::WeightStreamer(sc_core::sc_module_name name, SimShared& sh, Noc& noc, std::vector<Pe*> pes,
                               std::vector<int> endpoints, std::vector<int> port)
    : sc_core::sc_module(name),
      slices("slices"),
      sh_(sh),
      sender_("sender", noc),
      pes_(std::move(pes)),
      endpoints_(std::move(endpoints)),
      port_(std::move(port)),
      component_(sh.spans.intern(component_path(*this))) {
  SC_HAS_PROCESS(WeightStreamer);
  SC_THREAD(loop);
}

void WeightStreamer::begin_run() {
  sent_.assign(pes_.size(), 0);
  for (const GemmJob& j : sh_.gemm.jobs)
    if (j.x_stationary()) {
      sh_.start(start_);
      return;
    }
}

void WeightStreamer::loop() {
  for (;;) {
    sc_core::wait(start_);  // begin_run of a run with x_stationary jobs
    stream_jobs();
  }
}

void WeightStreamer::stream_jobs() {
  GemmRun& g = sh_.gemm;
  for (size_t j = 0; j < g.jobs.size(); ++j) {
    const GemmJob& job = g.jobs[j];
    if (!job.x_stationary()) continue;
    sh_.wait_launched(g.stats[j].launch_ns);
    const std::vector<GemmPePlan>& plans = g.plans[j];
    const int phase = sh_.spans.intern(job.phase);
    const uint64_t b = job.elem_bytes();
    int passes = 0;
    for (const GemmPePlan& pl : plans) passes = std::max(passes, pl.row_blocks());
    // Pass i: the i-th row block of every PE that has one; W is read again for each pass.
    for (int pass = 0; pass < passes; ++pass) {
      std::vector<int> receivers;
      std::set<int> eps;
      for (size_t p = 0; p < plans.size(); ++p)
        if (plans[p].row_blocks() > pass) receivers.push_back(int(p)), eps.insert(endpoints_[p]);
      const int blk_nb = plans[size_t(receivers.front())].blk.nb, blk_kb = plans[size_t(receivers.front())].blk.kb;
      for (const GemmColumns& c : g.columns[j])
        for (int n0 = 0; n0 < c.n_count; n0 += blk_nb) {
          const int nb = std::min(blk_nb, c.n_count - n0);
          for (int h : c.holders) {
            const GemmPePlan& hp = plans[size_t(h)];
            const uint64_t k_p = uint64_t(hp.shard.k_count);
            for (int k0 = 0; k0 < hp.shard.k_count; k0 += blk_kb) {
              const int kb = std::min(blk_kb, hp.shard.k_count - k0);
              auto m = std::make_shared<GemmTileMessage>();
              m->job = int(j);
              m->holder = h;
              m->kb = kb;
              m->nb = nb;
              m->dst_pes = receivers;
              const sc_core::sc_time start = sc_core::sc_time_stamp();
              for (int r : receivers) {
                m->slots.push_back(pes_[size_t(r)]->reserve_gemm_slot());
                m->seqs.push_back(sent_[size_t(r)]++);
              }
              g.stats[j].w_slot_wait_ns += to_ns(sc_core::sc_time_stamp() - start);
              ++g.stats[j].w_tiles_streamed;
              if (sc_core::sc_time_stamp() > start)
                sh_.spans.record(start, sc_core::sc_time_stamp(), component_, sh_.spans.intern("wait_slots"), phase,
                                 g.op_ids[j], kb, 0);
              // The tile as the holder stores it (gemm_job.h GemmPePlan: N-block by N-block).
              const uint64_t addr = hp.w_base + uint64_t(n0) * k_p * b + uint64_t(k0) * uint64_t(nb) * b;
              const uint64_t bytes = uint64_t(kb) * uint64_t(nb) * b;
              std::shared_ptr<std::vector<unsigned char>> data;
              if (job.values()) data = std::make_shared<std::vector<unsigned char>>(bytes);
              else if (scratch_.size() < bytes) scratch_.resize(bytes);
              tlm::tlm_generic_payload tr;
              unsigned char no_bytes;
              set_payload(tr, tlm::TLM_READ_COMMAND, addr, data ? data->data() : scratch_.data(), bytes);
              if (!data) set_timing_only(tr, no_bytes);
              sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
              slices[port_[size_t(h)]]->b_transport(tr, delay);
              if (tr.is_response_error()) SC_REPORT_FATAL("ahbm/gemm", "W tile outside the weight shard");
              g.stats[j].w_bytes_read += bytes;
              g.stats[j].w_multicast_bytes += bytes;
              g.stats[j].w_noc_delivered_bytes += bytes * uint64_t(eps.size());
              m->data = std::move(data);
              NocPacket p;
              p.src = endpoints_[size_t(h)];
              p.dsts.assign(eps.begin(), eps.end());
              p.bytes = bytes;
              p.tag = kGemmTag;
              p.payload = std::move(m);
              sender_.send_after(std::move(p), delay);
            }
          }
        }
    }
  }
}

}  // namespace ahbm
