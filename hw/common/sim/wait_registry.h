#pragma once
// What each module of one simulation waits for, for the stall watchdog's report
// (hw/chip/watchdog.h, docs/reliability.md). Processes keep a WaitNote (two stores) before a
// wait that might never end; the registry turns the notes into a stall report only when the
// watchdog fires.
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ahbm {

// What one process is blocked on: a static description and the global tile it concerns.
struct WaitNote {
  const char* what = nullptr;  // nullptr: not blocked on anything outstanding
  int tile = -1;
  void set(const char* w, int t = -1) { what = w, tile = t; }
  void clear() { what = nullptr, tile = -1; }
  // "what (tile t)", or "" when clear.
  std::string str() const;
};

// "0-3, 7, 9-10": a sorted list of ids, runs collapsed (for tile and CUBE lists in reports).
std::string id_list(std::vector<int> ids);

class WaitRegistry {
 public:
  // `describe` returns "" when the module has nothing outstanding.
  void add(std::string module, std::function<std::string()> describe);
  // "module: description" for every module with something outstanding, in registration order;
  // modules with the same description share one line ("a, b, c: description").
  std::vector<std::string> report() const;

 private:
  std::vector<std::pair<std::string, std::function<std::string()>>> entries_;
};

}  // namespace ahbm
