#pragma once
// Where Q enters the chip: a TLM-2.0 target the host writes Q tiles into (its address window is
// the run's Q tiles back to back, q_address_map.h; one whole tile per write; a small staging
// buffer; the host blocks while it is full), and a process that multicasts each tile over the
// NoC to the CUBEs of its KV-head group that work on it (QTile::pes; all by default) once every
// destination Q buffer has room (credits), and not before the tile's kernel has been launched.
// A run of weight GEMMs sends the X chunks of its w_stationary jobs the same way (GemmXChunk).
#include <memory>
#include <vector>

#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "hw/common/contract/interfaces.h"
#include "hw/common/sim/sim_shared.h"
#include "hw/chip/q_address_map.h"
#include "hw/noc/noc.h"

namespace ahbm {

class QSource : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<QSource> socket;

  // `group_buffers[g]`: the credits of group g's CUBEs' Q buffers (interface pointers, not
  // ports: which groups exist is decided per chip at elaboration); `group_endpoints[g]`: the
  // CUBEs' NoC endpoints.
  QSource(sc_core::sc_module_name name, SimShared& sh, Noc& noc, int endpoint,
          std::vector<std::vector<QCredits*>> group_buffers, std::vector<std::vector<int>> group_endpoints,
          int staging_tiles = 2);
  // Maps the run's tiles into the address window (SimShared::begin_run has been called).
  void begin_run();
  // The address window's last byte (for checkers).
  uint64_t last() const { return q_map_.last(); }

 private:
  struct Staged {
    int tile;
    uint64_t bytes;
    TileData data;
  };
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void multicast_loop();
  // A weight GEMM's X chunk (gemm_job.h GemmXChunk): to the CUBEs with a part of its job, at
  // once; the Q buffers take it without credits (docs/model.md "Weight GEMMs").
  void multicast_x(const Staged& s);
  void free_staging();  // a staged entry has left
  std::string describe_wait() const;  // for the stall watchdog
  WaitNote credit_wait_;

  SimShared& sh_;
  QAddressMap q_map_;
  Noc& noc_;
  int endpoint_;
  std::vector<std::vector<QCredits*>> group_buffers_;
  std::vector<std::vector<int>> group_endpoints_;
  int staging_tiles_;
  int staged_ = 0;
  TimedQueue<Staged> staging_;
  sc_core::sc_event staging_freed_;
  int component_;
  int sig_staged_;
};

}  // namespace ahbm
