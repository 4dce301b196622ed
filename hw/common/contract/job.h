#pragma once
// What the runtime hands the hardware for one attention step of one KV head: the stacked Q rows
// with their (agent, position), each PE's KV shard with (owner, position) per token, and the Q
// row tiling. The mask follows from the metadata: a row may attend to a key when the key is
// shared or belongs to the row's own agent, and its position is not after the row's.
//
// The dataflow fields below (QTile::pes, AttentionJob::segments/replicas/remap/kv_broadcast,
// kernel) default to Policy A of the AHBM note: every PE of the group takes part in every Q
// tile and streams its own whole shard from its own HBM slice. The runtime's policy layer
// (runtime/policy/apply_policy.h) fills them for the Policy B variants; docs/policies.md.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "hw/common/base/storage_type.h"

namespace ahbm {

constexpr int kSharedOwner = -1;

struct RowInfo {
  int agent = 0;     // index into AttentionJob::agents
  int32_t pos = 0;   // absolute token position of the query
};

struct KvInfo {
  int owner = kSharedOwner;  // kSharedOwner or the agent whose private page holds it
  int32_t pos = 0;           // absolute token position of the key
};

inline bool visible(const RowInfo& r, const KvInfo& k) {
  return (k.owner == kSharedOwner || k.owner == r.agent) && k.pos <= r.pos;
}

struct KvShard {
  int tokens = 0;
  std::vector<float> k, v;  // tokens x head_dim each, row-major (empty in timing-only runs)
  std::vector<KvInfo> info;
};

struct QTile {
  QTile() = default;
  QTile(int begin, int end, std::vector<int> on_pes = {}) : row_begin(begin), row_end(end), pes(std::move(on_pes)) {}
  int row_begin = 0, row_end = 0;  // [begin, end) into the job's rows
  // PEs of the group (CUBE-major index) that work on this tile; empty = all of them. The Q
  // source sends the tile only to the CUBEs of these PEs, and the states reduce over them only
  // (inside each CUBE, then across the participating CUBEs, rooted at the lowest one).
  std::vector<int> pes;
  int rows() const { return row_end - row_begin; }
};

// A run of KV tokens a PE streams for each of its Q tiles: `count` tokens starting at token
// `first` of PE `src_pe`'s shard. `remote` = false: read from this PE's own HBM slice (its own
// shard when src_pe is itself, otherwise a replica it holds, see KvReplica); true: requested
// over the NoC from src_pe's CUBE, served by src_pe's HBM slice (Policy B2).
struct KvSegment {
  int src_pe = 0;
  int first = 0;
  int count = 0;
  bool remote = false;
};

// A copy of tokens [first, first + count) of src_pe's shard held in another PE's HBM slice,
// after that PE's own shard (Policies B1 and B3).
struct KvReplica {
  int src_pe = 0;
  int first = 0;
  int count = 0;
};

// KV a PE writes into its HBM slice for this job before it streams its KV tiles (timed paged-KV
// memory work, docs/model.md "Timed KV writes"): tokens [first, first + count) of its shard.
// src_pe < 0: the step's new tokens, appended (their K/V produced outside the attention, e.g.
// by the QKV projection, are written); src_pe >= 0: a page copied from PE src_pe's slice before
// the step appends to it (copy-on-write, or a no-sharing fork): read there (over the NoC when
// src_pe is another PE, as a remote read), then written.
struct KvWrite {
  int first = 0;
  int count = 0;
  int src_pe = -1;
  bool copy() const { return src_pe >= 0; }
  bool operator==(const KvWrite& o) const { return first == o.first && count == o.count && src_pe == o.src_pe; }
};

struct AttentionJob {
  std::string phase = "fanout";
  int group = 0;  // KV-head group that runs it
  int head_dim = 128;
  // Storage type of Q, K, V: bytes in HBM, DMA, multicast, Q buffer and SRAM follow it. The
  // float vectors below hold values already rounded to it; arithmetic stays fp32.
  DType dtype = DType::fp32;
  float scale = 0.f;             // 1/sqrt(head_dim) unless set
  std::vector<float> q;          // rows x head_dim, row-major (empty in timing-only runs)
  std::vector<RowInfo> rows;
  std::vector<std::string> agents;
  std::vector<QTile> tiles;
  std::vector<KvShard> shards;   // one per PE of the group, CUBE-major: pe = cube * pes + local
  bool values = true;            // false: timing only, no tensor arithmetic
  // Per PE of the group, the KV segments it streams for each of its tiles; empty (or an empty
  // list for a PE) = its own whole shard, locally (Policy A).
  std::vector<std::vector<KvSegment>> segments;
  // Per PE of the group, the replicas its HBM slice holds (empty = none).
  std::vector<std::vector<KvReplica>> replicas;
  // true: the replicas are copied over the NoC in a timed remap phase before the PE streams
  // (then the PE rebuilds its page table: remote.page_rebuild_cycles per page); false: they were
  // placed at KV write time and cost nothing per step.
  bool remap = false;
  // true (THInfer's Q/O-stationary dataflow, Policy B5): each owner reads its shard once per
  // pass and broadcasts the blocks over the NoC; every PE with a tile consumes every block.
  // `segments` is ignored; each tile must name exactly one PE.
  bool kv_broadcast = false;
  // Per PE of the group, the KV writes it makes before streaming (empty = none). Timed unless
  // pe.dma.kv_writes = "free"; values are placed before the run either way.
  std::vector<std::vector<KvWrite>> kv_writes;
  // Kernel launch this job belongs to: jobs with the same id share one launch
  // (host.kernel_launch_ns, paid serially on the host in id order). 0 for every job = one
  // unified launch for the step.
  int kernel = 0;
  // Phased attention fusion off (docs/models.md "Fusion choices", THInfer): each kernel is two,
  // S = Q·Kᵀ and softmax(S)·V, and every KV block's scores S (rows × block fp32) go to the PE's HBM
  // slice and back between them instead of staying in SRAM. Values are unchanged (S is fp32 either
  // way); the round trip and the second launch are timed.
  bool scores_in_hbm = false;
  int row_count() const { return int(rows.size()); }
  uint64_t elem_bytes() const { return dtype_bytes(dtype); }
  // Bytes of PE p's K and V rows in HBM.
  uint64_t kv_bytes(int p) const { return 2 * uint64_t(shards[size_t(p)].tokens) * uint64_t(head_dim) * elem_bytes(); }
};

// THE TIMING FIELDS OF A JOB, listed once: everything but its tensors (q, the shards' K and V) and
// `values`. X(field, kind): kind `shape` when the cost model's per-shape work reads the field
// (runtime/policy/cost_model.cpp JobShape: jobs equal on every shape field share one), `step`
// when only the step's timing does (launch order, spans, the group a job runs on). Three
// projections read this list: timing_copy copies every field, the cost model's same_shape compares
// the shape fields, serve's step_key keys every field (runtime/serve/engine.cpp). A new timing
// field of AttentionJob is one line here.
#define AHBM_JOB_TIMING_FIELDS(X)                                                                  \
  X(phase, step) X(group, step) X(head_dim, shape) X(dtype, shape) X(scale, step) X(rows, shape) \
  X(agents, shape) X(tiles, shape) X(shards, shape) X(segments, shape) X(replicas, shape)        \
  X(remap, shape) X(kv_broadcast, shape) X(kv_writes, shape) X(kernel, step) X(scores_in_hbm, step)
enum class JobFieldKind { shape, step };

// Timing equality of one field's values (timing_equal), for same_shape: a shard by its tokens and
// their info (not its K, V), the agents by their count (timing reads rows' agent indices, never
// the names), everything else field by field.
inline bool timing_equal(const RowInfo& a, const RowInfo& b) { return a.agent == b.agent && a.pos == b.pos; }
inline bool timing_equal(const KvInfo& a, const KvInfo& b) { return a.owner == b.owner && a.pos == b.pos; }
inline bool timing_equal(const KvSegment& a, const KvSegment& b) {
  return a.src_pe == b.src_pe && a.first == b.first && a.count == b.count && a.remote == b.remote;
}
inline bool timing_equal(const KvReplica& a, const KvReplica& b) {
  return a.src_pe == b.src_pe && a.first == b.first && a.count == b.count;
}
inline bool timing_equal(const KvWrite& a, const KvWrite& b) { return a == b; }
inline bool timing_equal(const std::vector<std::string>& a, const std::vector<std::string>& b) { return a.size() == b.size(); }
template <class T>
bool timing_equal(const T& a, const T& b) {
  return a == b;
}
template <class T>
bool timing_equal(const std::vector<T>& a, const std::vector<T>& b);
inline bool timing_equal(const QTile& a, const QTile& b) {
  return a.row_begin == b.row_begin && a.row_end == b.row_end && timing_equal(a.pes, b.pes);
}
inline bool timing_equal(const KvShard& a, const KvShard& b) { return a.tokens == b.tokens && timing_equal(a.info, b.info); }
template <class T>
bool timing_equal(const std::vector<T>& a, const std::vector<T>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const T& x, const T& y) { return timing_equal(x, y); });
}

