#include "hw/common/contract/job.h"

#include <algorithm>
#include <limits>
#include <map>

#include "hw/common/base/error.h"
#include "hw/common/config/hw_config.h"

namespace ahbm {

namespace {

// Where the replica holding tokens [first, first + count) of src's shard sits among `pe`'s
// replicas, or -1.
int find_replica(const AttentionJob& j, int pe, int src, int first, int count) {
  if (size_t(pe) >= j.replicas.size()) return -1;
  const auto& reps = j.replicas[size_t(pe)];
  for (size_t i = 0; i < reps.size(); ++i)
    if (reps[i].src_pe == src && reps[i].first <= first && first + count <= reps[i].first + reps[i].count)
      return int(i);
  return -1;
}

// A field's value as timing reads it: the shards without their K and V, everything else whole.
template <class T>
const T& timing_part(const T& v) {
  return v;
}
std::vector<KvShard> timing_part(const std::vector<KvShard>& shards) {
  std::vector<KvShard> out(shards.size());
  for (size_t p = 0; p < shards.size(); ++p) {
    out[p].tokens = shards[p].tokens;
    out[p].info = shards[p].info;
  }
  return out;
}

}  // namespace

AttentionJob timing_copy(const AttentionJob& j) {
  AttentionJob t;
#define AHBM_COPY_TIMING_FIELD(field, kind) t.field = timing_part(j.field);
  AHBM_JOB_TIMING_FIELDS(AHBM_COPY_TIMING_FIELD)
#undef AHBM_COPY_TIMING_FIELD
  t.values = false;
  return t;
}

void copy_dataflow(AttentionJob& dst, const AttentionJob& src) {
  dst.tiles = src.tiles;
  dst.segments = src.segments;
  dst.replicas = src.replicas;
  dst.remap = src.remap;
  dst.kv_broadcast = src.kv_broadcast;
  dst.kernel = src.kernel;
  dst.scores_in_hbm = src.scores_in_hbm;
}

std::vector<KvBlock> pe_kv_blocks(const AttentionJob& j, int pe, const QTile& t, int kv_tile, bool skip_masked) {
  // A token is seen by some row of the tile when it is shared and at or before the tile's last
  // position, or private to an agent with a row of the tile at or after it.
  constexpr int32_t kNone = std::numeric_limits<int32_t>::min();
  int32_t last_pos = kNone;
  std::vector<int32_t> last_pos_of(skip_masked ? j.agents.size() : 0, kNone);
  if (skip_masked)
    for (int r = t.row_begin; r < t.row_end; ++r) {
      const RowInfo& row = j.rows[size_t(r)];
      last_pos = std::max(last_pos, row.pos);
      if (size_t(row.agent) < last_pos_of.size()) last_pos_of[size_t(row.agent)] = std::max(last_pos_of[size_t(row.agent)], row.pos);
    }
  const auto seen = [&](const KvInfo& k) {
    if (k.owner == kSharedOwner) return k.pos <= last_pos;
    return size_t(k.owner) < last_pos_of.size() && k.pos <= last_pos_of[size_t(k.owner)];
  };
  std::vector<KvBlock> out;
  const std::vector<KvSegment> segments = pe_segments(j, pe);
  for (size_t i = 0; i < segments.size(); ++i) {
    const KvSegment& seg = segments[i];
    for (int off = 0; off < seg.count; off += kv_tile) {
      const KvBlock b{seg.src_pe, seg.first + off, std::min(kv_tile, seg.count - off), seg.remote, int(i)};
      const std::vector<KvInfo>& info = j.shards[size_t(b.src_pe)].info;
      if (skip_masked && info.size() >= size_t(b.first + b.n)) {  // a job without token info has no mask
        bool any = false;
        for (int c = 0; c < b.n && !any; ++c) any = seen(info[size_t(b.first + c)]);
        if (!any) continue;
      }
      out.push_back(b);
    }
  }
  return out;
}

void check_job_dataflow(const HwConfig& cfg, const std::vector<AttentionJob>& jobs, const std::string& where) {
  const int pes = cfg.pes_per_group();
  std::map<int, int> broadcast_of_group;  // group -> 1 broadcast, 0 streamed
  for (size_t jb = 0; jb < jobs.size(); ++jb) {
    const AttentionJob& j = jobs[jb];
    const std::string at = where + " job " + std::to_string(jb) + " (" + j.phase + ")";
    auto pe_ok = [&](int p, const std::string& what) {
      if (p < 0 || p >= pes)
        throw InputError(at + ": " + what + " names PE " + std::to_string(p) + "; allowed 0.." +
                         std::to_string(pes - 1));
    };
    if (j.kernel < 0) throw InputError(at + ": kernel " + std::to_string(j.kernel) + " must be >= 0");
    auto [it, fresh] = broadcast_of_group.emplace(j.group, int(j.kv_broadcast));
    if (!fresh && it->second != int(j.kv_broadcast))
      throw InputError(at + ": KV-broadcast and streamed jobs cannot share KV-head group " +
                       std::to_string(j.group) + " in one step");
    for (const QTile& t : j.tiles) {
      for (int p : t.pes) pe_ok(p, "a Q tile");
      if (j.kv_broadcast && t.pes.size() != 1)
        throw InputError(at + ": a KV-broadcast job needs exactly one PE per Q tile (tile at row " +
                         std::to_string(t.row_begin) + " has " + std::to_string(t.pes.size()) + ")");
    }
    if (j.segments.size() > size_t(pes) || j.replicas.size() > size_t(pes))
      throw InputError(at + ": segments/replicas given for more than " + std::to_string(pes) + " PEs");
    for (size_t p = 0; p < j.replicas.size(); ++p)
      for (const KvReplica& r : j.replicas[p]) {
        pe_ok(r.src_pe, "a KV replica");
        const int have = j.shards[size_t(r.src_pe)].tokens;
        if (r.first < 0 || r.count < 0 || r.first + r.count > have)
          throw InputError(at + ": replica on PE " + std::to_string(p) + " of tokens [" + std::to_string(r.first) +
                           ", " + std::to_string(r.first + r.count) + ") of PE " + std::to_string(r.src_pe) +
                           " lies outside its " + std::to_string(have) + "-token shard");
      }
    if (j.kv_writes.size() > size_t(pes))
      throw InputError(at + ": KV writes given for more than " + std::to_string(pes) + " PEs");
    for (size_t p = 0; p < j.kv_writes.size(); ++p)
      for (const KvWrite& w : j.kv_writes[p]) {
        if (w.copy()) pe_ok(w.src_pe, "a KV copy");
        const int have = j.shards[p].tokens;
        if (w.first < 0 || w.count <= 0 || w.first + w.count > have)
          throw InputError(at + ": KV write on PE " + std::to_string(p) + " of tokens [" + std::to_string(w.first) +
                           ", " + std::to_string(w.first + w.count) + ") lies outside its " + std::to_string(have) +
                           "-token shard");
      }
    if (j.kv_broadcast) continue;
    for (size_t p = 0; p < j.segments.size(); ++p)
      for (const KvSegment& s : j.segments[p]) {
        pe_ok(s.src_pe, "a KV segment");
        const int have = j.shards[size_t(s.src_pe)].tokens;
        if (s.first < 0 || s.count < 0 || s.first + s.count > have)
          throw InputError(at + ": segment of PE " + std::to_string(p) + " reads tokens [" +
                           std::to_string(s.first) + ", " + std::to_string(s.first + s.count) + ") of PE " +
                           std::to_string(s.src_pe) + " whose shard has " + std::to_string(have));
        if (!s.remote && s.src_pe != int(p) && find_replica(j, int(p), s.src_pe, s.first, s.count) < 0)
          throw InputError(at + ": PE " + std::to_string(p) + " streams tokens of PE " + std::to_string(s.src_pe) +
                           " locally but holds no replica of them");
      }
  }
}

uint64_t replica_offset_tokens(const AttentionJob& j, int pe, int src, int first) {
  uint64_t at = uint64_t(j.shards[size_t(pe)].tokens);
  const int i = find_replica(j, pe, src, first, 0);
  for (int r = 0; r < i; ++r) at += uint64_t(j.replicas[size_t(pe)][size_t(r)].count);
  return at + uint64_t(first - j.replicas[size_t(pe)][size_t(i)].first);
}

}  // namespace ahbm
