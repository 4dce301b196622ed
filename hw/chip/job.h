#pragma once
// What the runtime hands the hardware for one attention step of one KV head: the stacked Q rows
// with their (agent, position), each PE's KV shard with (owner, position) per token, and the Q
// row tiling. The mask follows from the metadata: a row may attend to a key when the key is
// shared or belongs to the row's own agent, and its position is not after the row's.
#include <cstdint>
#include <string>
#include <vector>

#include "hw/pe/storage_type.h"

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
  int row_begin = 0, row_end = 0;  // [begin, end) into the job's rows
  int rows() const { return row_end - row_begin; }
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
  int row_count() const { return int(rows.size()); }
  uint64_t elem_bytes() const { return dtype_bytes(dtype); }
  // Bytes of PE p's K and V rows in HBM.
  uint64_t kv_bytes(int p) const { return 2 * uint64_t(shards[size_t(p)].tokens) * uint64_t(head_dim) * elem_bytes(); }
};

}  // namespace ahbm