// Bytes of one K (or V) row in HBM and on the wire (the job's storage type).
inline uint64_t kv_row_bytes(const AttentionJob& j) { return uint64_t(j.head_dim) * j.elem_bytes(); }
// Bytes of a Q tile of `rows` rows of `j` in host memory, on the host link, the NoC and in the Q
// buffer (the job's storage type; the PEs widen it to fp32 only when they read it).
inline uint64_t q_tile_bytes(const AttentionJob& j, int rows) { return uint64_t(rows) * kv_row_bytes(j); }

// The KV writes of PE `pe` (none when the job lists none for it).
inline const std::vector<KvWrite>& pe_kv_writes(const AttentionJob& j, int pe) {
  static const std::vector<KvWrite> kNone;
  return size_t(pe) < j.kv_writes.size() ? j.kv_writes[size_t(pe)] : kNone;
}

inline bool tile_has_pe(const QTile& t, int pe) {
  return t.pes.empty() || std::find(t.pes.begin(), t.pes.end(), pe) != t.pes.end();
}
// Participating PEs of a tile that sit in CUBE `cube`.
inline int tile_pes_in_cube(const QTile& t, int cube, int pes_per_cube) {
  if (t.pes.empty()) return pes_per_cube;
  int n = 0;
  for (int p : t.pes) n += p / pes_per_cube == cube;
  return n;
}
// Rank of participating PE `pe` (group index) among the tile's participants in its CUBE, in
// PE order: its leaf in the CUBE's merge tree (hw/common/model/merge_tree.h).
inline int tile_pe_rank_in_cube(const QTile& t, int pe, int pes_per_cube) {
  int rank = 0;
  for (int p = pe - pe % pes_per_cube; p < pe; ++p) rank += tile_has_pe(t, p);
  return rank;
}
// Participating CUBEs of a tile, ascending, into `out` (its memory reused: the cost model asks
// for every tile of every candidate).
inline void tile_cubes(const QTile& t, int cubes, int pes_per_cube, std::vector<int>& out) {
  out.clear();
  for (int c = 0; c < cubes; ++c)
    if (tile_pes_in_cube(t, c, pes_per_cube) > 0) out.push_back(c);
}
inline std::vector<int> tile_cubes(const QTile& t, int cubes, int pes_per_cube) {
  std::vector<int> out;
  tile_cubes(t, cubes, pes_per_cube, out);
  return out;
}
// The segments PE `pe` streams (its own whole shard unless the job says otherwise).
inline std::vector<KvSegment> pe_segments(const AttentionJob& j, int pe) {
  if (size_t(pe) < j.segments.size() && !j.segments[size_t(pe)].empty()) return j.segments[size_t(pe)];
  return {KvSegment{pe, 0, j.shards[size_t(pe)].tokens, false}};
}
// A KV tile a PE streams for one Q tile: `n` tokens from token `first` of PE src_pe's shard,
// read from its own slice (a replica when src_pe is another PE) or, `remote`, over the NoC.
struct KvBlock {
  int src_pe = 0;
  int first = 0;
  int n = 0;
  bool remote = false;
  int segment = 0;  // index into pe_segments(j, pe)
};
// The KV tiles PE `pe` streams for Q tile `t` of `j`, in stream order: its segments cut into
// `kv_tile` tokens (a segment's last tile shorter). `skip_masked` (pe.dma.masked_tiles = skip)
// leaves out every tile no row of `t` can see (visible() false for all its tokens and rows):
// such a tile leaves every row's (m, l, o) exactly unchanged, so skipping it moves time, not O.
// The PE's DMA and compute loops and the cost model all stream this list.
std::vector<KvBlock> pe_kv_blocks(const AttentionJob& j, int pe, const QTile& t, int kv_tile, bool skip_masked);

