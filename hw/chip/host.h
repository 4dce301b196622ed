#pragma once
// The host side of the chip boundary: writes Q tiles (or, in a run of weight GEMMs, the X chunks
// of its w_stationary jobs: gemm_job.h GemmXChunk) into the Q source's address window
// (q_address_map.h) over TLM-2.0, in their storage type (latency plus transfer at the host-link
// bandwidth, one write after another), and receives the O tiles the root CUBEs send over the NoC to the chip's host
// port: each crosses the host link's chip-to-host direction (its own resource: the link is full
// duplex) at host.bandwidth_gbps, one after another, and lands host.latency_ns later.
#include <vector>

#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "hw/chip/q_address_map.h"
#include "hw/common/model/attn_state.h"
#include "hw/common/sim/sim_shared.h"
#include "hw/common/observe/stats.h"
#include "hw/noc/noc.h"

namespace ahbm {

// Counters of the host link (Host::report_stats, the chip's child `host`).
struct HostStats {
  static constexpr stats::Sum<uint64_t> q_bytes{"q_bytes_in", "bytes", "Q tiles written host to chip"};
  static constexpr stats::Sum<uint64_t> o_bytes{"o_bytes_out", "bytes", "O tiles returned chip to host"};
};

class Host : public sc_core::sc_module, public NocClient, public StatsProvider {
 public:
  void report_stats(StatsNode& node) const override;
  tlm_utils::simple_initiator_socket<Host> q_out;

  Host(sc_core::sc_module_name name, SimShared& sh);
  void noc_receive(int endpoint, const NocPacket& packet) override;
  // Sizes the results for the run's jobs (SimShared::begin_run has been called) and starts
  // writing its Q tiles.
  void begin_run();

  std::vector<MatrixRM> outputs;                      // per job, rows x head_dim
  std::vector<sc_core::sc_time> tile_done;            // per global tile
  std::vector<bool> tile_received;
  size_t tiles_received = 0;

 private:
  // An O tile on its way over the host link.
  struct OReturn {
    int tile;
    std::shared_ptr<const void> payload;
    sc_core::sc_time start;  // when the link started sending it
  };
  void send_loop();
  // Takes each O tile once it has landed in host memory.
  void receive_loop();
  void receive(size_t tile, const std::shared_ptr<const void>& payload);
  // One run: writes its Q tiles in send order.
  void send_tiles();
  std::string describe_wait() const;  // for the stall watchdog
  SimShared& sh_;
  int component_;
  QAddressMap q_map_;
  WaitNote q_wait_;
  sc_core::sc_event start_;  // begin_run: the Q writer starts the run's tiles
  ServerPool o_link_{1};      // the host link, chip to host
  uint64_t q_bytes_ = 0, o_bytes_ = 0;
  TimedQueue<OReturn> landed_;
};

}  // namespace ahbm
