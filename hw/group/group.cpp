#include "hw/group/group.h"

#include <algorithm>
#include <string>

#include "hw/common/base/component.h"

namespace ahbm {

namespace {

std::string cube_name(int c) { return "cube" + std::to_string(c); }

// The components the reduction network records its merges on: each CUBE's reducer (the
// network is built before the CUBEs, so their paths are spelled here, as the CUBEs are named).
std::vector<std::string> reducer_paths(const sc_core::sc_object& group, int cubes) {
  std::vector<std::string> out;
  for (int c = 0; c < cubes; ++c) out.push_back(component_path(group) + "." + cube_name(c) + ".reducer");
  return out;
}

}  // namespace

Group::Group(sc_core::sc_module_name name, SimShared& sh, int group, Noc& noc, std::vector<int> cube_endpoints,
             int host_endpoint)
    : sc_core::sc_module(name),
      network("reduction", sh, group, sh.cfg.group.cubes, noc, cube_endpoints, host_endpoint,
              reducer_paths(*this, sh.cfg.group.cubes)),
      sh_(sh),
      group_(group),
      cube_endpoints_(std::move(cube_endpoints)) {
  for (int c = 0; c < sh.cfg.group.cubes; ++c) {
    cubes.push_back(std::make_unique<Cube>(cube_name(c).c_str(), sh, noc, group, c));
    Cube& cube = *cubes.back();
    noc.attach(cube_endpoints_[size_t(c)], &cube);
    cube.kv.bind(*this);
    cube.reducer.state_out.bind(*network.node_in[size_t(c)]);
    // cube.reducer.inter_cube = shared: the states arriving over the links are merged on the
    // reducer's units (docs/model.md, "Reduction").
    if (sh.cfg.cube.reducer.inter_cube == InterCubeMerge::shared) network.use_merge_units(c, cube.reducer.merge_units());
  }
  mover = std::make_unique<KvMover>("kv_mover", sh, noc, group);
  mover->kv.bind(*this);
  // One port of the KV mover to every slice of the group, in PE order (reads of the owners' shards).
  for (int p = 0; p < sh.cfg.pes_per_group(); ++p) {
    HbmSlice& s = slice(p);
    links_.bind(mover->slices, s.socket, "kv_mover_slice" + std::to_string(p) + "_check", sh.tlm_checks,
                [sp = &s] { return std::make_pair(uint64_t(0), sp->last()); });
  }
}

void Group::begin_run() {
  const JobList& jobs = sh_.jobs;
  network.begin_run();
  for (auto& cube : cubes) cube->begin_run();
  // Each job of this group gets its own region of every PE's HBM slice: K rows of the tokens
  // the PE holds (its shard, then its replicas), then their V rows.
  const int pes = sh_.cfg.pes_per_group();
  base_.assign(size_t(pes), std::vector<uint64_t>(jobs.size(), 0));
  std::vector<uint64_t> used(size_t(pes), 0);
  for (size_t j = 0; j < jobs.size(); ++j) {
    if (jobs[j].group != group_) continue;
    for (int p = 0; p < pes; ++p) {
      base_[size_t(p)][j] = used[size_t(p)];
      used[size_t(p)] += 2 * pe_held_tokens(jobs[j], p) * kv_row_bytes(jobs[j]);
    }
  }
  // The runtime's KV placement (the slices' backdoor, used for this only): each PE's shard, and the replicas placed at write time (a
  // remapped job's replicas arrive over the NoC during the step instead).
  for (size_t j = 0; j < jobs.size(); ++j) {
    const AttentionJob& job = jobs[j];
    if (job.group != group_ || !job.values) continue;
    const size_t d = size_t(job.head_dim);
    for (int p = 0; p < pes; ++p) {
      HbmSlice& s = slice(p);
      const uint64_t at = base_[size_t(p)][j], row = kv_row_bytes(job), held = pe_held_tokens(job, p);
      const KvShard& shard = job.shards[size_t(p)];
      s.backdoor_write(at, shard.k.data(), shard.k.size(), job.dtype);
      s.backdoor_write(at + held * row, shard.v.data(), shard.v.size(), job.dtype);
      if (job.remap || size_t(p) >= job.replicas.size()) continue;
      for (const KvReplica& r : job.replicas[size_t(p)]) {
        const KvShard& src = job.shards[size_t(r.src_pe)];
        const uint64_t h = replica_offset_tokens(job, p, r.src_pe, r.first);
        s.backdoor_write(at + h * row, src.k.data() + size_t(r.first) * d, size_t(r.count) * d, job.dtype);
        s.backdoor_write(at + (held + h) * row, src.v.data() + size_t(r.first) * d, size_t(r.count) * d, job.dtype);
      }
    }
  }
  mover->begin_run();
  place_gemm_weights();
}

void Group::place_gemm_weights() {
  gemm_w_.clear();
  const GemmRun& g = sh_.gemm;
  const int pes = sh_.cfg.pes_per_group();
  for (size_t j = 0; j < g.jobs.size(); ++j) {
    const GemmJob& job = g.jobs[j];
    if (!job.values()) continue;
    for (int p = 0; p < pes; ++p) {
      const GemmPePlan& pl = g.plans[j][size_t(group_ * pes + p)];
      if (!pl.active()) continue;
      // N-block by N-block, each K_p × Nb block row-major: every W tile is one burst.
      std::vector<float> packed;
      packed.reserve(size_t(pl.shard.k_count) * size_t(pl.shard.n_count));
      for (int n0 = 0; n0 < pl.shard.n_count; n0 += pl.blk.nb) {
        const int nb = std::min(pl.blk.nb, pl.shard.n_count - n0);
        for (int k = 0; k < pl.shard.k_count; ++k) {
          const float* row = job.w.data() + size_t(pl.shard.k_begin + k) * size_t(job.n) + size_t(pl.shard.n_begin + n0);
          packed.insert(packed.end(), row, row + nb);
        }
      }
      gemm_w_.push_back(std::move(packed));
      slice(p).backdoor_write(pl.w_base, gemm_w_.back().data(), gemm_w_.back().size(), job.dtype);
    }
  }
}

void Group::report_stats(StatsNode& node) const {
  node.set(GroupStats::group, int64_t(group_));
  StatsNode& cubes_node = node.list(GroupStats::cubes);
  for (const auto& cube : cubes) cube->report_stats(cubes_node.child(cube->basename()));
  network.report_stats(node);
  mover->report_stats(node);
}

}  // namespace ahbm