// KV tokens a PE's HBM slice holds for this job: its shard plus its replicas.
inline uint64_t pe_held_tokens(const AttentionJob& j, int pe) {
  uint64_t n = uint64_t(j.shards[size_t(pe)].tokens);
  if (size_t(pe) < j.replicas.size())
    for (const KvReplica& r : j.replicas[size_t(pe)]) n += uint64_t(r.count);
  return n;
}

// Lock-step pass of each tile of a KV-broadcast job (Policy B5), in tile order: a tile's pass
// is the number of earlier tiles of the job on the same PE. Pass k broadcasts the whole KV once
// to the PEs of its tiles (hw/cube/kv_mover.cpp), and the Q source sends a broadcast job's tiles
// pass by pass (hw/common/sim/sim_shared.cpp) so that every tile of a pass can reach its CUBE before
// tiles of later passes take Q-buffer space.
inline std::vector<int> broadcast_pass_of_tiles(const AttentionJob& j) {
  std::vector<int> pass, seen;
  for (const QTile& t : j.tiles) {
    const int pe = t.pes.empty() ? 0 : t.pes[0];  // check_job_dataflow: exactly one PE per tile
    if (size_t(pe) >= seen.size()) seen.resize(size_t(pe) + 1, 0);
    pass.push_back(seen[size_t(pe)]++);
  }
  return pass;
}

