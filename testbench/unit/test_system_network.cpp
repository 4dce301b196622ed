// The chip-to-chip network (hw/system, docs/system.md): the packet-level engine's timing rules
// against their closed forms on idle paths, queueing at a shared link, multicast copies, the
// topologies' routes, the system block of the hardware config and its errors.
#include <gtest/gtest.h>

#include <functional>

#include "hw/common/base/error.h"
#include "hw/common/config/hw_config.h"
#include "hw/common/sim/sim_context.h"
#include "hw/system/system_network.h"
#include "test_support.h"

using namespace ahbm;

namespace {

constexpr double kTicks = 1000;  // picoseconds

SysLinkParams link(double gbps = 64, double latency_ns = 100) {
  SysLinkParams p;
  p.link_gbps = gbps;
  p.link_latency_ns = latency_ns;
  return p;
}

PacketNetworkParams packets(uint64_t packet_bytes = 4096, double switch_ns = 0) {
  PacketNetworkParams p;
  p.packet_bytes = packet_bytes;
  p.switch_latency_ns = switch_ns;
  p.energy_pj_per_byte = 40;
  return p;
}

// Sends `bytes` from `src` to `dsts` at time 0 on an idle network; the delivery times, ns.
std::vector<double> idle_times(const SystemTopology& t, const PacketNetworkParams& p, int src, std::vector<int> dsts,
                               uint64_t bytes) {
  PacketNetwork net(t, p, kTicks);
  net.send(1, src, dsts, bytes, 0);
  std::vector<double> out;
  for (const auto& d : net.advance(UINT64_MAX)) out.push_back(double(d.at) / kTicks);
  EXPECT_TRUE(net.idle());
  return out;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string error_of(const std::function<void()>& f) { return test::input_error_of(f); }

}  // namespace

// S bytes over h equal links: S/B + h x link latency + switches x switch latency, exactly.
TEST(PacketNetwork, IdlePathTakesSerialisationPlusLatencies) {
  const uint64_t S = 1 << 20;  // 256 packets
  const double B = 64, lat = 100, sw = 150;
  const SystemTopology ring = ring_topology(8, link(B, lat));
  EXPECT_EQ(idle_times(ring, packets(), 0, {3}, S), std::vector<double>{S / B + 3 * lat});
  EXPECT_EQ(idle_times(ring, packets(), 0, {4}, S), std::vector<double>{S / B + 4 * lat});  // the tie: either way 4 hops
  EXPECT_EQ(idle_times(ring, packets(), 0, {1}, 128), std::vector<double>{128 / B + lat});  // one short packet
  const SystemTopology star = switch_topology(8, link(B, lat));
  EXPECT_EQ(idle_times(star, packets(4096, sw), 2, {5}, S), std::vector<double>{S / B + 2 * lat + sw});
  // Fat tree across leaves, uplinks as fast as the chip links: 4 links, 3 switches.
  const SystemTopology tree = fat_tree_topology(8, 4, B, link(B, lat));
  EXPECT_EQ(idle_times(tree, packets(4096, sw), 0, {7}, S), std::vector<double>{S / B + 4 * lat + 3 * sw});
  // Packet size does not matter on equal links.
  EXPECT_EQ(idle_times(ring, packets(1000), 0, {3}, S), std::vector<double>{S / B + 3 * lat});
}

// Links of different speeds: the slowest sets the rate; the packets pipeline, so the time is
// within a packet time per link of S / B_min + alpha (docs/system.md). Here exactly: the last
// of k packets leaves the slow uplink (k - 1) P / B_up after the first, which crosses the path
// in alpha + P / B (the last, fast link finishes as the slow one before it does, then the tail
// flies one link latency).
TEST(PacketNetwork, SlowerUplinkSetsTheRate) {
  const uint64_t S = 1 << 20, P = 4096;
  const double B = 64, up = 16, lat = 100, sw = 150;
  const SystemTopology tree = fat_tree_topology(8, 4, up, link(B, lat));
  const double t = idle_times(tree, packets(P, sw), 0, {7}, S).at(0);
  const double alpha = 4 * lat + 3 * sw;
  EXPECT_EQ(t, double(S / P - 1) * P / up + alpha + P / B);
  EXPECT_GE(t, S / up + alpha - P / up);
  EXPECT_LE(t, S / up + alpha + 2 * P / B + 2 * P / up);
}

// Two messages into one chip through the switch share its downlink: the second waits for it.
TEST(PacketNetwork, ContentionQueuesAtTheSharedLink) {
  const uint64_t S = 1 << 20;
  const double B = 64, lat = 100;
  PacketNetwork net(switch_topology(4, link(B, lat)), packets(), kTicks);
  net.send(1, 0, {3}, S, 0);
  net.send(2, 1, {3}, S, 0);
  const auto d = net.advance(UINT64_MAX);
  ASSERT_EQ(d.size(), 2u);
  const double alone = S / B + 2 * lat;
  const double last = double(std::max(d[0].at, d[1].at)) / kTicks;
  EXPECT_GE(last, 2 * S / B);            // the downlink carried both
  EXPECT_LE(last, 2 * S / B + 2 * lat + 4096 / B);
  EXPECT_GT(last, 1.9 * alone - 2 * lat);
  // Statistics: the shared downlink carried 2 S, each uplink S.
  const SystemTopology& t = net.topology();
  for (size_t l = 0; l < t.links.size(); ++l) {
    const uint64_t expect = t.links[l].name == "sw0->chip3" ? 2 * S : (t.links[l].from == 0 || t.links[l].from == 1) ? S : 0;
    EXPECT_EQ(net.link_stats()[l].bytes, expect) << t.links[l].name;
    EXPECT_EQ(net.link_stats()[l].busy_ticks, uint64_t(double(expect) / B * kTicks)) << t.links[l].name;
  }
  EXPECT_DOUBLE_EQ(net.energy_pj(), 4.0 * S * 40);
}

// A multicast follows the union of its routes: each link carries the bytes once, and every
// destination gets them as a unicast would.
TEST(PacketNetwork, MulticastIsCopiedWhereRoutesSplit) {
  const uint64_t S = 64 << 10;
  const double B = 64, lat = 100;
  const SystemTopology ring = ring_topology(8, link(B, lat));
  PacketNetwork net(ring, packets(), kTicks);
  net.send(1, 0, {2, 3, 6}, S, 0);
  const auto d = net.advance(UINT64_MAX);
  ASSERT_EQ(d.size(), 3u);
  for (const auto& x : d) {
    const int hops = x.dst == 6 ? 2 : x.dst;
    EXPECT_EQ(double(x.at) / kTicks, S / B + hops * lat) << x.dst;
  }
  // Links 0->1->2->3 and 0->7->6: five links, S bytes each.
  EXPECT_EQ(net.link_traversals(), 5 * S / 4096);
}

TEST(SystemTopologies, RoutesAreMinimalAndTiesDocumented) {
  // Ring: the shorter way; the opposite chip (a tie) the increasing way.
  const SystemTopology ring = ring_topology(6, link());
  EXPECT_EQ(ring.path(0, 3).size(), 3u);
  EXPECT_EQ(ring.links[size_t(ring.path(0, 3)[0])].name, "chip0->chip1");
  EXPECT_EQ(ring.links[size_t(ring.path(0, 5)[0])].name, "chip0->chip5");
  EXPECT_EQ(ring_topology(2, link()).links.size(), 2u);  // one link each way
  // Torus 4 x 2: x first, then y; distances wrap.
  const SystemTopology torus = torus_topology(4, 2, link());
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b) {
      const int dx = std::abs(a % 4 - b % 4), dy = std::abs(a / 4 - b / 4);
      EXPECT_EQ(int(torus.path(a, b).size()), std::min(dx, 4 - dx) + dy) << a << "->" << b;
    }
  EXPECT_EQ(torus.links[size_t(torus.path(0, 5)[0])].name, "chip0->chip1");  // x before y
  const SystemTopology full = fully_connected_topology(5, link());
  EXPECT_EQ(full.links.size(), 20u);
  EXPECT_EQ(full.path(1, 4).size(), 1u);
  const SystemTopology tree = fat_tree_topology(8, 4, 0, link(64));
  EXPECT_EQ(tree.path(0, 3).size(), 2u);  // the same leaf
  EXPECT_EQ(tree.path(0, 4).size(), 4u);  // over the spine
  EXPECT_EQ(tree.links.back().gbps, 4 * 64.0);  // uplink_gbps 0: radix x link_gbps
  EXPECT_EQ(fat_tree_topology(4, 4, 0, link()).switch_names.size(), 1u);  // one leaf, no spine
}

