#pragma once
// The CUBE reducer: PEs push their per-tile (m, l, o) states over the intra-CUBE bus; the
// reducer merges them on its merge units (cube.reducer.units, each cube.reducer.lanes wide) in
// the configured order (cube.reducer.order: serial or tree, hw/common/model/merge_tree.h) and, once
// every PE that takes part in the tile has arrived and been merged, hands the CUBE state to the
// inter-CUBE reduction (state_out). Merges are bookings on the units (first come, first
// served, each no earlier than its inputs), not per-cycle processes: serial merges one at a
// time (the reducer takes the next arrival when the running state is merged, as it always
// did), tree merges as many at once as units are free. With
// cube.reducer.inter_cube = shared the inter-CUBE merges of this CUBE book the same units
// (Group hands them to the reduction network). Values are merged in PE index order in the
// order's shape, whatever the arrival order, so timing never changes the numbers.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hw/common/model/attn_state.h"
#include "hw/common/contract/interfaces.h"
#include "hw/common/model/merge_tree.h"
#include "hw/common/sim/sim_shared.h"
#include "hw/common/observe/stats.h"

namespace ahbm {

// Counters of the CUBE reducer (CubeReducer::report_stats).
struct CubeReducerStats {
  static constexpr stats::Sum<uint64_t> rows_merged{"rows_merged", "rows", "PE state rows merged"};
  static constexpr stats::Sum<uint64_t> vector_ops{"vector_ops", "element-ops", "vector element-ops of those merges"};
  static constexpr stats::Sum<uint64_t> state_bytes{"state_bytes", "bytes", "PE states received over the CUBE bus (staged in its SRAM)"};
};

class CubeReducer : public sc_core::sc_module, public StateSink, public StatsProvider {
 public:
  void report_stats(StatsNode& node) const override;
  sc_core::sc_port<StateSink> state_out;  // this CUBE's node of the inter-CUBE reduction

  CubeReducer(sc_core::sc_module_name name, SimShared& sh, int cube, int pes);
  // StateSink, called from a PE thread: books the bus, waits for the transfer, queues the state.
  void send_state(int local_pe, int tile, StatePtr state, int pe_component) override;
  uint64_t rows_merged() const { return rows_merged_; }
  // The merge units (the reduction network books its inter-CUBE merges on them when
  // cube.reducer.inter_cube = shared).
  ServerPool& merge_units() { return units_; }

  // Back to the state of a new module for the next run (the chip is reused: simulate.h).
  void begin_run();

 private:
  using Schedule = MergeSchedule<sc_core::sc_time>;
  // What the merge loop handles, in time order: a state that came over the bus, or (tree) a
  // merge booked on a unit starting or ending.
  struct Event {
    enum class Kind { arrival, merge_start, merge_end } kind;
    int pe, tile;
    StatePtr state;
    sc_core::sc_time start;  // merge_end: when the merge started
    Schedule::Node node;     // merge_end: the tree node it produced
  };
  struct Pending {
    Schedule schedule;
    std::vector<StatePtr> slots;  // per PE of the CUBE
    int arrived = 0;
  };
  void merge_loop();
  // Books one merge of tile `tile` (producing `node`) that may start at `ready`; returns when
  // it ends. Tree: its start and end come back as events. Serial: waits until it has ended.
  sc_core::sc_time book_merge(int tile, const sc_core::sc_time& ready, Schedule::Node node);
  // A merge of `tile` that started at `start` ends now: its span and counters.
  void merged(int tile, const sc_core::sc_time& start);
  void finish_tile(int tile);
  std::string describe_wait() const;  // for the stall watchdog

  SimShared& sh_;
  int cube_;
  int pes_;
  int component_;
  ServerPool bus_{1};
  MergeOrder order_;
  ServerPool units_;
  TimedQueue<Event> events_;
  std::map<int, Pending> pending_;  // by tile
  int merging_ = 0;                 // merges in progress (the busy signal: any)
  uint64_t rows_merged_ = 0;
  uint64_t vector_ops_ = 0, state_bytes_ = 0;
  int dropped_ = 0;  // tiles withheld by fault injection
  int sig_rows_merged_, sig_busy_;
};

}  // namespace ahbm
