// The built-in system networks and their registry. Adding a model: a class here (or anywhere:
// a user's own model needs no edit under hw/) and one line in register_builtin_system_networks.
#include "hw/system/system_network.h"

#include <cmath>

#include "hw/common/sim/sim_context.h"

namespace ahbm {

namespace {

// The links' and packets' parameters every model reads.
PacketNetworkParams read_link_params(JsonReader& r, SysLinkParams& link) {
  sysnet_link_table().read(link, r);
  PacketNetworkParams p;
  p.packet_bytes = uint64_t(link.packet_bytes);
  p.energy_pj_per_byte = link.energy_pj_per_byte;
  return p;
}

template <class... Rows>
std::vector<HwParam> concat(Rows... rows) {
  std::vector<HwParam> out;
  (out.insert(out.end(), rows.begin(), rows.end()), ...);
  return out;
}

std::string divisors_of(int n) {
  std::string s;
  for (int d = 1; d <= n; ++d)
    if (n % d == 0) s += (s.empty() ? "" : ", ") + std::to_string(d);
  return s;
}

std::string chip_count(int chips) { return "the chip count " + std::to_string(chips) + " (system.chips)"; }

}  // namespace

RingNetwork::RingNetwork(sc_core::sc_module_name name, const NocContext& ctx) : PacketNoc(name, ctx) {
  JsonReader r(ctx.params, ctx.config_file, ctx.params_field);
  SysLinkParams link;
  const PacketNetworkParams p = read_link_params(r, link);
  r.finish();
  build(ring_topology(endpoint_count(), link), p);
}
std::vector<HwParam> RingNetwork::params() { return sysnet_link_table().rows(); }

TorusNetwork::TorusNetwork(sc_core::sc_module_name name, const NocContext& ctx) : PacketNoc(name, ctx) {
  JsonReader r(ctx.params, ctx.config_file, ctx.params_field);
  SysLinkParams link;
  const PacketNetworkParams p = read_link_params(r, link);
  SysTorusParams t;
  sysnet_torus_table().read(t, r);
  r.finish();
  const int n = endpoint_count();
  int x = t.dim_x, y = t.dim_y;
  if (x == 0 && y == 0) {
    for (y = int(std::sqrt(double(n))); y > 1 && n % y != 0;) --y;  // the largest divisor <= sqrt(n)
    y = std::max(y, 1);
    x = n / y;
  } else if (y == 0) {
    if (n % x != 0) r.fail("dim_x", std::to_string(x) + " does not divide " + chip_count(n) + " (allowed: 0 or " + divisors_of(n) + ")");
    y = n / x;
  } else if (x == 0) {
    if (n % y != 0) r.fail("dim_y", std::to_string(y) + " does not divide " + chip_count(n) + " (allowed: 0 or " + divisors_of(n) + ")");
    x = n / y;
  }
  if (x * y != n)
    r.fail("dim_x", "dim_x x dim_y = " + std::to_string(x) + " x " + std::to_string(y) + " = " + std::to_string(x * y) +
                        " chips, not " + chip_count(n) + " (allowed: a product equal to it, or 0 to derive one)");
  build(torus_topology(x, y, link), p);
}
std::vector<HwParam> TorusNetwork::params() { return concat(sysnet_link_table().rows(), sysnet_torus_table().rows()); }

FullyConnectedNetwork::FullyConnectedNetwork(sc_core::sc_module_name name, const NocContext& ctx) : PacketNoc(name, ctx) {
  JsonReader r(ctx.params, ctx.config_file, ctx.params_field);
  SysLinkParams link;
  const PacketNetworkParams p = read_link_params(r, link);
  r.finish();
  build(fully_connected_topology(endpoint_count(), link), p);
}
std::vector<HwParam> FullyConnectedNetwork::params() { return sysnet_link_table().rows(); }

SwitchNetwork::SwitchNetwork(sc_core::sc_module_name name, const NocContext& ctx) : PacketNoc(name, ctx) {
  JsonReader r(ctx.params, ctx.config_file, ctx.params_field);
  SysLinkParams link;
  PacketNetworkParams p = read_link_params(r, link);
  SysSwitchParams sw;
  sysnet_switch_table().read(sw, r);
  r.finish();
  p.switch_latency_ns = sw.switch_latency_ns;
  build(switch_topology(endpoint_count(), link), p);
}
std::vector<HwParam> SwitchNetwork::params() { return concat(sysnet_link_table().rows(), sysnet_switch_table().rows()); }

FatTreeNetwork::FatTreeNetwork(sc_core::sc_module_name name, const NocContext& ctx) : PacketNoc(name, ctx) {
  JsonReader r(ctx.params, ctx.config_file, ctx.params_field);
  SysLinkParams link;
  PacketNetworkParams p = read_link_params(r, link);
  SysSwitchParams sw;
  sysnet_switch_table().read(sw, r);
  SysFatTreeParams ft;
  sysnet_fat_tree_table().read(ft, r);
  r.finish();
  const int n = endpoint_count();
  if (n % ft.radix != 0)
    r.fail("radix", std::to_string(ft.radix) + " does not divide " + chip_count(n) + " (allowed: " + divisors_of(n) + ")");
  p.switch_latency_ns = sw.switch_latency_ns;
  build(fat_tree_topology(n, ft.radix, ft.uplink_gbps, link), p);
}
std::vector<HwParam> FatTreeNetwork::params() {
  return concat(sysnet_link_table().rows(), sysnet_switch_table().rows(), sysnet_fat_tree_table().rows());
}

void register_builtin_system_networks(NocRegistry& r) {
  r.add(noc_model<SwitchNetwork>("switch", "one switch, a link each way per chip (a CXL switch, an NVSwitch): 2 links and a switch between any two chips"));
  r.add(noc_model<RingNetwork>("ring", "bidirectional ring of chips, shortest direction (ties: increasing), chips forward"));
  r.add(noc_model<TorusNetwork>("torus", "2D torus of chips (params.dim_x x dim_y), dimension order x then y, each the shorter way"));
  r.add(noc_model<FullyConnectedNetwork>("fully_connected", "a direct link for every ordered pair of chips"));
  r.add(noc_model<FatTreeNetwork>("fat_tree", "two switch levels: leaf switches of params.radix chips, one spine (params.uplink_gbps)"));
}

NocRegistry system_network_registry() {
  NocRegistry r("system network model");
  register_builtin_system_networks(r);
  return r;
}

std::vector<std::string> system_endpoints(int chips) {
  std::vector<std::string> e;
  for (int c = 0; c < chips; ++c) e.push_back("chip" + std::to_string(c));
  return e;
}

SystemNetworkSpec SystemNetworkSpec::from_config(const HwConfig& cfg, const std::string& file) {
  SystemNetworkSpec s;
  s.model = cfg.system.network.model;
  s.params = cfg.system.network.params;
  s.chips = cfg.system.chips;
  s.file = file;
  return s;
}

std::unique_ptr<Noc> make_system_network(const NocRegistry& registry, const SystemNetworkSpec& spec,
                                         const char* name) {
  NocContext ctx;
  ctx.params = spec.params;
  ctx.config_file = spec.file;
  ctx.params_field = spec.params_field;
  ctx.endpoints = system_endpoints(spec.chips);
  return registry.get(spec.model, spec.file, spec.model_field).make(name, ctx);
}

void check_system_config(const HwConfig& cfg, const NocRegistry& registry, const std::string& file) {
  SimContext context;
  SimContext::Scope use_context(context);
  with_internal_errors([&] { make_system_network(registry, SystemNetworkSpec::from_config(cfg, file)); });
}

}  // namespace ahbm
