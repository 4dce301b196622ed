#pragma once
// The CUBE reducer: PEs push their per-tile (m, l, o) states over the intra-CUBE bus; the
// reducer merges each arrival into the running CUBE state (merge cost per arrival) and, once all
// PEs that take part in the tile have arrived, hands the CUBE state to the inter-CUBE
// reduction (state_out). Values are merged in PE index order, whatever the arrival order, so
// timing never changes the numbers.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hw/common/attn_state.h"
#include "hw/common/interfaces.h"
#include "hw/common/sim_shared.h"
#include "hw/common/stats.h"

namespace ahbm {

// Counters of the CUBE reducer (CubeReducer::report_stats).
struct CubeReducerStats {
  static constexpr stats::Sum<uint64_t> rows_merged{"rows_merged"};  // PE state rows merged
};

class CubeReducer : public sc_core::sc_module, public StateSink, public StatsProvider {
 public:
  void report_stats(StatsNode& node) const override;
  sc_core::sc_port<StateSink> state_out;  // this CUBE's node of the inter-CUBE reduction

  CubeReducer(sc_core::sc_module_name name, SimShared& sh, int cube, int pes);
  // StateSink, called from a PE thread: books the bus, waits for the transfer, queues the state.
  void send_state(int local_pe, int tile, StatePtr state, int pe_component) override;
  uint64_t rows_merged() const { return rows_merged_; }

  // Back to the state of a new module for the next run (the chip is reused: simulate.h).
  void begin_run();

 private:
  struct Arrival {
    int pe, tile;
    StatePtr state;
  };
  void merge_loop();
  std::string describe_wait() const;  // for the stall watchdog

  SimShared& sh_;
  int cube_;
  int pes_;
  int component_;
  ServerPool bus_{1};
  TimedQueue<Arrival> arrivals_;
  std::map<int, std::vector<StatePtr>> pending_;  // tile -> state per PE
  std::map<int, int> arrived_;
  uint64_t rows_merged_ = 0;
  int dropped_ = 0;  // tiles withheld by fault injection
  int sig_rows_merged_, sig_busy_;
};

}  // namespace ahbm
