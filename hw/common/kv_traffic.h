#pragma once
// KV that moves between the PEs of a KV-head group over the NoC (Policy B variants of
// docs/policies.md): remote reads (B2), the remap copies before a step (B1) and the owner
// broadcast of THInfer's Q/O-stationary dataflow (B5). Policy A moves no KV at all.
//
// Every such packet carries NocPacket::tag = kKvTag (Q tiles and O tiles use tags >= 0) and a
// KvMessage payload; the CUBE endpoint that receives it dispatches on `kind`.
#include <cstdint>
#include <memory>
#include <vector>

#include <systemc>

#include "hw/common/job.h"

namespace ahbm {

class Noc;
class Pe;
class HbmSlice;

constexpr int kKvTag = -1;

enum class KvMsgKind { request, response, remap, broadcast };

struct KvMessage {
  KvMsgKind kind = KvMsgKind::request;
  int job = 0;
  int requester = -1;              // request/response: the PE (in the group) that asked
  int src_pe = 0;                  // the PE whose shard the tokens belong to
  int first = 0, count = 0;        // tokens of src_pe's shard
  std::vector<int> dst_pes;        // remap/broadcast: receiving PEs of the group
  std::vector<int> slots;          // broadcast: the SRAM slot reserved in each receiver
  std::shared_ptr<const std::vector<unsigned char>> data;  // K rows then V rows, stored bytes (null: timing only)
  uint64_t wire_bytes(const AttentionJob& j) const { return 2 * uint64_t(count) * kv_row_bytes(j); }
};
using KvMessagePtr = std::shared_ptr<const KvMessage>;

// What the modules of one group need to move KV: the network, each CUBE's endpoint, every
// PE and HBM slice of the group (filled in as the CUBEs are built), and where each job's data
// starts in each slice.
struct GroupFabric {
  Noc* noc = nullptr;
  std::vector<int> cube_endpoints;
  std::vector<Pe*> pes;                       // CUBE-major
  std::vector<HbmSlice*> slices;              // CUBE-major
  std::vector<std::vector<uint64_t>> base;    // [pe][job] byte address of the job's K rows
  int cube_of(int pe) const;
};

}  // namespace ahbm