// When job `j`'s kernel has been launched, in ns from the start of the step: launches are paid
// one after another on the host, in ascending kernel id, `launch_ns` each.
inline double kernel_start_ns(const std::vector<AttentionJob>& jobs, size_t j, double launch_ns) {
  if (launch_ns <= 0) return 0.0;
  std::vector<int> ids;
  for (const auto& x : jobs) ids.push_back(x.kernel);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  const auto rank = std::lower_bound(ids.begin(), ids.end(), jobs[j].kernel) - ids.begin();
  // Attention fusion off: two launches per kernel (its Q·Kᵀ and its softmax·V), both before it runs.
  const double launches_per_kernel = jobs[j].scores_in_hbm ? 2.0 : 1.0;
  return double(rank + 1) * launches_per_kernel * launch_ns;
}

// Checks the dataflow fields against the hardware (PE indices, segment ranges, replicas that
// back local segments, one PE per broadcast tile, no broadcast mixed with streamed jobs in one
// group). Throws InputError naming `where`. Defined in hw/common/contract/job.cpp.
struct HwConfig;
void check_job_dataflow(const HwConfig& cfg, const std::vector<AttentionJob>& jobs, const std::string& where);

// The job without its tensors (Q, K, V), values = false: every field of AHBM_JOB_TIMING_FIELDS,
// which is everything timing, the dataflow checks and the policy cost model read
// (test_perf_timing_only checks that a timing copy simulates to the same times as the job itself).
AttentionJob timing_copy(const AttentionJob& j);
// Copies the dataflow a policy layout sets (tiles, segments, replicas, remap, KV broadcast,
// kernel) from `src` into `dst`: what timing_copy keeps of it, and what re-laying a job out from
// its Policy-A form restores (runtime/policy/apply_policy.h relay_out).
void copy_dataflow(AttentionJob& dst, const AttentionJob& src);
// Index, among the tokens PE `pe` holds (its shard, then its replicas in order), of token
// `first` of `src`'s shard held as a replica. The slice stores K rows of all held tokens, then V.
uint64_t replica_offset_tokens(const AttentionJob& j, int pe, int src, int first);

}  // namespace ahbm
