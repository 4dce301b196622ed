#pragma once
// Serve's registries (schedulers, admission rules, preemption rules, topologies) are the shared
// Registry (hw/common/base/registry.h): objects the caller owns and passes in (ServeOptions).
#include <memory>
#include <string>

#include "hw/common/base/registry.h"

namespace ahbm::serve {

using ahbm::Registry;

// An entry of a registry of policy objects (admission rules, preemption rules, topologies): the
// object is stateless, so every engine that uses it shares it. `Policy::kKind` names its kind.
template <class Policy>
struct PolicyEntry {
  std::string name, description;
  std::shared_ptr<const Policy> policy;
  static constexpr const char* kKind = Policy::kKind;
};

}  // namespace ahbm::serve
