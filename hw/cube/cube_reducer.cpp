#include "hw/cube/cube_reducer.h"

#include "hw/common/component.h"
#include "hw/common/engines.h"

namespace ahbm {

CubeReducer::CubeReducer(sc_core::sc_module_name name, SimShared& sh, int cube, int pes)
    : sc_core::sc_module(name),
      state_out("state_out"),
      sh_(sh),
      cube_(cube),
      pes_(pes),
      component_(sh.spans.intern(component_path(*this))) {
  const std::string path = component_path(*this);
  sig_rows_merged_ = sh.trace.add_signal(path + ".rows_merged", 32);
  sig_busy_ = sh.trace.add_signal(path + ".busy", 1);
  sh.waits.add(path, [this] { return describe_wait(); });
  SC_HAS_PROCESS(CubeReducer);
  SC_THREAD(merge_loop);
}

void CubeReducer::begin_run() {
  bus_.reset();
  arrivals_.clear();
  pending_.clear();
  arrived_.clear();
  rows_merged_ = 0;
  dropped_ = 0;
}

void CubeReducer::send_state(int local_pe, int tile, StatePtr state, int pe_component) {
  const TileRef& t = sh_.tiles[size_t(tile)];
  const uint64_t bytes = AttnState::wire_bytes(t.rows(), sh_.jobs[size_t(t.job)].head_dim);
  auto [start, end] = bus_.reserve(sh_.cycles(ceil_div(bytes, sh_.cfg.cube.reducer.bus_bytes_per_cycle)));
  sc_core::wait(end - sc_core::sc_time_stamp());
  sh_.span(start, end, pe_component, "send_state", t, t.rows(), int64_t(bytes));
  arrivals_.push({local_pe, tile, std::move(state)});
}

void CubeReducer::merge_loop() {
  const auto& red = sh_.cfg.cube.reducer;
  for (;;) {
    Arrival a = arrivals_.pop();
    const TileRef& t = sh_.tiles[size_t(a.tile)];
    const int d = sh_.jobs[size_t(t.job)].head_dim;
    auto& slots = pending_[a.tile];
    if (slots.empty()) slots.resize(size_t(pes_));
    slots[size_t(a.pe)] = std::move(a.state);
    // The first state of a tile initialises the accumulator; each later one costs one merge.
    if (arrived_[a.tile]++ > 0) {
      const sc_core::sc_time start = sc_core::sc_time_stamp();
      sh_.trace.set(sig_busy_, 1);
      sc_core::wait(sh_.cycles(merge_cycles(red.lanes, sh_.cfg.pe.vector.ops_per_merge, uint64_t(t.rows()),
                                            uint64_t(d))));
      sh_.trace.set(sig_busy_, 0);
      sh_.span(start, sc_core::sc_time_stamp(), component_, "merge", t, t.rows(),
               int64_t(AttnState::wire_bytes(t.rows(), d)));
      rows_merged_ += uint64_t(t.rows());
      sh_.trace.set(sig_rows_merged_, rows_merged_);
    }
    if (arrived_[a.tile] < tile_pes_in_cube(sh_.jobs[size_t(t.job)].tiles[size_t(t.index)], cube_, pes_)) continue;
    StatePtr cube_state;
    for (const StatePtr& s : slots) {  // values: fold the participating PEs in PE order
      if (!s) continue;
      if (!cube_state) cube_state = std::make_shared<AttnState>(*s);
      else merge_into(*cube_state, *s);
    }
    if (cube_state) {
      sh_.guard.check(*cube_state, component_, a.tile);
    }
    pending_.erase(a.tile);
    arrived_.erase(a.tile);
    if (sh_.cfg.fault.drop_state_cube == cube_) {  // FAULT INJECTION (tests): the state never leaves
      ++dropped_;
      continue;
    }
    state_out->send_state(cube_, a.tile, std::move(cube_state), component_);
  }
}

std::string CubeReducer::describe_wait() const {
  std::string out;
  for (const auto& [tile, n] : arrived_)
    out += (out.empty() ? "" : "; ") + std::string("tile ") + std::to_string(tile) + " has states from " +
           std::to_string(n) + " of " + std::to_string(pes_) + " PEs";
  if (dropped_)
    out += (out.empty() ? "" : "; ") + std::to_string(dropped_) +
           " merged states withheld from the inter-CUBE reduction [fault injection]";
  return out;
}

void CubeReducer::report_stats(StatsNode& node) const {
  node.component = sh_.spans.name(component_);
  node.set(CubeReducerStats::rows_merged, rows_merged_);
}

}  // namespace ahbm
