#include "hw/group/kv_mover.h"

#include <map>
#include <set>
#include <tuple>

#include "hw/common/base/component.h"
#include "hw/common/sim/kv_read.h"

namespace ahbm {

KvMover::KvMover(sc_core::sc_module_name name, SimShared& sh, Noc& noc, int group)
    : sc_core::sc_module(name),
      kv("kv"),
      slices("slices"),
      sh_(sh),
      group_(group),
      sender_("sender", noc),
      component_(sh.spans.intern(component_path(*this))) {
  sh.spans.declare(component_path(*this), {ComponentInfo::Kind::kv_mover, group, -1, -1, "kv_mover"});
  SC_HAS_PROCESS(KvMover);
  SC_THREAD(remap_loop);
  SC_THREAD(broadcast_loop);
}

void KvMover::begin_run() {
  remap_bytes_ = broadcast_bytes_ = 0;
  sh_.start(remap_start_);
  sh_.start(broadcast_start_);
}

void KvMover::wait_kernel(int job) {
  const sc_core::sc_time& t = sh_.kernel_launched(job);
  if (t > sc_core::sc_time_stamp()) sc_core::wait(t - sc_core::sc_time_stamp());
}

std::vector<int> KvMover::endpoints_of(const std::vector<int>& pes) const {
  std::set<int> eps;
  for (int p : pes) eps.insert(kv->endpoint_of(p));
  return {eps.begin(), eps.end()};
}

void KvMover::remap_loop() {
  for (;;) {
    sc_core::wait(remap_start_);  // begin_run
    remap_jobs();
  }
}

void KvMover::remap_jobs() {
  const int kv_tile = sh_.cfg.pe.dma.kv_tile_tokens;
  for (size_t j = 0; j < sh_.jobs.size(); ++j) {
    const AttentionJob& job = sh_.jobs[j];
    if (job.group != group_ || !job.remap) continue;
    wait_kernel(int(j));
    // One multicast per distinct copied range, to every PE that keeps it.
    std::map<std::tuple<int, int, int>, std::vector<int>> copies;
    for (size_t p = 0; p < job.replicas.size(); ++p)
      for (const KvReplica& r : job.replicas[p]) copies[{r.src_pe, r.first, r.count}].push_back(int(p));
    for (const auto& [range, dsts] : copies) {
      const auto [src, first, count] = range;
      for (int off = 0; off < count; off += kv_tile) {
        const int n = std::min(kv_tile, count - off);
        auto m = std::make_shared<KvMessage>();
        m->kind = KvMsgKind::remap;
        m->job = int(j);
        m->src_pe = src;
        m->first = first + off;
        m->count = n;
        m->dst_pes = dsts;
        sc_core::sc_time delay;
        m->data = read_kv(sh_, int(j), src, kv->kv_base(src, int(j)), uint64_t(first + off), n, *slices[src], scratch_, delay);
        NocPacket p;
        p.src = kv->endpoint_of(src);
        p.dsts = endpoints_of(dsts);
        p.bytes = m->wire_bytes(job);
        p.tag = kKvTag;
        remap_bytes_ += p.bytes;
        p.payload = std::move(m);
        sender_.send_after(std::move(p), delay);
      }
    }
  }
}

void KvMover::broadcast_loop() {
  for (;;) {
    sc_core::wait(broadcast_start_);  // begin_run
    broadcast_jobs();
  }
}

void KvMover::broadcast_jobs() {
  const int kv_tile = sh_.cfg.pe.dma.kv_tile_tokens;
  for (size_t j = 0; j < sh_.jobs.size(); ++j) {
    const AttentionJob& job = sh_.jobs[j];
    if (job.group != group_ || !job.kv_broadcast) continue;
    wait_kernel(int(j));
    // Pass k: the k-th tile of every PE that has one. Jobs and passes are served in the order
    // the Q source sends their tiles (SimShared's send order), so each pass's Q can arrive.
    std::vector<std::vector<int>> passes;
    const std::vector<int> pass_of = broadcast_pass_of_tiles(job);
    for (size_t i = 0; i < job.tiles.size(); ++i) {
      const int k = pass_of[i];
      if (size_t(k) >= passes.size()) passes.resize(size_t(k) + 1);
      passes[size_t(k)].push_back(job.tiles[i].pes[0]);
    }
    int most = 0;
    for (const KvShard& s : job.shards) most = std::max(most, s.tokens);
    for (auto& receivers : passes) {
      std::sort(receivers.begin(), receivers.end());
      const std::vector<int> eps = endpoints_of(receivers);
      // Owners take turns block by block so all slices stream at once.
      for (int first = 0; first < most; first += kv_tile)
        for (int owner = 0; owner < int(job.shards.size()); ++owner) {
          const int n = std::min(kv_tile, job.shards[size_t(owner)].tokens - first);
          if (n <= 0) continue;
          auto m = std::make_shared<KvMessage>();
          m->kind = KvMsgKind::broadcast;
          m->job = int(j);
          m->src_pe = owner;
          m->first = first;
          m->count = n;
          m->dst_pes = receivers;
          const sc_core::sc_time start = sc_core::sc_time_stamp();
          for (int r : receivers) m->slots.push_back(kv->pe(r).reserve_slot());
          if (sc_core::sc_time_stamp() > start) {
            int first_tile = 0;
            for (int gt : sh_.tiles_of_group[size_t(group_)])
              if (sh_.tiles[size_t(gt)].job == int(j)) { first_tile = gt; break; }
            const TileRef& t = sh_.tiles[size_t(first_tile)];
            sh_.span(start, sc_core::sc_time_stamp(), component_, "wait_slots", t, 0, 0);
          }
          sc_core::sc_time delay;
          m->data = read_kv(sh_, int(j), owner, kv->kv_base(owner, int(j)), uint64_t(first), n, *slices[owner], scratch_, delay);
          NocPacket p;
          p.src = kv->endpoint_of(owner);
          p.dsts = eps;
          p.bytes = m->wire_bytes(job);
          p.tag = kKvTag;
          broadcast_bytes_ += p.bytes;
          p.payload = std::move(m);
          sender_.send_after(std::move(p), delay);
        }
    }
  }
}

void KvMover::report_stats(StatsNode& node) const {
  node.set(KvMoverStats::remap_bytes, remap_bytes_);
  node.set(KvMoverStats::broadcast_bytes, broadcast_bytes_);
}

}  // namespace ahbm
