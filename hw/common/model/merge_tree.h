#pragma once
// The merges of one tile's PE states inside a CUBE (cube.reducer.order), in one place for the
// reducer that simulates them (hw/cube/cube_reducer.cpp, simulated time) and the cost model that
// estimates them (runtime/policy/cost_model.cpp, ns):
//   serial: the first state to arrive starts the running state; every later arrival queues for
//           a merge unit as it arrives and is merged into the running state once that is ready
//           (states − 1 merges one after the other).
//   tree:   the states, in PE order, are the leaves of a binary tree: pairs (0,1), (2,3), ...,
//           then pairs of those results, an odd last one passing up unmerged; a pair queues for
//           a merge unit as soon as both halves are present (⌈log2 states⌉ levels).
// Values follow the same shape by PE index (fold), never the arrival order, so timing never
// changes the numbers; the order does (float rounding), within the tolerance of the float64
// check. Each merge is booked on the caller's merge units (a ServerPool, or the cost model's
// free times, first come first served): MergeSchedule only says which merge may start when.
#include <algorithm>
#include <functional>
#include <optional>
#include <queue>
#include <tuple>
#include <utility>
#include <vector>

#include "hw/common/model/engines.h"

namespace ahbm {

template <class Time>
class MergeSchedule {
 public:
  // A node of the tree: level 0 are the states, the last level the result. Serial merges have
  // no node (level -1): nothing waits for their end but the result.
  struct Node {
    int level = -1, index = 0;
  };

  MergeSchedule(int states, MergeOrder order) : order_(order), states_(states) {
    if (order_ == MergeOrder::tree)
      for (int n = std::max(states, 1);; n = (n + 1) / 2) {
        levels_.emplace_back(size_t(n));
        if (n == 1) break;
      }
  }
  // State number `pos` (its rank among the tile's participating PEs of this CUBE, PE order) is
  // present at `at` (now). A merge it makes possible is booked with `book(ready, node)`, which
  // returns when the merge ends; for a tree node the caller reports that end with merged().
  // True once the tile's merged state is complete: done_at() then says when.
  template <class Book>
  bool arrive(int pos, const Time& at, Book&& book) {
    ++arrived_;
    if (order_ == MergeOrder::serial) {
      acc_ = arrived_ == 1 ? at : book(std::max(acc_, at), Node{});
      return arrived_ == states_;
    }
    return present(Node{0, pos}, at, book);
  }
  // The merge booked for tree node `node` has ended at `at` (now).
  template <class Book>
  bool merged(Node node, const Time& at, Book&& book) {
    return present(node, at, book);
  }
  const Time& done_at() const { return acc_; }

  // The values: `states` (PE order) merged in `order`'s shape with `merge(into, from)`.
  template <class T, class Merge>
  static T fold(std::vector<T> states, MergeOrder order, Merge&& merge) {
    if (order == MergeOrder::serial) {
      for (size_t i = 1; i < states.size(); ++i) merge(states[0], states[i]);
    } else {
      for (size_t n = states.size(); n > 1; n = (n + 1) / 2)
        for (size_t i = 0; i < n; i += 2) {
          if (i + 1 < n) merge(states[i], states[i + 1]);
          if (i > 0) states[i / 2] = std::move(states[i]);
        }
    }
    return std::move(states.at(0));
  }

  // The whole schedule of one tile in closed form (the cost model): the states arrive as
  // (rank, time) in `arrivals` (in the order they come); merges are booked with
  // book(ready) -> end in time order, as the reducer's events would book them. Returns when the
  // tile's merged state is complete.
  template <class Book>
  static Time run(int states, MergeOrder order, const std::vector<std::pair<int, Time>>& arrivals, Book&& book) {
    MergeSchedule s(states, order);
    // (time, sequence, node; level -2 = an arrival whose rank is `index`)
    using Event = std::tuple<Time, int, int, int>;
    std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
    int seq = 0;
    for (const auto& [rank, at] : arrivals) events.emplace(at, seq++, -2, rank);
    auto booker = [&](const Time& ready, Node node) {
      const Time end = book(ready);
      if (node.level >= 0) events.emplace(end, seq++, node.level, node.index);
      return end;
    };
    while (!events.empty()) {
      const Event e = events.top();
      events.pop();
      const Time& at = std::get<0>(e);
      const int level = std::get<2>(e), index = std::get<3>(e);
      if (level == -2 ? s.arrive(index, at, booker) : s.merged(Node{level, index}, at, booker)) return s.done_at();
    }
    return s.done_at();
  }

 private:
  // `node` is present at `at`: it passes up alone (no sibling), books the merge with its
  // sibling if that is present, or waits for it.
  template <class Book>
  bool present(Node node, const Time& at, Book& book) {
    for (;;) {
      std::vector<std::optional<Time>>& nodes = levels_[size_t(node.level)];
      nodes[size_t(node.index)] = at;
      if (nodes.size() == 1) {
        acc_ = at;
        return true;
      }
      const size_t sibling = size_t(node.index) ^ 1;
      const Node parent{node.level + 1, node.index / 2};
      if (sibling < nodes.size()) {
        if (nodes[sibling]) book(at, parent);
        return false;
      }
      node = parent;  // an odd last node: present one level up at once
    }
  }

  MergeOrder order_;
  int states_;
  int arrived_ = 0;
  Time acc_{};                                             // serial: when the running state is ready; then the result
  std::vector<std::vector<std::optional<Time>>> levels_;  // tree: per level, when each node was present
};

}  // namespace ahbm
