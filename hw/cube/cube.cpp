#include "hw/cube/cube.h"

#include "hw/common/base/component.h"
#include "hw/common/sim/kv_read.h"

namespace ahbm {

Cube::Cube(sc_core::sc_module_name name, SimShared& sh, Noc& noc, int group, int cube)
    : sc_core::sc_module(name),
      kv("kv"),
      q_buffer("q_buffer", sh, group, cube, sh.cfg.cube.pes),
      reducer("reducer", sh, cube, sh.cfg.cube.pes),
      slice_port("slice_port"),
      sh_(sh),
      group_(group),
      cube_(cube),
      responder_("responder", noc) {
  sh.spans.declare(component_path(q_buffer), {ComponentInfo::Kind::q_buffer, group, cube, -1, q_buffer.basename()});
  sh.spans.declare(component_path(reducer), {ComponentInfo::Kind::reducer, group, cube, -1, reducer.basename()});
  q_buffer.fault_leak_credit = sh.cfg.fault.leak_q_credit_cube == cube;  // FAULT INJECTION (tests)
  for (int p = 0; p < sh.cfg.cube.pes; ++p) {
    slices.push_back(std::make_unique<HbmSlice>(("hbm" + std::to_string(p)).c_str(), sh.cfg.pe.hbm));
    pes.push_back(std::make_unique<Pe>(("pe" + std::to_string(p)).c_str(), sh, noc, group, cube * sh.cfg.cube.pes + p, p));
    Pe& pe = *pes.back();
    sh.spans.declare(component_path(pe), {ComponentInfo::Kind::pe, group, cube, p, pe.basename()});
    sh.spans.declare(component_path(pe) + ".dma",
                     {ComponentInfo::Kind::pe_dma, group, cube, p, std::string(pe.basename()) + ".dma"});
    HbmSlice& slice = *slices.back();
    slice.add_signals(sh.trace, component_path(pe) + ".hbm");
    const TlmRange range = [s = &slice] { return std::make_pair(uint64_t(0), s->last()); };
    links_.bind(pe.hbm, slice.socket, std::string(pe.basename()) + "_hbm_check", sh.tlm_checks, range);
    links_.bind(slice_port, slice.socket, "serve_hbm" + std::to_string(p) + "_check", sh.tlm_checks, range);
    pe.q_in.bind(q_buffer);
    pe.state_out.bind(reducer);
    pe.kv.bind(kv);
  }
  SC_HAS_PROCESS(Cube);
  SC_THREAD(serve_loop);
}

void Cube::begin_run() {
  q_buffer.begin_run();
  reducer.begin_run();
  for (auto& s : slices) s->begin_run();
  for (auto& p : pes) p->begin_run();
  requests_.clear();
  served_ = 0;
}

void Cube::noc_receive(int, const NocPacket& packet) {
  if (packet.tag == kGemmTag) {  // an X-stationary W tile: into the reserved slot of each receiver here
    const auto m = std::static_pointer_cast<const GemmTileMessage>(packet.payload);
    const int first = group_ * sh_.cfg.pes_per_group() + cube_ * sh_.cfg.cube.pes;
    for (size_t i = 0; i < m->dst_pes.size(); ++i) {
      const int p = m->dst_pes[i] - first;
      if (p >= 0 && p < sh_.cfg.cube.pes) pes[size_t(p)]->gemm_tile_arrived(*m, m->slots[i]);
    }
    return;
  }
  if (packet.tag == kGemmXTag) {  // a weight GEMM's X chunk
    q_buffer.arrive_x(std::static_pointer_cast<const GemmXMessage>(packet.payload)->chunk, packet.bytes);
    return;
  }
  if (packet.tag == kGemmPartialTag) {  // a K-split's partial Y block for its owner here
    const auto m = std::static_pointer_cast<const GemmPartialMessage>(packet.payload);
    pes[size_t(m->owner - (group_ * sh_.cfg.pes_per_group() + cube_ * sh_.cfg.cube.pes))]->gemm_partial_arrived(m);
    return;
  }
  if (packet.tag != kKvTag) {
    q_buffer.arrive(packet.tag, packet.bytes, std::static_pointer_cast<const std::vector<float>>(packet.payload));
    return;
  }
  auto m = std::static_pointer_cast<const KvMessage>(packet.payload);
  const int first_pe = cube_ * sh_.cfg.cube.pes;
  switch (m->kind) {
    case KvMsgKind::request:
      requests_.push(m, sc_core::sc_time(sh_.cfg.remote.overhead_ns, sc_core::SC_NS));
      break;
    case KvMsgKind::response:
      pes[size_t(m->requester - first_pe)]->remote_response(m);
      break;
    case KvMsgKind::remap:
      for (int p : m->dst_pes)
        if (kv->cube_of(p) == cube_) pes[size_t(p - first_pe)]->remap_arrived(*m);
      break;
    case KvMsgKind::broadcast:
      for (size_t i = 0; i < m->dst_pes.size(); ++i)
        if (kv->cube_of(m->dst_pes[i]) == cube_) pes[size_t(m->dst_pes[i] - first_pe)]->broadcast_arrived(*m, m->slots[i]);
      break;
  }
}

void Cube::serve_loop() {
  for (;;) {
    KvMessagePtr req = requests_.pop();
    const AttentionJob& job = sh_.jobs[size_t(req->job)];
    auto resp = std::make_shared<KvMessage>(*req);
    resp->kind = KvMsgKind::response;
    sc_core::sc_time delay;
    resp->data = read_kv(sh_, req->job, req->src_pe, kv->kv_base(req->src_pe, req->job), uint64_t(req->first),
                         req->count, *slice_port[req->src_pe - cube_ * sh_.cfg.cube.pes], scratch_, delay,
                         req->timing_only);
    ++served_;
    NocPacket p;
    p.src = kv->endpoint_of(req->src_pe);  // this CUBE, the owner's
    p.dsts = {kv->endpoint_of(req->requester)};
    p.bytes = resp->wire_bytes(job);
    p.tag = kKvTag;
    p.payload = std::move(resp);
    responder_.send_after(std::move(p), delay);
  }
}

void Cube::report_stats(StatsNode& node) const {
  node.set(CubeStats::remote_requests_served, served_);
  StatsNode& qb = node.child(CubeStats::q_buffer);
  qb.inline_prefix = std::string(CubeStats::q_buffer) + "_";
  q_buffer.report_stats(qb);
  StatsNode& red = node.child(CubeStats::reducer);
  red.inline_prefix = std::string(CubeStats::reducer) + "_";
  reducer.report_stats(red);
  StatsNode& list = node.list(CubeStats::pes);
  for (size_t p = 0; p < pes.size(); ++p) {
    StatsNode& pe = list.child(pes[p]->basename());
    pes[p]->report_stats(pe);
    slices[p]->report_stats(pe);  // the PE's own HBM slice: one node per PE
  }
}

}  // namespace ahbm
