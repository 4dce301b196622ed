#include "hw/common/sim/wait_registry.h"

#include <algorithm>

namespace ahbm {

std::string WaitNote::str() const {
  if (!what) return "";
  return tile >= 0 ? std::string(what) + " (tile " + std::to_string(tile) + ")" : std::string(what);
}

void WaitRegistry::add(std::string module, std::function<std::string()> describe) {
  entries_.emplace_back(std::move(module), std::move(describe));
}

std::string id_list(std::vector<int> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::string out;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    out += (out.empty() ? "" : ", ") + std::to_string(ids[i]) + (j > i ? "-" + std::to_string(ids[j]) : "");
    i = j + 1;
  }
  return out;
}

std::vector<std::string> WaitRegistry::report() const {
  // 32 PEs waiting for the same Q tile make one line, not 32.
  std::vector<std::pair<std::string, std::string>> lines;  // modules, description
  for (const auto& [module, describe] : entries_) {
    const std::string d = describe();
    if (d.empty()) continue;
    auto it = std::find_if(lines.begin(), lines.end(), [&](const auto& l) { return l.second == d; });
    if (it == lines.end()) lines.emplace_back(module, d);
    else it->first += ", " + module;
  }
  std::vector<std::string> out;
  for (const auto& [modules, d] : lines) out.push_back(modules + ": " + d);
  return out;
}

}  // namespace ahbm
