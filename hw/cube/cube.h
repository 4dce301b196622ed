#pragma once
// One HBM CUBE: its shared Q buffer, its PEs (each with its HBM slice) and its reducer. The CUBE
// is a NoC endpoint: Q tiles multicast to it land in the Q buffer; KV packets (kv_traffic.h)
// are dispatched: a remote-read request is served by the owning PE's slice after the
// symmetric-memory overhead (remote.overhead_ns) and answered with the data; remote-read data,
// remap copies and broadcast blocks go to the receiving PEs. The CUBE binds its PEs' Q and
// state ports to its Q buffer and reducer; its group binds `kv` and the reducer's state_out.
#include <memory>
#include <string>
#include <vector>

#include <tlm_utils/multi_passthrough_initiator_socket.h>

#include "hw/common/contract/interfaces.h"
#include "hw/common/observe/tlm_checker.h"
#include "hw/cube/cube_reducer.h"
#include "hw/cube/q_buffer.h"
#include "hw/noc/delayed_sender.h"
#include "hw/noc/noc.h"
#include "hw/pe/hbm_slice.h"
#include "hw/pe/pe.h"

namespace ahbm {

// Counters of a CUBE (Cube::report_stats), besides its Q buffer, reducer and PEs.
struct CubeStats {
  static constexpr const char* q_buffer = "q_buffer";  // child, inlined as q_buffer_<counter>
  static constexpr const char* reducer = "reducer";    // child, inlined as reducer_<counter>
  static constexpr const char* pes = "pes";            // list, one element per PE (pe<index>)
  static constexpr stats::Sum<uint64_t> remote_requests_served{"remote_requests_served", "requests", "remote KV reads served for PEs of other CUBEs (B2)"};
};

class Cube : public sc_core::sc_module, public NocClient, public StatsProvider {
 public:
  void report_stats(StatsNode& node) const override;
  sc_core::sc_port<KvFabric> kv;  // its group's KV layout and KV traffic (its PEs' kv too)

  // CUBE `cube` of KV-head group `group`; remote-read answers go out on `noc`.
  Cube(sc_core::sc_module_name name, SimShared& sh, Noc& noc, int group, int cube);
  void noc_receive(int endpoint, const NocPacket& packet) override;
  uint64_t remote_requests_served() const { return served_; }

  QBuffer q_buffer;
  CubeReducer reducer;
  std::vector<std::unique_ptr<HbmSlice>> slices;
  std::vector<std::unique_ptr<Pe>> pes;
  // The remote-read server's ports to the CUBE's slices (one per PE, in order).
  tlm_utils::multi_passthrough_initiator_socket<Cube> slice_port;

  // Back to the state of a new CUBE for the next run (the chip is reused: simulate.h): its Q
  // buffer, reducer, PEs and HBM slices too.
  void begin_run();

 private:
  void serve_loop();
  TlmLinks links_;
  std::vector<unsigned char> scratch_;  // data buffer of timing-only reads
  SimShared& sh_;
  int group_, cube_;
  TimedQueue<KvMessagePtr> requests_;
  DelayedSender responder_;
  uint64_t served_ = 0;
};

}  // namespace ahbm
