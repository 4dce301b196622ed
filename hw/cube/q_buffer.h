#pragma once
// The CUBE's shared Q buffer: written once per Q tile by the multicast, read by each of the
// CUBE's PEs through a few read ports, freed when the last PE has read the tile. The Q source
// reserves space before it sends (credit flow control), so a full buffer stalls the multicast.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hw/common/contract/interfaces.h"
#include "hw/common/sim/sim_shared.h"
#include "hw/common/observe/stats.h"

namespace ahbm {

// Counters of the Q buffer (QBuffer::report_stats).
struct QBufferStats {
  static constexpr stats::Max<uint64_t> high_water{"high_water_bytes", "bytes", "most Q-buffer bytes reserved at once"};
  static constexpr stats::BusyNs port_busy{"port_busy_ns", "ns", "read ports busy, summed over ports"};
  static constexpr stats::Sum<uint64_t> bytes_written{"bytes_written", "bytes", "Q tiles written into the buffer"};
  static constexpr stats::Sum<uint64_t> bytes_read{"bytes_read", "bytes", "Q tiles read out, once per reading PE"};
};

class QBuffer : public sc_core::sc_module, public QTileSource, public QCredits, public StatsProvider {
 public:
  void report_stats(StatsNode& node) const override;
  // Each tile is read by the participating PEs of CUBE `cube` of KV-head group `group` (all
  // `pes_per_cube` by default).
  QBuffer(sc_core::sc_module_name name, SimShared& sh, int group, int cube, int pes_per_cube);

  // Q source side (QCredits): blocks the calling thread until `bytes` fit, then books them.
  void reserve(uint64_t bytes) override;
  // Network side: a tile arrived (called from the NoC's process; does not wait).
  void arrive(int tile, uint64_t bytes, TileData data);
  // PE side (QTileSource): blocks until tile `tile` is written, then reads it through a free port.
  TileData read_q(int tile, int component_id) override;
  // A weight GEMM's X chunk arrived (called from the NoC's process; does not wait): it is written
  // through the write port after what arrived before it. Without credits: X is taken to fit
  // (the blocking keeps two X blocks per PE within the buffer; docs/model.md "Weight GEMMs").
  void arrive_x(int chunk, uint64_t bytes);
  // PE side (QTileSource): blocks until X chunks [0, chunk] are written.
  void wait_x(size_t chunk) override;

  uint64_t high_water() const { return high_water_; }
  // FAULT INJECTION (tests only, fault_injection.leak_q_credit_cube): space is never freed.
  bool fault_leak_credit = false;
  const sc_core::sc_time& port_busy() const { return ports_.busy(); }

  // Back to the state of a new module for the next run (the chip is reused: simulate.h).
  void begin_run();

 private:
  struct Entry {
    uint64_t bytes = 0;
    TileData data;
    int readers_left = 0;
    bool ready = false;
  };
  struct Arrival {
    int tile;  // a Q tile, or (x) an X chunk
    uint64_t bytes;
    TileData data;
    bool x = false;
  };
  void x_written(int chunk);
  void write_loop();
  void set_occupancy();
  std::string describe_wait() const;  // for the stall watchdog

  SimShared& sh_;
  const QBufferConfig& cfg_;
  int cube_, chip_cube_, pes_per_cube_;
  int component_;
  uint64_t used_ = 0;
  uint64_t high_water_ = 0;
  uint64_t bytes_written_ = 0, bytes_read_ = 0;
  uint64_t reserve_waiting_ = 0;  // bytes a blocked reserve() asks for
  std::map<int, Entry> entries_;
  TimedQueue<Arrival> arrivals_;
  ServerPool write_port_{1};
  ServerPool ports_;
  sc_core::sc_event space_freed_, tile_ready_;
  // X chunks written (by index) and how many from the first are all in; the event is notified
  // when that prefix grows, which is all a waiting PE needs.
  std::vector<char> x_written_;
  size_t x_prefix_ = 0;
  int x_waiting_ = 0;  // PEs blocked in wait_x (for the stall watchdog)
  sc_core::sc_event x_ready_;
  int sig_occupancy_;
};

}  // namespace ahbm
