#pragma once
// Serve's step cache (docs/serving.md "The step cache"): a step's cost under its exact key (every
// byte its timing depends on: engine.cpp step_key), so a hit is the direct simulation's answer.
// A key holds every KV token's (owner, position) of every job, megabytes for long prompts, and
// under load nearly every step differs; kept without bound, the keys of a 1,000-workflow serve
// grew past 5 GB in minutes. So the keys' bytes are bounded: when a new entry would pass the
// bound, the oldest entries leave first (first in, first out). The entries that repeat (one
// workflow at a time on the same pages, a template's identical rounds) are the recent ones.
#include <cstddef>
#include <deque>
#include <string>
#include <unordered_map>
#include <utility>

namespace ahbm::serve {

template <class Value>
class StepCache {
 public:
  // Holds keys of at most `max_key_bytes` bytes in total (their allocations); a key longer than
  // that is not kept.
  explicit StepCache(size_t max_key_bytes) : max_(max_key_bytes) {}

  // The value cached under exactly `key`, or null.
  const Value* find(const std::string& key) const {
    const auto it = map_.find(key);
    return it == map_.end() ? nullptr : &it->second;
  }

  // Keeps `value` under `key` (a key already present keeps its value), first evicting the
  // oldest entries until the keys fit the bound.
  void insert(std::string key, Value value) {
    if (key.size() > max_ || map_.count(key)) return;
    // A key built by appending holds up to twice its size (the string's growth): kept as it is,
    // the bound on sizes let the cache of a 1,000-workflow serve take ~1.1 GB for 256 MiB of
    // keys. Each key is kept at its size, and the bound counts what it holds.
    key.shrink_to_fit();
    while (bytes_ + key.capacity() > max_) {
      const std::string& oldest = *order_.front();
      bytes_ -= oldest.capacity();
      map_.erase(oldest);  // `oldest` refers into the node erased here: not used after
      order_.pop_front();
      ++evicted_;
    }
    bytes_ += key.capacity();
    // Element references of an unordered_map stay valid across rehashing, so the queue can
    // point at the map's own copy of the key.
    const auto it = map_.emplace(std::move(key), std::move(value)).first;
    order_.push_back(&it->first);
  }

  size_t entries() const { return map_.size(); }
  size_t key_bytes() const { return bytes_; }
  size_t evicted() const { return evicted_; }

 private:
  size_t max_;
  size_t bytes_ = 0, evicted_ = 0;
  std::unordered_map<std::string, Value> map_;
  std::deque<const std::string*> order_;  // oldest first
};

}  // namespace ahbm::serve