TEST(SystemNetwork, RegistryListsTheBuiltInModelsAndRefusesUnknownOnes) {
  const NocRegistry r = system_network_registry();
  EXPECT_EQ(r.names(), (std::vector<std::string>{"switch", "ring", "torus", "fully_connected", "fat_tree"}));
  SystemNetworkSpec s;
  s.model = "tours";
  s.chips = 8;
  s.file = "hw.json";
  const std::string e = error_of([&] {
    SimContext context;
    SimContext::Scope use(context);
    make_system_network(r, s);
  });
  EXPECT_TRUE(has(e, "hw.json: system.network.model: unknown") && has(e, "\"tours\"") && has(e, "did you mean \"torus\"")) << e;
}

TEST(SystemNetwork, ParametersThatDoNotFitTheChipsAreRefusedWithTheNumbers) {
  HwConfig cfg;
  cfg.system.chips = 8;
  const NocRegistry r = system_network_registry();
  const auto check = [&](const std::string& model, const Json& params) {
    cfg.system.network.model = model;
    cfg.system.network.params = params;
    return error_of([&] { check_system_config(cfg, r, "hw.json"); });
  };
  EXPECT_EQ(check("torus", Json::object()), "");  // 4 x 2
  std::string e = check("torus", {{"dim_x", 3}, {"dim_y", 2}});
  EXPECT_TRUE(has(e, "hw.json: system.network.params.dim_x:") && has(e, "3 x 2 = 6") && has(e, "system.chips")) << e;
  e = check("torus", {{"dim_x", 3}});
  EXPECT_TRUE(has(e, "system.network.params.dim_x: 3 does not divide") && has(e, "1, 2, 4, 8")) << e;
  e = check("fat_tree", {{"radix", 3}});
  EXPECT_TRUE(has(e, "hw.json: system.network.params.radix: 3 does not divide the chip count 8") && has(e, "allowed: 1, 2, 4, 8"))
      << e;
  e = check("ring", {{"link_gbps", 0}});
  EXPECT_TRUE(has(e, "system.network.params.link_gbps") && has(e, "[0.001, 1e+06]")) << e;
  e = check("switch", {{"dim_x", 2}});
  EXPECT_TRUE(has(e, "system.network.params.dim_x: unknown key")) << e;
}

// No system block: the resolved config has none (a one-chip config echoes as before); a block
// that differs from the defaults is echoed whole, and read back to the same config.
TEST(SystemConfig, AbsentAtItsDefaultsAndEchoedWhenSet) {
  const HwConfig plain = parse_hw_config(Json::object(), "hw.json");
  EXPECT_FALSE(to_json(plain).contains("system"));
  const Json j = {{"system", {{"chips", 8}, {"network", {{"model", "ring"}, {"params", {{"link_gbps", 128}}}}}}}};
  const HwConfig c = parse_hw_config(j, "hw.json");
  EXPECT_EQ(c.system.chips, 8);
  EXPECT_EQ(c.system.network.model, "ring");
  const Json echo = to_json(c);
  ASSERT_TRUE(echo.contains("system"));
  EXPECT_EQ(echo["system"]["network"]["params"]["link_gbps"], 128);
  EXPECT_EQ(to_json(parse_hw_config(echo, "echo.json")), echo);
  const std::string e = error_of([] { parse_hw_config({{"system", {{"chips", 0}}}}, "hw.json"); });
  EXPECT_TRUE(has(e, "hw.json: system.chips") && has(e, "[1, 4096]")) << e;
}
