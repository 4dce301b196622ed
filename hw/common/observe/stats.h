#pragma once
// Typed statistics: a tree of named nodes holding typed counters, each with its own rule for
// folding in the same counter of a later step. Modules fill their node (StatsProvider) and
// their children's, so the tree follows the module hierarchy; the runtime merges the trees of
// successive steps (merge_stats) and reads figures through the same typed keys the modules
// wrote them with. The tree is turned into JSON once, by the report writer (runtime/report/
// stats_tree.h): nothing here knows JSON.
//
// A counter is declared once, as a key that carries its name, unit, description, value type
// and merge rule (gem5's ADD_STAT: the declaration documents the statistic, and stats.json
// carries that documentation as "counter_docs", runtime/report/stats_json.h):
//   inline constexpr stats::Sum<uint64_t> kMacs{"macs", "MAC", "multiply-accumulates"};
//   node.set(kMacs, macs_);                // the module
//   uint64_t m = node.get(kMacs);          // a reader: a wrong key or type does not compile
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace ahbm {

namespace stats {

// How a counter folds the same counter of a later step into itself.
enum class Merge {
  sum,        // counts, bytes, busy time: added
  max,        // high-water marks, worst latencies: the larger value stays
  time_mean,  // a mean over the step: weighted by the simulated time each side covers
  label,      // a constant that names the node (group index, link ends, topology): first value stays
};

// What a counter can hold. Integers stay integers in the JSON; lists of integers are labels
// (e.g. a mesh coordinate).
using Value = std::variant<uint64_t, int64_t, double, std::string, std::vector<int64_t>>;

// A typed key: name, unit, description, value type T (one of Value's) and merge rule M. The
// constructor takes all three strings, so a counter cannot be declared undocumented.
template <class T, Merge M>
struct Key {
  constexpr Key(const char* name_, const char* unit_, const char* description_)
      : name(name_), unit(unit_), description(description_) {}
  const char* name;
  const char* unit;         // "bytes", "ns", "flits", "count", ...; "" for a label without one
  const char* description;  // what it counts, in one phrase
};
template <class T>
using Sum = Key<T, Merge::sum>;
using BusyNs = Key<double, Merge::sum>;  // busy time of a resource, ns (summed over steps)
template <class T>
using Max = Key<T, Merge::max>;
using TimeMeanNs = Key<double, Merge::time_mean>;
template <class T>
using Label = Key<T, Merge::label>;

// Keeps T out of deduction where a value is passed next to its key (set(kMacs, int(3))).
template <class T>
struct Exactly {
  using type = T;
};

struct Counter {
  std::string name;
  Value value;
  Merge merge;
  const char* unit = "";         // the key's (string literals: they outlive every tree)
  const char* description = "";
};

// The name of a merge rule as stats.json's "counter_docs" shows it.
const char* merge_name(Merge m);

}  // namespace stats

// One node of the tree: counters in the order they were set, then child nodes. A list node
// holds elements (serialised as a JSON array, matched by name when steps merge). A node with
// an `inline_prefix` is serialised as counters of its parent named prefix + counter name.
class StatsNode {
 public:
  enum class Kind { object, list };
  explicit StatsNode(std::string name = "", Kind kind = Kind::object) : name_(std::move(name)), kind_(kind) {}

  const std::string& name() const { return name_; }
  bool is_list() const { return kind_ == Kind::list; }

  // Sets (or overwrites) the counter `key`.
  template <class T, stats::Merge M>
  void set(stats::Key<T, M> key, typename stats::Exactly<T>::type value) {
    for (stats::Counter& c : counters_)
      if (c.name == key.name) {
        c.value = std::move(value);
        c.merge = M;
        c.unit = key.unit;
        c.description = key.description;
        return;
      }
    counters_.push_back({key.name, std::move(value), M, key.unit, key.description});
  }
  // The counter `key`; throws std::logic_error when the node has none of that name and type.
  template <class T, stats::Merge M>
  const T& get(stats::Key<T, M> key) const {
    const stats::Counter* c = find_counter(key.name);
    const T* v = c ? std::get_if<T>(&c->value) : nullptr;
    if (!v) throw std::logic_error("statistics node \"" + name_ + "\" has no counter \"" + key.name + "\" of that type");
    return *v;
  }
  template <class T, stats::Merge M>
  bool has(stats::Key<T, M> key) const {
    const stats::Counter* c = find_counter(key.name);
    return c && std::holds_alternative<T>(c->value);
  }

  // The child object `name`, created on first use.
  StatsNode& child(const std::string& name) { return add_child(name, Kind::object); }
  // The child list `name`, created on first use; its elements are added with child().
  StatsNode& list(const std::string& name) { return add_child(name, Kind::list); }
  // The child `name`; throws std::logic_error when there is none.
  const StatsNode& at(const std::string& name) const;
  const StatsNode* find(const std::string& name) const;

  const std::vector<stats::Counter>& counters() const { return counters_; }
  const std::vector<StatsNode>& children() const { return children_; }

  // Serialise this child's counters into its parent's object as `prefix` + name (the CUBE's
  // Q buffer and reducer: "q_buffer_high_water_bytes").
  std::string inline_prefix;
  // The span-recorder component of the module this node reports, when its counters are also
  // listed per component (stats.json "components"); empty otherwise.
  std::string component;

 private:
  friend void merge_stats(StatsNode& acc, const StatsNode& step, double acc_ns, double step_ns);
  StatsNode& add_child(const std::string& name, Kind kind);
  const stats::Counter* find_counter(const std::string& name) const;

  std::string name_;
  Kind kind_;
  std::vector<stats::Counter> counters_;
  std::vector<StatsNode> children_;
};

// A module that reports statistics: fills `node` with its own counters and has its children
// fill theirs (child nodes it creates). Called after a run, on the elaborated module.
class StatsProvider {
 public:
  virtual ~StatsProvider() = default;
  virtual void report_stats(StatsNode& node) const = 0;
};

// Folds a later step's tree (`step`, lasting `step_ns`) into `acc` (covering `acc_ns` so far)
// by each counter's rule; counters and children only in `step` are copied, list elements are
// matched by name. Throws std::logic_error when a counter changes type or rule between steps.
void merge_stats(StatsNode& acc, const StatsNode& step, double acc_ns, double step_ns);

}  // namespace ahbm
