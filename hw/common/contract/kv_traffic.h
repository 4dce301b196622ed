#pragma once
// KV that moves between the PEs of a KV-head group over the NoC (Policy B variants of
// docs/policies.md): remote reads (B2), the remap copies before a step (B1) and the owner
// broadcast of THInfer's Q/O-stationary dataflow (B5). Policy A moves no KV at all.
//
// Every such packet carries NocPacket::tag = kKvTag (Q tiles and O tiles use tags >= 0) and a
// KvMessage payload; the CUBE endpoint that receives it dispatches on `kind` to its PEs' KvEndpoint
// (interfaces.h).
#include <cstdint>
#include <memory>
#include <vector>

#include <systemc>

#include "hw/common/contract/job.h"

namespace ahbm {

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
  // request: read timing-only even in a run with values (a copy-on-write page copy, whose
  // values are placed before the run; KvDma::write_kv), so the response carries no data.
  bool timing_only = false;
  uint64_t wire_bytes(const AttentionJob& j) const { return 2 * uint64_t(count) * kv_row_bytes(j); }
};
using KvMessagePtr = std::shared_ptr<const KvMessage>;

}  // namespace ahbm
