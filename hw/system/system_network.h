#pragma once
// The chip-to-chip (system) network: a Noc whose endpoints are the chips ("chip0" ..
// "chipN-1"), chosen by the hardware config's system.network.model from a registry of its own
// (an NocRegistry object, separate from the on-chip NoC's), with its parameters in
// system.network.params. The built-in models are packet-level (PacketNoc) on the topologies of
// topologies.h; a user's model is any Noc subclass added to the registry (docs/system.md).
#include <memory>
#include <string>
#include <vector>

#include "hw/common/config/hw_config.h"
#include "hw/system/packet_noc.h"
#include "hw/system/topologies.h"

namespace ahbm {

// One class per built-in model; each reads its parameter tables (topologies.h) and builds its
// topology for the context's endpoints.
class RingNetwork : public PacketNoc {
 public:
  RingNetwork(sc_core::sc_module_name name, const NocContext& ctx);
  static std::vector<HwParam> params();
};
class TorusNetwork : public PacketNoc {
 public:
  TorusNetwork(sc_core::sc_module_name name, const NocContext& ctx);
  static std::vector<HwParam> params();
};
class FullyConnectedNetwork : public PacketNoc {
 public:
  FullyConnectedNetwork(sc_core::sc_module_name name, const NocContext& ctx);
  static std::vector<HwParam> params();
};
class SwitchNetwork : public PacketNoc {
 public:
  SwitchNetwork(sc_core::sc_module_name name, const NocContext& ctx);
  static std::vector<HwParam> params();
};
class FatTreeNetwork : public PacketNoc {
 public:
  FatTreeNetwork(sc_core::sc_module_name name, const NocContext& ctx);
  static std::vector<HwParam> params();
};

// The one list of system networks shipped with ahbm-sim.
void register_builtin_system_networks(NocRegistry& registry);
// A registry holding the built-in system networks (a program may add its own before use).
NocRegistry system_network_registry();

// Endpoint names of a system of `chips` chips: "chip0" .. .
std::vector<std::string> system_endpoints(int chips);

// What a system network is built from: the model, its parameters, the chip count, and where
// they came from (for errors: "hw.json: system.network.params.radix: ...").
struct SystemNetworkSpec {
  std::string model = SystemNetworkConfig{}.model;
  Json params = Json::object();
  int chips = 1;
  std::string file = "hw config";
  std::string model_field = "system.network.model";
  std::string params_field = "system.network.params";
  static SystemNetworkSpec from_config(const HwConfig& cfg, const std::string& file);
};
// Builds the network (inside the current simulation context, at elaboration). Unknown models
// and bad parameters are InputErrors naming the field, the value and what is allowed.
std::unique_ptr<Noc> make_system_network(const NocRegistry& registry, const SystemNetworkSpec& spec,
                                         const char* name = "system_network");
// Builds the network of `cfg`'s system block once, in a simulation context of its own, to check
// it (what `ahbm-sim hw-config` does for a file with a system block).
void check_system_config(const HwConfig& cfg, const NocRegistry& registry, const std::string& file);

}  // namespace ahbm
