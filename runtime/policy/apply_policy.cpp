#include "runtime/policy/apply_policy.h"

#include <algorithm>

#include "hw/common/base/error.h"

namespace ahbm {

const std::vector<Policy>& all_policies() {
  static const std::vector<Policy> list = {Policy::A, Policy::B1, Policy::B2, Policy::B3, Policy::B4, Policy::B5};
  return list;
}

std::string policy_name(Policy p) {
  static const char* names[] = {"A", "B1", "B2", "B3", "B4", "B5"};
  return names[int(p)];
}

Policy parse_policy(const std::string& name, const std::string& field) {
  for (Policy p : all_policies())
    if (policy_name(p) == name) return p;
  throw InputError(field + ": unknown policy \"" + name + "\" (allowed: A, B1, B2, B3, B4, B5, auto)");
}

namespace {

// Tiles of at most `per_tile` rows in row order; tile k runs on `on(k)`.
template <class On>
std::vector<QTile> round_robin_tiles(int rows, int per_tile, On on) {
  std::vector<QTile> tiles;
  int k = 0;
  for (int b = 0; b < rows; b += per_tile, ++k) tiles.emplace_back(b, std::min(rows, b + per_tile), on(k));
  return tiles;
}

// Lays `j` (in the planner's Policy-A layout) out in place: its tensors stay where they are.
void lay_out(AttentionJob& j, const HwConfig& hw, const Layout& layout) {
  const AttentionJob& a = j;  // the shards the layout reads are left unchanged
  const Policy p = layout.policy;
  const int rows = a.row_count(), cubes = hw.group.cubes, per_cube = hw.cube.pes, pes = hw.pes_per_group();
  if (rows == 0) return;
  if (layout.tile_rows <= 0)
    throw std::logic_error("apply_policy: policy " + policy_name(p) + " without Q tile rows (the planner's candidate)");
  const auto on_all = [](int) { return std::vector<int>{}; };
  if (p == Policy::A) {
    j.tiles = round_robin_tiles(rows, layout.tile_rows, on_all);
    return;
  }
  j.segments.clear();
  j.replicas.clear();
  j.remap = false;
  j.kv_broadcast = false;
  // B1..B4: one Q group per CUBE (ceil(rows / cubes) rows, cut further by the planner if they
  // do not fit); B5: ceil(rows / PEs) rows per PE, likewise.
  const int group_rows = layout.tile_rows;
  switch (p) {
    case Policy::A:
      break;
    case Policy::B4:
      j.tiles = round_robin_tiles(rows, group_rows, on_all);
      break;
    case Policy::B1:
    case Policy::B2:
    case Policy::B3: {
      // Tiles alternate between CUBEs so every CUBE starts at once.
      j.tiles = round_robin_tiles(rows, group_rows, [&](int k) {
        std::vector<int> on;
        for (int l = 0; l < per_cube; ++l) on.push_back((k % cubes) * per_cube + l);
        return on;
      });
      j.segments.assign(size_t(pes), {});
      if (p != Policy::B2) j.replicas.assign(size_t(pes), {});
      for (int pe = 0; pe < pes; ++pe) {
        const int c = pe / per_cube, l = pe % per_cube;
        j.segments[size_t(pe)].push_back({pe, 0, a.shards[size_t(pe)].tokens, false});
        for (int c2 = 0; c2 < cubes; ++c2) {
          if (c2 == c) continue;
          const int src = c2 * per_cube + l, n = a.shards[size_t(src)].tokens;
          j.segments[size_t(pe)].push_back({src, 0, n, p == Policy::B2});
          if (p != Policy::B2) j.replicas[size_t(pe)].push_back({src, 0, n});
        }
      }
      j.remap = p == Policy::B1;
      if (p == Policy::B3) {
        // Replicas live in HBM for good: say clearly when they do not fit.
        for (int pe = 0; pe < pes; ++pe) {
          const uint64_t need = 2 * pe_held_tokens(j, pe) * kv_row_bytes(j);
          if (need > hw.pe.hbm.capacity_bytes)
            throw InputError("policy B3: replicating the KV across " + std::to_string(cubes) + " Q groups needs " +
                             std::to_string(need) + " bytes on PE " + std::to_string(pe) +
                             ", more than pe.hbm.capacity_bytes = " + std::to_string(hw.pe.hbm.capacity_bytes));
        }
      }
      break;
    }
    case Policy::B5: {
      j.kv_broadcast = true;
      j.tiles = round_robin_tiles(rows, layout.tile_rows, [&](int k) { return std::vector<int>{k % pes}; });
      break;
    }
  }
}

}  // namespace

AttentionJob apply_policy(const AttentionJob& a, const HwConfig& hw, const Layout& layout) {
  AttentionJob j = a;
  lay_out(j, hw, layout);
  return j;
}

std::vector<AttentionJob> apply_layout(std::vector<AttentionJob> a_jobs, const HwConfig& hw, const Layout& layout) {
  for (AttentionJob& j : a_jobs) lay_out(j, hw, layout);
  return a_jobs;
}

void relay_out(std::vector<AttentionJob>& jobs, const std::vector<AttentionJob>& a_jobs, const HwConfig& hw,
               const Layout& layout) {
  if (jobs.size() != a_jobs.size()) throw std::logic_error("relay_out: the jobs are not copies of the Policy-A jobs");
  for (size_t i = 0; i < jobs.size(); ++i) {
    copy_dataflow(jobs[i], a_jobs[i]);
    lay_out(jobs[i], hw, layout);
  }
}

}  // namespace ahbm
