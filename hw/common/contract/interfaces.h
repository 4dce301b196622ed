#pragma once
// The small interfaces the modules of a KV-head group talk through (docs/architecture.md, "who
// calls whom"). A module holds an sc_port of the interface it uses; the module above both binds
// it to the one that implements it, so no module names a peer's concrete class:
//   PE          --QTileSource-->  its CUBE's Q buffer        (reads a Q tile)
//   PE          --StateSink---->  its CUBE's reducer         (pushes a tile's (m, l, o) state)
//   CUBE reducer--StateSink---->  the group's reduction network (one input per CUBE)
//   PE, CUBE, KV mover --KvFabric--> the group               (KV layout, NoC endpoints,
//                                                              other PEs)
//   CUBE, KV mover --KvEndpoint--> a PE                      (KV that arrives for it)
//   Q source    --QCredits----->  each CUBE's Q buffer       (credit flow control)
// The chip boundary (host -> Q source) and every path to an HBM slice (PE, CUBE remote-read
// server, KV mover) are TLM-2.0 sockets; every
// NoC client holds the chip's Noc (hw/noc/noc.h), the abstract plug-in interface of the network.
#include <cstdint>
#include <memory>
#include <vector>

#include <systemc>

#include "hw/common/model/attn_state.h"
#include "hw/common/contract/kv_traffic.h"

namespace ahbm {

// A Q tile's values as the host wrote them (fp32, rounded to the storage type); null in
// timing-only runs.
using TileData = std::shared_ptr<const std::vector<float>>;
// A partial softmax state (m, l, o) of one Q tile; null in timing-only runs.
using StatePtr = std::shared_ptr<AttnState>;

// Where a PE reads its Q tiles from: the CUBE's shared Q buffer.
class QTileSource : public virtual sc_core::sc_interface {
 public:
  // Blocks until Q tile `tile` (global index) is there, then reads it through a free read port;
  // the read is recorded as a span of component `reader_component`.
  virtual TileData read_q(int tile, int reader_component) = 0;
  // A weight GEMM's X (gemm_job.h GemmXChunk): blocks until chunk `chunk` and every chunk before
  // it are written in the buffer.
  virtual void wait_x(size_t chunk) = 0;
};

// Credit flow control of a Q buffer, as the Q source sees it.
class QCredits : public virtual sc_core::sc_interface {
 public:
  // Blocks the calling thread until `bytes` fit, then books them.
  virtual void reserve(uint64_t bytes) = 0;
};

// Where a partial state goes: a PE's state to its CUBE reducer, a CUBE's merged state to its
// node of the inter-CUBE reduction network.
class StateSink : public virtual sc_core::sc_interface {
 public:
  // The state of Q tile `tile` (global index) from `source` (the PE's index in its CUBE; a
  // reduction node ignores it). May block the caller for the transfer, recorded as a span of
  // `source_component`.
  virtual void send_state(int source, int tile, StatePtr state, int source_component) = 0;
};

// A PE's side of KV moved between the PEs of its group (kv_traffic.h). None of the deliveries
// waits (they are called from NoC handlers); reserve_slot() blocks.
class KvEndpoint : public virtual sc_core::sc_interface {
 public:
  virtual void remote_response(KvMessagePtr m) = 0;                 // data of a remote read (B2)
  virtual void remap_arrived(const KvMessage& m) = 0;               // a replica copy (B1)
  virtual void broadcast_arrived(const KvMessage& m, int slot) = 0;  // a broadcast block (B5)
  // Reserves an SRAM slot for a broadcast block (blocks until one is free).
  virtual int reserve_slot() = 0;
};

// What a KV-head group offers its PEs, CUBEs and KV mover to move KV: where each job's KV sits
// in each PE's HBM slice (read and written by each of them through its own TLM port to the
// slice), the NoC endpoint of each PE's CUBE and each PE's KvEndpoint. PEs are numbered CUBE-major within the group.
class KvFabric : public virtual sc_core::sc_interface {
 public:
  virtual int endpoint_of(int pe) const = 0;  // NoC endpoint of PE `pe`'s CUBE
  virtual int cube_of(int pe) const = 0;
  // Byte address in PE `pe`'s slice of the K rows of job `job` (its V rows follow them).
  virtual uint64_t kv_base(int pe, int job) const = 0;
  virtual KvEndpoint& pe(int pe) = 0;
};

}  // namespace ahbm
