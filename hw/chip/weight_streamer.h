#pragma once
// The W stream of the X-stationary weight GEMMs (hw/common/contract/gemm_job.h): every W tile is read once
// per pass from its holder's HBM slice and multicast over the NoC to every CUBE with a receiving
// PE, into an SRAM slot each receiver reserved first, so `pe.dma.buffers` bounds the tiles in
// flight and the receivers advance in lockstep. The pattern is Policy B5's KV broadcast
// (hw/group/kv_mover.h) at chip scope: W shards lie in every active group's slices and the rows
// in every group's PEs, so one streamer walks the whole stream in the order the receivers
// compute it (gemm_job.h gemm_column_groups). Reads book the holder's slice as its own DMA does,
// so they contend with the receivers' X reads and Y write-backs there.
#include <memory>
#include <vector>

#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>

#include "hw/common/sim/sim_shared.h"
#include "hw/noc/delayed_sender.h"
#include "hw/noc/noc.h"

namespace ahbm {

class Pe;

class WeightStreamer : public sc_core::sc_module {
 public:
  // Ports to the HBM slices, one per chip PE of the active groups in chip order (bound by the chip).
  tlm_utils::multi_passthrough_initiator_socket<WeightStreamer> slices;

  // `pes[p]`, `endpoints[p]`, `port[p]`: chip PE p, its CUBE's NoC endpoint and its slice's port
  // index (null, -1 for PEs of inactive groups).
  WeightStreamer(sc_core::sc_module_name name, SimShared& sh, Noc& noc, std::vector<Pe*> pes, std::vector<int> endpoints,
                 std::vector<int> port);
  // Starts the run's stream (a run with x_stationary GEMM jobs; otherwise nothing happens).
  void begin_run();

 private:
  void loop();
  void stream_jobs();
  SimShared& sh_;
  DelayedSender sender_;
  std::vector<Pe*> pes_;
  std::vector<int> endpoints_, port_;
  std::vector<uint64_t> sent_;  // per chip PE, tiles sent to it this run (GemmTileMessage::seqs)
  std::vector<unsigned char> scratch_;  // data buffer of timing-only reads
  int component_;
  sc_core::sc_event start_;
};

}  // namespace ahbm
