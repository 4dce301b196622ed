#pragma once
// The built-in system-network topologies (docs/system.md, "Network models"): each a function
// that builds a SystemTopology (chips, switches, links, routing table) with deterministic
// minimal routing, and the parameter tables their models read (system.network.params).
#include <string>

#include "hw/common/config/param_table.h"
#include "hw/system/packet_network.h"

namespace ahbm {

// Every model: packets and links.
#define AHBM_PARAMS_SYSNET_LINK(X)                                                                               \
  X(int, packet_bytes, 4096, between(1, 1 << 30), "bytes",                                                       \
    "a message is split into packets of this size (the last one shorter); a packet is what a link carries whole", \
    "illustrative: 4 KiB, a page; small enough that packetisation costs little on an idle path")                \
  X(double, link_gbps, 64.0, between(0.001, 1e6).slower_when_smaller(), "GB/s",                                  \
    "bandwidth of every chip link, per direction (links are directed; a pair of chips has one each way)",         \
    "CXL 2.0 / PCIe 5.0 x16: 32 GT/s x 16 lanes = 64 GB/s in each direction (NVLink 4: 18 links x 25 GB/s = 450 GB/s per GPU)") \
  X(double, link_latency_ns, 100.0, between(0.0, 1e9).slower_when_larger(), "ns",                               \
    "a packet's head from one end of a link to the other (SerDes, wire, the forwarding chip's port)",            \
    "illustrative: order of a CXL/PCIe port-to-port hop (no public per-hop figure cited)")                      \
  X(double, energy_pj_per_byte, 40.0, between(0.0, 1e6), "pJ/B", "energy of one byte over one link",            \
    "5 pJ/bit, as energy.host_link_pj_per_bit (assumed: a long-reach SerDes)")

// Models with switches (switch, fat_tree).
#define AHBM_PARAMS_SYSNET_SWITCH(X)                                                                             \
  X(double, switch_latency_ns, 100.0, between(0.0, 1e9).slower_when_larger(), "ns",                             \
    "a packet's head through one switch, on top of the links' latency",                                          \
    "illustrative: order of a CXL switch's port-to-port latency (no public figure cited)")

// torus: the grid.
#define AHBM_PARAMS_SYSNET_TORUS(X)                                                                              \
  X(int, dim_x, 0, between(0, 4096), "chips",                                                                    \
    "chips along x; 0 = the most nearly square factorisation of system.chips (dim_x >= dim_y); dim_x x dim_y = system.chips", \
    "as square as the chip count allows: the shortest average distance")                                        \
  X(int, dim_y, 0, between(0, 4096), "chips", "chips along y; 0 = system.chips / dim_x", "as for dim_x")

// fat_tree: two levels of switches.
#define AHBM_PARAMS_SYSNET_FAT_TREE(X)                                                                           \
  X(int, radix, 4, between(1, 4096), "chips", "chips per leaf switch; must divide system.chips",                  \
    "illustrative: four chips per leaf, as a 4-GPU board")                                                      \
  X(double, uplink_gbps, 0.0, between(0.0, 1e6).slower_when_smaller(), "GB/s",                                   \
    "bandwidth of each leaf-spine link, per direction; 0 = radix x link_gbps (non-blocking)",                    \
    "non-blocking: the spine is no bottleneck unless set lower")

struct SysLinkParams {
  AHBM_PARAMS_SYSNET_LINK(AHBM_HW_MEMBER)
};
struct SysSwitchParams {
  AHBM_PARAMS_SYSNET_SWITCH(AHBM_HW_MEMBER)
};
struct SysTorusParams {
  AHBM_PARAMS_SYSNET_TORUS(AHBM_HW_MEMBER)
};
struct SysFatTreeParams {
  AHBM_PARAMS_SYSNET_FAT_TREE(AHBM_HW_MEMBER)
};

const ParamTable<SysLinkParams>& sysnet_link_table();
const ParamTable<SysSwitchParams>& sysnet_switch_table();
const ParamTable<SysTorusParams>& sysnet_torus_table();
const ParamTable<SysFatTreeParams>& sysnet_fat_tree_table();

// Bidirectional ring (chip i linked to i + 1 and i - 1; one link each way for 2 chips): the
// shorter direction, ties (the chip opposite, even counts) the increasing direction.
SystemTopology ring_topology(int chips, const SysLinkParams& p);
// 2D torus of x columns and y rows (chip i at (i mod x, i / x)), a ring in each dimension:
// dimension order (x first), each dimension the shorter way, ties the increasing direction.
SystemTopology torus_topology(int x, int y, const SysLinkParams& p);
// A direct link for every ordered pair of chips.
SystemTopology fully_connected_topology(int chips, const SysLinkParams& p);
// One switch (sw0), a link each way between it and every chip.
SystemTopology switch_topology(int chips, const SysLinkParams& p);
// Leaf switches (leaf0 ..) of `radix` chips each (chip i on leaf i / radix) and one spine, a
// link each way per leaf at `uplink_gbps`; chips on one leaf go through it alone. One leaf: no spine.
SystemTopology fat_tree_topology(int chips, int radix, double uplink_gbps, const SysLinkParams& p);

}  // namespace ahbm
