#include "hw/cube/cube.h"

namespace ahbm {

Cube::Cube(sc_core::sc_module_name name, SimShared& sh, const std::string& path, int group, int cube,
           ReductionNetwork& net, GroupFabric& fabric)
    : sc_core::sc_module(name),
      q_buffer("q_buffer", sh, path + ".q_buffer", cube, sh.cfg.cube.pes),
      reducer("reducer", sh, path + ".reducer", cube, sh.cfg.cube.pes, net),
      slice_port("slice_port"),
      sh_(sh),
      cube_(cube),
      fabric_(fabric),
      responder_("responder", *fabric.noc) {
  q_buffer.fault_leak_credit = sh.cfg.fault.leak_q_credit_cube == cube;  // FAULT INJECTION (tests)
  for (int p = 0; p < sh.cfg.cube.pes; ++p) {
    const std::string pe_name = "pe" + std::to_string(p);
    slices.push_back(std::make_unique<HbmSlice>(("hbm" + std::to_string(p)).c_str(), sh.cfg.pe.hbm));
    pes.push_back(std::make_unique<Pe>(pe_name.c_str(), sh, path + "." + pe_name, group,
                                       cube * sh.cfg.cube.pes + p, p, q_buffer, reducer, fabric));
    HbmSlice& slice = *slices.back();
    const TlmRange range = [s = &slice] { return std::make_pair(uint64_t(0), s->last()); };
    links_.bind(pes.back()->hbm, slice.socket, pe_name + "_hbm_check", sh.tlm_checks, range);
    links_.bind(slice_port, slice.socket, "serve_hbm" + std::to_string(p) + "_check", sh.tlm_checks, range);
    fabric.pes.push_back(pes.back().get());
    fabric.slices.push_back(slices.back().get());
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
        if (fabric_.cube_of(p) == cube_) pes[size_t(p - first_pe)]->remap_arrived(*m);
      break;
    case KvMsgKind::broadcast:
      for (size_t i = 0; i < m->dst_pes.size(); ++i)
        if (fabric_.cube_of(m->dst_pes[i]) == cube_) pes[size_t(m->dst_pes[i] - first_pe)]->broadcast_arrived(*m, m->slots[i]);
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
    resp->data = read_kv(sh_, fabric_, req->job, req->src_pe, uint64_t(req->first), req->count,
                         *slice_port[req->src_pe - cube_ * sh_.cfg.cube.pes], scratch_, delay);
    ++served_;
    NocPacket p;
    p.src = fabric_.cube_endpoints[size_t(cube_)];
    p.dsts = {fabric_.cube_endpoints[size_t(fabric_.cube_of(req->requester))]};
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
