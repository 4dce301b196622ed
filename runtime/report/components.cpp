#include "runtime/report/components.h"

namespace ahbm::report {

namespace {

using Kind = ComponentInfo::Kind;

// Rank of an item inside a CUBE: Q buffer first, each PE followed by its DMA, reducer last.
int cube_item_rank(const ComponentInfo& c) {
  switch (c.kind) {
    case Kind::q_buffer: return 0;
    case Kind::pe: return 1 + 2 * c.pe;
    case Kind::pe_dma: return 2 + 2 * c.pe;
    case Kind::reducer: return 1 << 20;
    default: return (1 << 20) + 1;
  }
}

Placement other(const std::string& name) { return {"other", "other", name, {4, 0, 0, 0, name}}; }

}  // namespace

Placement place(const std::string& name, const ComponentTable& components) {
  const auto* owner = owner_of(components, name);
  if (!owner) {
    // The power trace's signals (waves.h add_power_signals): after every other section.
    // The chip's power first, then the classes by name.
    if (name.rfind("chip.power", 0) == 0)
      return {"power", "chip power", name.substr(5), {5, 0, 0, name == "chip.power_w" ? 0 : 1, name.substr(5)}};
    if (name.rfind("agent.", 0) == 0) return {"agents", "agents", name.substr(6), {3, 0, 0, 0, name.substr(6)}};
    return other(name);
  }
  const ComponentInfo& c = owner->second;
  const std::string item = c.item + name.substr(owner->first.size());  // plus the signal leaf, if any
  const std::string group = "group" + std::to_string(c.group);
  switch (c.kind) {
    case Kind::q_source:
    case Kind::noc:
      return {"q_source+noc", "Q source + NoC", name, {0, 0, 0, c.kind == Kind::noc ? 1 : 0, name}};
    case Kind::host:
      return {"host", "host", name, {2, 0, 0, 0, name}};
    case Kind::q_buffer:
    case Kind::pe:
    case Kind::pe_dma:
    case Kind::reducer: {
      const std::string cube = "cube" + std::to_string(c.cube);
      return {group + "." + cube, group + " / " + cube, item, {1, c.group, c.cube, cube_item_rank(c), item}};
    }
    case Kind::link:
      return {group + ".links", group + " inter-CUBE links", item, {1, c.group, 1 << 20, 0, item}};
    case Kind::kv_mover:
      break;
  }
  return other(name);
}

}  // namespace ahbm::report
