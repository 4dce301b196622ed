#pragma once
// A registry of named, swappable parts: the NoC models (hw/noc/noc.h), the join strategies
// (runtime/join/strategy.h), the serve schedulers, admission and preemption rules and topologies
// (runtime/serve/). An object its owner builds and passes in, never a global table, so runs with
// different registries can share a process. `Entry` has a `name` string and a
// `static constexpr const char* kKind` naming its kind in the errors ("NoC model", "scheduler").
#include <stdexcept>
#include <string>
#include <vector>

#include "hw/common/base/error.h"
#include "hw/common/base/json_reader.h"

namespace ahbm {

template <class Entry>
class Registry {
 public:
  // Names are unique; adding one twice is a programming error (std::logic_error).
  void add(Entry e) {
    if (find(e.name)) throw std::logic_error(std::string(Entry::kKind) + " \"" + e.name + "\" registered twice");
    list_.push_back(std::move(e));
  }
  // Adds `e`, or replaces the entry of its name in place (its position, so the order stays).
  void add_or_replace(Entry e) {
    for (Entry& q : list_)
      if (q.name == e.name) {
        q = std::move(e);
        return;
      }
    list_.push_back(std::move(e));
  }

  // The entry of that name, or nullptr.
  const Entry* find(const std::string& name) const {
    for (const Entry& e : list_)
      if (e.name == name) return &e;
    return nullptr;
  }
  // Unknown name -> InputError "WHERE: unknown KIND "name" (allowed: a, b); did you mean "a"?",
  // `where` (file and field) and its colon left out when empty; KIND is `kind`, or Entry::kKind.
  const Entry& get(const std::string& name, const std::string& where = "", const char* kind = nullptr) const {
    if (const Entry* e = find(name)) return *e;
    std::string known;
    for (const std::string& n : names()) known += (known.empty() ? "" : ", ") + n;
    const std::string near = closest_name(name, names());
    throw InputError((where.empty() ? "" : where + ": ") + "unknown " + (kind ? kind : Entry::kKind) + " \"" + name +
                     "\" (allowed: " + known + ")" + (near.empty() ? "" : "; did you mean \"" + near + "\"?"));
  }

  std::vector<std::string> names() const {  // in registration order
    std::vector<std::string> out;
    for (const Entry& e : list_) out.push_back(e.name);
    return out;
  }
  const std::vector<Entry>& entries() const { return list_; }

 private:
  std::vector<Entry> list_;
};

}  // namespace ahbm
