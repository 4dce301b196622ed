#include "hw/cube/cube_reducer.h"

#include "hw/common/base/component.h"
#include "hw/common/model/resource_times.h"
#include "hw/common/model/engines.h"

namespace ahbm {

CubeReducer::CubeReducer(sc_core::sc_module_name name, SimShared& sh, int cube, int pes)
    : sc_core::sc_module(name),
      state_out("state_out"),
      sh_(sh),
      cube_(cube),
      pes_(pes),
      component_(sh.spans.intern(component_path(*this))),
      order_(sh.cfg.cube.reducer.order),
      units_(sh.cfg.cube.reducer.units) {
  const std::string path = component_path(*this);
  sig_rows_merged_ = sh.trace.add_signal(path + ".rows_merged", 32);
  sig_busy_ = sh.trace.add_signal(path + ".busy", 1);
  sh.waits.add(path, [this] { return describe_wait(); });
  SC_HAS_PROCESS(CubeReducer);
  SC_THREAD(merge_loop);
}

void CubeReducer::begin_run() {
  bus_.reset();
  units_.reset();
  events_.clear();
  pending_.clear();
  merging_ = 0;
  rows_merged_ = 0;
  vector_ops_ = state_bytes_ = 0;
  dropped_ = 0;
}

void CubeReducer::send_state(int local_pe, int tile, StatePtr state, int pe_component) {
  const TileRef& t = sh_.tiles[size_t(tile)];
  const uint64_t bytes = AttnState::wire_bytes(t.rows(), sh_.jobs[size_t(t.job)].head_dim);
  auto [start, end] = bus_.reserve(reducer_bus(TimeUnits<sc_time>(sh_.clock), sh_.cfg.cube.reducer, bytes));
  sc_core::wait(end - sc_core::sc_time_stamp());
  sh_.span(start, end, pe_component, "send_state", t, t.rows(), int64_t(bytes));
  state_bytes_ += bytes;
  events_.push({Event::Kind::arrival, local_pe, tile, std::move(state), sc_core::SC_ZERO_TIME, {}});
}

sc_core::sc_time CubeReducer::book_merge(int tile, const sc_core::sc_time& ready, Schedule::Node node) {
  const TileRef& t = sh_.tiles[size_t(tile)];
  const auto& red = sh_.cfg.cube.reducer;
  const sc_core::sc_time duration = sh_.cycles(merge_cycles(red.lanes, sh_.cfg.pe.vector.ops_per_merge,
                                                            uint64_t(t.rows()), uint64_t(sh_.jobs[size_t(t.job)].head_dim)));
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  auto [start, end] = units_.reserve_from(ready, duration);
  if (order_ == MergeOrder::tree) {  // the loop goes on taking states; the merge reports back
    events_.push({Event::Kind::merge_start, -1, tile, nullptr, start, node}, start - now);
    events_.push({Event::Kind::merge_end, -1, tile, nullptr, start, node}, end - now);
    return end;
  }
  // Serial: each merge needs the running state, so the reducer takes the next arrival only once
  // this merge is done (one merge at a time; a second unit serves shared inter-CUBE merges).
  if (start > now) sc_core::wait(start - now);
  sh_.trace.set(sig_busy_, ++merging_ > 0);
  sc_core::wait(end - start);
  sh_.trace.set(sig_busy_, --merging_ > 0);
  merged(tile, start);
  return end;
}

void CubeReducer::merged(int tile, const sc_core::sc_time& start) {
  const TileRef& t = sh_.tiles[size_t(tile)];
  sh_.span(start, sc_core::sc_time_stamp(), component_, "merge", t, t.rows(),
           int64_t(AttnState::wire_bytes(t.rows(), sh_.jobs[size_t(t.job)].head_dim)));
  rows_merged_ += uint64_t(t.rows());
  vector_ops_ += merge_ops(sh_.cfg.pe.vector.ops_per_merge, uint64_t(t.rows()), uint64_t(sh_.jobs[size_t(t.job)].head_dim));
  sh_.trace.set(sig_rows_merged_, rows_merged_);
}

void CubeReducer::merge_loop() {
  for (;;) {
    Event e = events_.pop();
    const TileRef& t = sh_.tiles[size_t(e.tile)];
    auto book = [&](const sc_core::sc_time& ready, Schedule::Node node) { return book_merge(e.tile, ready, node); };
    // A tile is complete when its last merge has ended: now (a serial merge has been waited for).
    switch (e.kind) {
      case Event::Kind::arrival: {
        const QTile& q = sh_.jobs[size_t(t.job)].tiles[size_t(t.index)];
        auto it = pending_.find(e.tile);
        if (it == pending_.end())
          it = pending_.emplace(e.tile, Pending{Schedule(tile_pes_in_cube(q, cube_, pes_), order_),
                                                std::vector<StatePtr>(size_t(pes_)), 0})
                   .first;
        Pending& p = it->second;
        p.slots[size_t(e.pe)] = std::move(e.state);
        ++p.arrived;
        if (p.schedule.arrive(tile_pe_rank_in_cube(q, cube_ * pes_ + e.pe, pes_), sc_core::sc_time_stamp(), book))
          finish_tile(e.tile);
        break;
      }
      case Event::Kind::merge_start:
        sh_.trace.set(sig_busy_, ++merging_ > 0);
        break;
      case Event::Kind::merge_end:  // a tree node: its parent may now be merged
        sh_.trace.set(sig_busy_, --merging_ > 0);
        merged(e.tile, e.start);
        if (pending_.at(e.tile).schedule.merged(e.node, sc_core::sc_time_stamp(), book)) finish_tile(e.tile);
        break;
    }
  }
}

void CubeReducer::finish_tile(int tile) {
  auto it = pending_.find(tile);
  std::vector<AttnState> states;  // values: the participating PEs in PE order, in the order's shape
  for (const StatePtr& s : it->second.slots)
    if (s) states.push_back(*s);
  pending_.erase(it);
  StatePtr cube_state;
  if (!states.empty()) {
    cube_state = std::make_shared<AttnState>(Schedule::fold(
        std::move(states), order_, [](AttnState& into, const AttnState& from) { merge_into(into, from); }));
    sh_.guard.check(*cube_state, component_, tile);
  }
  if (sh_.cfg.fault.drop_state_cube == cube_) {  // FAULT INJECTION (tests): the state never leaves
    ++dropped_;
    return;
  }
  state_out->send_state(cube_, tile, std::move(cube_state), component_);
}

std::string CubeReducer::describe_wait() const {
  std::string out;
  for (const auto& [tile, p] : pending_)
    out += (out.empty() ? "" : "; ") + std::string("tile ") + std::to_string(tile) + " has states from " +
           std::to_string(p.arrived) + " of " + std::to_string(pes_) + " PEs";
  if (dropped_)
    out += (out.empty() ? "" : "; ") + std::to_string(dropped_) +
           " merged states withheld from the inter-CUBE reduction [fault injection]";
  return out;
}

void CubeReducer::report_stats(StatsNode& node) const {
  node.component = sh_.spans.name(component_);
  node.set(CubeReducerStats::rows_merged, rows_merged_);
  node.set(CubeReducerStats::vector_ops, vector_ops_);
  node.set(CubeReducerStats::state_bytes, state_bytes_);
}

}  // namespace ahbm
