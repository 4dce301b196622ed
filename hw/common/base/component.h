#pragma once
// One name per module: its SystemC hierarchical name (chip.group0.cube1.pe3). The latency
// trace, waveforms, stall reports and statistics name a module by its path, the same name
// without the top-level module ("group0.cube1.pe3"), so outputs do not depend on what the top
// level is called.
#include <map>
#include <string>

#include <systemc>

namespace ahbm {

// What a component is and where it sits, declared by the module that owns the name, so the
// views that group components (trace.json processes, GTKWave sections: runtime/report) read
// structure instead of parsing paths.
struct ComponentInfo {
  enum class Kind { host, q_source, noc, q_buffer, pe, pe_dma, reducer, link, kv_mover };
  Kind kind = Kind::host;
  int group = -1, cube = -1, pe = -1;  // where it sits (-1: not inside one); pe: index in its CUBE
  std::string item;                    // its name inside its CUBE or group ("pe3.dma", "cube1_to_cube0")
};
// Declared components by path.
using ComponentTable = std::map<std::string, ComponentInfo>;

// The declared component a component or signal name belongs to: `name` itself, or the longest
// declared path P with `name` = P + "." + leaf ("group0.cube1.pe3.activity" -> the PE). Null
// when none.
inline const ComponentTable::value_type* owner_of(const ComponentTable& table, const std::string& name) {
  for (std::string p = name;;) {
    auto it = table.find(p);
    if (it != table.end()) return &*it;
    const size_t dot = p.rfind('.');
    if (dot == std::string::npos) return nullptr;
    p.resize(dot);
  }
}

// `o`'s hierarchical name without its top-level ancestor: "chip.group0.cube1.pe3" ->
// "group0.cube1.pe3", "chip.host" -> "host". A top-level object keeps its name.
inline std::string component_path(const sc_core::sc_object& o) {
  const std::string full = o.name();
  const size_t dot = full.find('.');
  return dot == std::string::npos ? full : full.substr(dot + 1);
}

}  // namespace ahbm
