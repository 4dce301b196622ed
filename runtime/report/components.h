#pragma once
// Where a component (span recorder name, e.g. "group0.cube1.pe3.dma") or a waveform signal
// (trace sink name, e.g. "group0.cube1.pe3.activity") belongs in the views a user opens:
// the GTKWave save file and the Perfetto trace list the same sections in the same order.
//   Q source and NoC; per CUBE: Q buffer, PE0..PE7 (each followed by its DMA), reducer;
//   the group's inter-CUBE links; host; agents; (other); chip power (waveforms only).
// Hardware names are looked up in the component table the modules declare (hw/common/
// component.h, carried by the SpanRecorder); the runtime's own annotations are "agent.<name>"
// (agents) and anything else undeclared ("runtime.*", "group0.kv_mover"): "other".
#include <string>
#include <tuple>

#include "hw/common/base/component.h"

namespace ahbm::report {

struct Placement {
  std::string section;  // "q_source+noc", "group0.cube1", "group0.links", "host", "agents", "other"
  std::string label;    // shown for the section: "Q source + NoC", "group0 / cube1", "group0 inter-CUBE links"
  std::string item;     // the name inside the section ("pe3.dma", "q_buffer", "cube1_to_cube0", "agent2")
  // Sort key: section rank, group, cube, item rank, then the name itself.
  std::tuple<int, int, int, int, std::string> key;
};

// `name` may carry a trailing signal leaf ("group0.cube1.pe3.activity"): the leaf becomes part
// of `item` and of the final sort string, so signals of one component stay together.
Placement place(const std::string& name, const ComponentTable& components);

}  // namespace ahbm::report
