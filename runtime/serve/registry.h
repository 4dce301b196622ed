#pragma once
// A registry of named serve policies (schedulers, admission rules, preemption rules, topologies):
// an object the caller owns and passes in (ServeOptions), no global table, like the NoC models.
// `Entry` has `name` and `description` strings and a `static constexpr const char* kKind` naming
// what it is in the errors ("scheduler", "admission rule", ...).
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "hw/common/base/error.h"
#include "hw/common/base/json_reader.h"

namespace ahbm::serve {

template <class Entry>
class Registry {
 public:
  // Names are unique; adding one twice is a programming error (std::logic_error).
  void add(Entry e) {
    for (const Entry& q : list_)
      if (q.name == e.name) throw std::logic_error(std::string(Entry::kKind) + " \"" + e.name + "\" registered twice");
    list_.push_back(std::move(e));
  }

  // Unknown name -> InputError naming `where` (file and field), the value and the known names.
  const Entry& get(const std::string& name, const std::string& where) const {
    for (const Entry& e : list_)
      if (e.name == name) return e;
    std::string known;
    for (const std::string& n : names()) known += (known.empty() ? "" : ", ") + n;
    const std::string near = closest_name(name, names());
    throw InputError(where + ": unknown " + Entry::kKind + " \"" + name + "\" (allowed: " + known + ")" +
                     (near.empty() ? "" : "; did you mean \"" + near + "\"?"));
  }

  std::vector<std::string> names() const {  // in registration order
    std::vector<std::string> out;
    for (const Entry& e : list_) out.push_back(e.name);
    return out;
  }

 private:
  std::vector<Entry> list_;
};

// An entry of a registry of policy objects (admission rules, preemption rules, topologies): the
// object is stateless, so every engine that uses it shares it. `Policy::kKind` names its kind.
template <class Policy>
struct PolicyEntry {
  std::string name, description;
  std::shared_ptr<const Policy> policy;
  static constexpr const char* kKind = Policy::kKind;
};

}  // namespace ahbm::serve
