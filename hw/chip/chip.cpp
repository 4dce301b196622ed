#include "hw/chip/chip.h"

namespace ahbm {

std::vector<int> Chip::groups_of(const HwConfig& cfg, const std::vector<AttentionJob>& jobs) {
  std::vector<char> used(size_t(cfg.groups), 0);
  for (const AttentionJob& j : jobs)
    if (!j.tiles.empty()) used.at(size_t(j.group)) = 1;
  std::vector<int> groups;
  for (int g = 0; g < cfg.groups; ++g)
    if (used[size_t(g)]) groups.push_back(g);
  return groups;
}

Chip::Chip(sc_core::sc_module_name name, SimShared& sh, const NocRegistry& nocs, const std::string& hw_file,
           std::vector<int> groups)
    : sc_core::sc_module(name), active_groups(std::move(groups)), sh_(sh) {
  const HwConfig& cfg = sh.cfg;

  // Endpoints: host, Q source, then every CUBE of every active group.
  NocContext ctx;
  ctx.params = cfg.noc.params;
  ctx.config_file = hw_file;
  ctx.clock = sh.clock;
  ctx.trace = &sh.trace;
  ctx.spans = &sh.spans;
  // A packet's tag is a global tile index (NoC spans carry that tile's phase and agent), or
  // kKvTag for KV moved between PEs (spans carry its job's first tile's phase).
  ctx.span_hook = [&sh](const std::string& component, const char* activity, const NocPacket& p,
                        const sc_core::sc_time& start, const sc_core::sc_time& end) {
    size_t gt = size_t(p.tag);
    if (p.tag == kKvTag) {
      const int job = std::static_pointer_cast<const KvMessage>(p.payload)->job;
      for (gt = 0; gt + 1 < sh.tiles.size() && sh.tiles[gt].job != job;) ++gt;
    }
    const TileRef& t = sh.tiles.at(gt);
    sh.span(start, end, sh.spans.intern(component), activity, t, t.rows(), int64_t(p.bytes));
  };
  ctx.endpoints = {"host", "qsrc"};
  std::vector<std::vector<int>> group_endpoints(size_t(cfg.groups));
  for (int g : active_groups)
    for (int c = 0; c < cfg.group.cubes; ++c) {
      group_endpoints[size_t(g)].push_back(int(ctx.endpoints.size()));
      ctx.endpoints.push_back("g" + std::to_string(g) + ".cube" + std::to_string(c));
    }
  noc = nocs.get(cfg.noc.model, hw_file).make("noc", ctx);
  host = std::make_unique<Host>("host", sh);
  noc->attach(0, host.get());

  std::vector<std::vector<QBuffer*>> group_buffers(size_t(cfg.groups));
  for (int g : active_groups) {
    const std::string gpath = "group" + std::to_string(g);
    networks.push_back(std::make_unique<ReductionNetwork>((gpath + "_reduction").c_str(), sh, gpath, g,
                                                          cfg.group.cubes, *noc, group_endpoints[size_t(g)], 0));
    fabrics.push_back(std::make_unique<GroupFabric>());
    GroupFabric& fabric = *fabrics.back();
    fabric.noc = noc.get();
    fabric.cube_endpoints = group_endpoints[size_t(g)];
    cubes.emplace_back();
    for (int c = 0; c < cfg.group.cubes; ++c) {
      const std::string cname = gpath + "_cube" + std::to_string(c);
      cubes.back().push_back(std::make_unique<Cube>(cname.c_str(), sh, gpath + ".cube" + std::to_string(c), g, c,
                                                    *networks.back(), fabric));
      Cube& cube = *cubes.back().back();
      noc->attach(group_endpoints[size_t(g)][size_t(c)], &cube);
      group_buffers[size_t(g)].push_back(&cube.q_buffer);
    }
    movers.push_back(std::make_unique<KvMover>((gpath + "_kv_mover").c_str(), sh, gpath, g, fabric));
  }
  q_source = std::make_unique<QSource>("q_source", sh, *noc, 1, group_buffers, group_endpoints);
  QSource& q = *q_source;
  links_.bind(host->q_out, q.socket, "q_check", sh.tlm_checks, [qp = &q] { return std::make_pair(uint64_t(0), qp->last()); });
}

void Chip::begin_run() {
  const HwConfig& cfg = sh_.cfg;
  const JobList& jobs = sh_.jobs;
  noc->begin_run();
  q_source->begin_run();
  host->begin_run();
  for (size_t gi = 0; gi < active_groups.size(); ++gi) {
    const int g = active_groups[gi];
    networks[gi]->begin_run();
    for (auto& cube : cubes[gi]) cube->begin_run();
    // Each job of this group gets its own region of every PE's HBM slice: K rows of the tokens
    // the PE holds (its shard, then its replicas), then their V rows.
    const int pes = cfg.pes_per_group();
    GroupFabric& fabric = *fabrics[gi];
    fabric.base.assign(size_t(pes), std::vector<uint64_t>(jobs.size(), 0));
    std::vector<uint64_t> used(size_t(pes), 0);
    for (size_t j = 0; j < jobs.size(); ++j) {
      if (jobs[j].group != g) continue;
      for (int p = 0; p < pes; ++p) {
        fabric.base[size_t(p)][j] = used[size_t(p)];
        used[size_t(p)] += 2 * pe_held_tokens(jobs[j], p) * kv_row_bytes(jobs[j]);
      }
    }
    // The runtime's KV placement (the slices' backdoor, used for this only): each PE's shard, and the replicas placed at write time (a
    // remapped job's replicas arrive over the NoC during the step instead).
    for (size_t j = 0; j < jobs.size(); ++j) {
      const AttentionJob& job = jobs[j];
      if (job.group != g || !job.values) continue;
      const size_t d = size_t(job.head_dim);
      for (int p = 0; p < pes; ++p) {
        HbmSlice& slice = *fabric.slices[size_t(p)];
        const uint64_t at = fabric.base[size_t(p)][j], row = kv_row_bytes(job), held = pe_held_tokens(job, p);
        const KvShard& s = job.shards[size_t(p)];
        slice.backdoor_write(at, s.k.data(), s.k.size(), job.dtype);
        slice.backdoor_write(at + held * row, s.v.data(), s.v.size(), job.dtype);
        if (job.remap || size_t(p) >= job.replicas.size()) continue;
        for (const KvReplica& r : job.replicas[size_t(p)]) {
          const KvShard& src = job.shards[size_t(r.src_pe)];
          const uint64_t h = replica_offset_tokens(job, p, r.src_pe, r.first);
          slice.backdoor_write(at + h * row, src.k.data() + size_t(r.first) * d, size_t(r.count) * d, job.dtype);
          slice.backdoor_write(at + (held + h) * row, src.v.data() + size_t(r.first) * d, size_t(r.count) * d, job.dtype);
        }
      }
    }
    movers[gi]->begin_run();
  }
}

void Chip::report_stats(StatsNode& node) const {
  StatsNode& groups = node.list(ChipStats::groups);
  for (size_t gi = 0; gi < active_groups.size(); ++gi) {
    StatsNode& g = groups.child("group" + std::to_string(active_groups[gi]));
    g.set(ChipStats::group, int64_t(active_groups[gi]));
    StatsNode& cubes_node = g.list(ChipStats::cubes);
    for (size_t c = 0; c < cubes[gi].size(); ++c) cubes[gi][c]->report_stats(cubes_node.child("cube" + std::to_string(c)));
    networks[gi]->report_stats(g);
    movers[gi]->report_stats(g);
  }
  noc->report_stats(node.child(ChipStats::noc));
}

}  // namespace ahbm
