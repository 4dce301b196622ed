#include "hw/group/group.h"

#include <string>

#include "hw/common/component.h"

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
  }
  mover = std::make_unique<KvMover>("kv_mover", sh, noc, group);
  mover->kv.bind(*this);
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
  // The runtime's KV placement: each PE's shard, and the replicas placed at write time (a
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
}

std::shared_ptr<const std::vector<unsigned char>> Group::read_kv(int job, int pe, uint64_t h, int count,
                                                                 sc_core::sc_time& delay) {
  const AttentionJob& j = sh_.jobs[size_t(job)];
  const uint64_t row = kv_row_bytes(j), held = pe_held_tokens(j, pe), base = kv_base(pe, job);
  const size_t half = size_t(count) * size_t(row);
  std::shared_ptr<std::vector<unsigned char>> data;
  if (j.values) data = std::make_shared<std::vector<unsigned char>>(2 * half);
  unsigned char* k = data ? data->data() : nullptr;
  unsigned char* v = data ? data->data() + half : nullptr;
  // K and V issued together, as the PE's own DMA does.
  sc_core::sc_time dk = sc_core::SC_ZERO_TIME, dv = sc_core::SC_ZERO_TIME;
  HbmSlice& s = slice(pe);
  if (!s.read(base + h * row, k, uint64_t(count) * row, dk) || !s.read(base + (held + h) * row, v, uint64_t(count) * row, dv))
    SC_REPORT_FATAL("ahbm/kv", "KV read outside the stored shard");
  delay = std::max(dk, dv);
  return data;
}

sc_core::sc_time Group::write_kv(int job, int pe, uint64_t h, const unsigned char* data, int count) {
  const AttentionJob& j = sh_.jobs[size_t(job)];
  const uint64_t row = kv_row_bytes(j), held = pe_held_tokens(j, pe), base = kv_base(pe, job);
  const uint64_t n = uint64_t(count) * row;
  HbmSlice& s = slice(pe);
  const sc_core::sc_time k_done = s.write(base + h * row, data, n);
  return std::max(k_done, s.write(base + (held + h) * row, data ? data + n : nullptr, n));
}

}  // namespace ahbm
