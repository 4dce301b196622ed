#pragma once
// Hardware configuration: plain structs, parsed once from JSON and validated with messages that
// name the field, the value and the allowed range.
//
// THE PARAMETER TABLE. Every hardware parameter is declared once below, as one line
//   X(C++ type, key, default, allowed values, unit, meaning, why this default)
// in the list of the JSON object it belongs to. That line declares the struct member and drives
// the parser, to_json, hw/configs/default.json, the table in docs/model.md, the JSON Schema
// docs/schema/hw_config.schema.json and the fuzz dictionary (tools/gen-hw-config.sh writes the
// checked-in ones; tests fail when they differ). Which struct sits at which JSON path is in
// hw_config.cpp (sections()); relations between fields are checked in config_checks.cpp.
#include <cstdint>
#include <string>
#include <vector>

#include "hw/common/config/choice.h"
#include "hw/common/config/fault_injection.h"
#include "hw/common/config/hw_config_param.h"
#include "hw/common/base/json_reader.h"

namespace ahbm {

constexpr int64_t kMaxConfigCycles = int64_t(1) << 20;  // bound of any cycle-count parameter
constexpr int64_t kMaxConfigBytes = int64_t(1) << 50;   // bound of any capacity (1 PiB)
// Bytes of one HBM3-6400 pseudo-channel (2 SIDs x 16 banks x 16384 rows x 1 KiB; hw/hbm/dram_spec.cpp
// asserts it equals the preset's organisation): a banked slice holds pseudo_channels of them.
constexpr uint64_t kHbm3PseudoChannelBytes = uint64_t(512) << 20;
// Peak data rate of one HBM3-6400 pseudo-channel, GB/s (32 B every 2 tCK of 0.625 ns; dram_spec.cpp
// asserts it is the preset's): a banked slice streams at most pseudo_channels of them.
constexpr double kHbm3PseudoChannelGbps = 25.6;

// The choices of the table below: each a C++ enum whose names are the parameter's allowed values
// (choice.h), so code compares enumerators and the docs and schema list exactly these names.
#define AHBM_NARROW_M(V) V(pad, "pad") V(gemv, "gemv")
AHBM_CHOICE(NarrowM, AHBM_NARROW_M)
#define AHBM_HBM_MODELS(V) V(simple, "simple") V(banked, "banked")
AHBM_CHOICE(HbmModel, AHBM_HBM_MODELS)
#define AHBM_HBM_MAPPINGS(V) V(bg_interleaved, "bg_interleaved") V(row_interleaved, "row_interleaved") V(bank_above_row, "bank_above_row")
AHBM_CHOICE(HbmMapping, AHBM_HBM_MAPPINGS)
#define AHBM_HBM_REFRESHES(V) V(all, "all") V(per_bank, "per-bank") V(off, "off")
AHBM_CHOICE(HbmRefresh, AHBM_HBM_REFRESHES)
#define AHBM_HBM_PAGE_POLICIES(V) V(open, "open") V(closed, "closed")
AHBM_CHOICE(HbmPagePolicy, AHBM_HBM_PAGE_POLICIES)
#define AHBM_MASKED_TILE_POLICIES(V) V(skip, "skip") V(compute, "compute")
AHBM_CHOICE(MaskedTilePolicy, AHBM_MASKED_TILE_POLICIES)
#define AHBM_KV_WRITE_POLICIES(V) V(timed, "timed") V(free, "free")
AHBM_CHOICE(KvWritePolicy, AHBM_KV_WRITE_POLICIES)
#define AHBM_PE_OVERLAPS(V) V(none, "none") V(ping_pong, "ping_pong")
AHBM_CHOICE(PeOverlap, AHBM_PE_OVERLAPS)
// How a CUBE's reducer merges the states of one tile (hw/common/model/merge_tree.h).
#define AHBM_MERGE_ORDERS(V) V(serial, "serial") V(tree, "tree")
AHBM_CHOICE(MergeOrder, AHBM_MERGE_ORDERS)
#define AHBM_INTER_CUBE_MERGES(V) V(own_unit, "own_unit") V(shared, "shared")
AHBM_CHOICE(InterCubeMerge, AHBM_INTER_CUBE_MERGES)
#define AHBM_REDUCTION_TOPOLOGIES(V) V(chain, "chain") V(ring, "ring") V(tree, "tree")
AHBM_CHOICE(ReductionTopology, AHBM_REDUCTION_TOPOLOGIES)
#define AHBM_Q_TILE_SEARCHES(V) V(cost_model, "cost_model") V(largest, "largest")
AHBM_CHOICE(QTileSearch, AHBM_Q_TILE_SEARCHES)

// pe.gemm: the GEMM engine; an (m x k)(k x n) product runs as tile_m x tile_n x tile_k tiles.
#define AHBM_PARAMS_PE_GEMM(X)                                                                                   \
  X(int, tile_m, 16, between(1, 1024).slower_when_smaller(), "elements", "rows of Q per engine tile",                \
    "the note's 16×16×16 tile (8×64×8 also supported)")                                                         \
  X(int, tile_n, 16, between(1, 1024).slower_when_smaller(), "elements", "output columns per engine tile",           \
    "the note's 16×16×16 tile (8×64×8 also supported)")                                                         \
  X(int, tile_k, 16, between(1, 1024).slower_when_smaller(), "elements", "reduction depth per engine tile",          \
    "the note's 16×16×16 tile (8×64×8 also supported)")                                                         \
  X(int, issue_interval, 16, between(1, kMaxConfigCycles).slower_when_larger(), "cycles", "cycles between two tile issues (throughput)", \
    "a 16×16 MAC array streaming k = 16: 256 MAC/cycle, 0.5 TFLOPS fp32 per PE at 1 GHz, 16 TFLOPS per 32-PE group") \
  X(int, pipeline_latency, 32, between(0, kMaxConfigCycles).slower_when_larger(), "cycles",                          \
    "cycles from the last tile issue until its result is written back", "fill plus drain of a 16-deep array") \
  X(int, mac_multiple_16bit, 1, between(1, 16), "× fp32",                                                      \
    "MAC rate with fp16/bf16 storage as a multiple of the fp32 rate: a 16-bit tile issues every ⌈issue_interval / mac_multiple_16bit⌉ cycles", \
    "1 = fp32 timing for every storage type; THInfer: FP16 runs at about twice FP32 (set 2)")                       \
  X(NarrowM, narrow_m, NarrowM::pad, one_of_names(), "name",                                               \
    "a product of fewer than tile_m rows: `pad` = padded to tile_m-row engine tiles; `gemv` = row by row on the narrow path (gemv_macs_per_cycle), when that takes fewer cycles", \
    "pad: the AHBM note's engine tiles; set gemv for a GEMV unit as in AttAcc/HBM-PIM, with which a 1-row decode step is HBM-bound (docs/model.md, Decode calibration)")       \
  X(int, gemv_macs_per_cycle, 256, between(1, 1 << 16), "MAC/cycle",                                             \
    "fp32 MACs per cycle of the narrow path (fp16/bf16: × mac_multiple_16bit): each row takes ⌈n·k / rate⌉ cycles, plus pipeline_latency", \
    "the array's 16×16 = 256 MACs, each fed its own K/V element (1 KiB/cycle from the SRAM slot); above the slice's 307.2 B/cycle, as AttAcc sizes its GEMV units to the internal HBM bandwidth")

// pe.vector: the vector unit (online softmax, state rescaling).
#define AHBM_PARAMS_PE_VECTOR(X)                                                                                 \
  X(int, lanes, 32, between(1, 4096).slower_when_smaller(), "fp32/cycle", "vector unit width",                       \
    "a 1 KiB-wide SIMD unit, half the GEMM array's row bandwidth")                                               \
  X(int, ops_per_score, 5, between(1, 64).slower_when_larger(), "passes", "passes over each score", "scale, mask, row max, exp, row sum") \
  X(int, ops_per_merge, 4, between(1, 64).slower_when_larger(), "passes", "passes over each (o, l) element in one state merge/rescale", \
    "two exps' scaling, multiply, add")

// pe.hbm: the PE's HBM slice.
#define AHBM_PARAMS_PE_HBM(X)                                                                                    \
  X(double, bandwidth_gbps, 307.2, between(0.001, 1e6).slower_when_smaller().clock_scaled(), "GB/s", "HBM slice → SRAM bandwidth", \
    "HBM3 stack 819.2 GB/s (JESD238) × 3 (AttAcc bank-group-level internal bandwidth under a power limit, src/config.py BW_SCALE) ÷ 8 PEs; AttAcc applies ×3 to its 670.4 GB/s stack and its own timing realises ×2.67, ×2.43 with refresh (docs/validation.md)") \
  X(double, latency_ns, 30.0, between(0.0, 1e6).slower_when_larger(), "ns", "first-byte latency of a DMA burst",     \
    "AttAcc HBM3 preset: nRCD 19 + nCL 19 tCK × 0.769 ns ≈ 29 ns")                                               \
  X(uint64_t, capacity_bytes, 2ull << 30, between(1024, kMaxConfigBytes), "bytes", "HBM owned by one PE",         \
    "16 GiB per stack (AttAcc) ÷ 8 PEs")                                                                         \
  X(HbmModel, model, HbmModel::simple, one_of_names(), "name",                                          \
    "slice timing: `simple` = latency_ns + bytes / (bandwidth_gbps × efficiency); `banked` = bank-level HBM3 pseudo-channels (docs/hbm.md)", \
    "the closed form is fast; `banked` is what a DRAM engineer would check it against")                         \
  X(double, efficiency, 1.0, between(0.01, 1.0).slower_when_smaller(), "× peak",                                     \
    "`simple` only: share of bandwidth_gbps a burst achieves",                                                   \
    "1 = peak (the reference point); docs/hbm.md calibrates it against `banked` (0.90 for KV streaming)")       \
  X(int, pseudo_channels, 12, between(1, 64), "count",                                                           \
    "`banked` only: HBM3-6400 pseudo-channels (25.6 GB/s each) a PE's slice interleaves its bursts over",        \
    "the ×3 internal factor made structural: 307.2 GB/s ÷ 25.6 GB/s = 12 (a PE owns 4 of its stack's 32, each 3 bank-group accesses wide); AttAcc's timing realises ×2.67 (docs/validation.md)") \
  X(HbmMapping, mapping, HbmMapping::bg_interleaved, one_of_names(), "name", \
    "`banked` only: address mapping preset of each pseudo-channel (docs/hbm.md)",                               \
    "consecutive bursts rotate over bank groups, as HBM3 controllers interleave")                               \
  X(HbmRefresh, refresh, HbmRefresh::all, one_of_names(), "name",                                     \
    "`banked` only: refresh policy (all-bank REFab every tREFI, per-bank REFpb, or none)",                       \
    "all-bank refresh: JEDEC's baseline, 9% of the time (tRFCab / tREFI)")                                       \
  X(HbmPagePolicy, page_policy, HbmPagePolicy::open, one_of_names(), "name",                                        \
    "`banked` only: keep a row open after its accesses, or close it when no queued request hits it",            \
    "open page suits the PEs' streaming KV reads")

// pe.dma: the PE's DMA from its HBM slice into SRAM.
#define AHBM_PARAMS_PE_DMA(X)                                                                                    \
  X(int, kv_tile_tokens, 64, between(1, 1 << 16), "tokens",                                                      \
    "KV tokens (K and V rows) per DMA tile; a multiple of `pe.gemm.tile_n` and `pe.gemm.tile_k` (whole engine tiles in both GEMMs)", \
    "4 tiles per 256-token shard: enough to overlap, large bursts")                                              \
  X(int, buffers, 2, between(1, 8), "slots", "SRAM KV tile slots: 2 = double buffering, 3 = triple",             \
    "double buffering (3 = THInfer's triple buffering)")                                                         \
  X(MaskedTilePolicy, masked_tiles, MaskedTilePolicy::skip, one_of_names(), "name",                                       \
    "a KV tile no row of the Q tile can see (other branches' private pages, later positions): skip = neither read nor computed (block-sparse); compute = streamed and computed under the mask", \
    "the page table says whose page each token is, so the DMA knows a tile is fully masked before it reads it (block-sparse attention as in FlashAttention's causal and paged kernels)") \
  X(KvWritePolicy, kv_writes, KvWritePolicy::timed, one_of_names(), "name",                                           \
    "the step's paged-KV memory work before the PE streams: timed = its new tokens' K/V written into its HBM slice and copy-on-write page copies read (over the NoC from another PE) and written, through the slice model; free = they take no time (the values are placed either way)", \
    "a paged KV cache writes each new token's K/V into its page and copies a shared partly filled page before a branch appends to it (vLLM's copy-on-write); both move HBM bytes")

struct GemmConfig {
  AHBM_PARAMS_PE_GEMM(AHBM_HW_MEMBER)
  bool gemv() const { return narrow_m == NarrowM::gemv; }
};
struct VectorConfig {
  AHBM_PARAMS_PE_VECTOR(AHBM_HW_MEMBER)
};
struct HbmSliceConfig {
  AHBM_PARAMS_PE_HBM(AHBM_HW_MEMBER)
  bool banked() const { return model == HbmModel::banked; }
};
struct DmaConfig {
  AHBM_PARAMS_PE_DMA(AHBM_HW_MEMBER)
};

// pe: one processing element.
#define AHBM_PARAMS_PE(X)                                                                                        \
  X(uint64_t, sram_bytes, 512 * 1024, between(1024, kMaxConfigBytes), "bytes",                                   \
    "PE local SRAM: Q tile + KV tile slots + scores + state",                                                     \
    "holds the note's 160-row tile, two 64-token KV slots, scores and state (331 KiB) with room to spare") \
  X(PeOverlap, overlap, PeOverlap::none, one_of_names(), "name",                                         \
    "GEMM engine / vector unit overlap across KV tiles: `none` = Q·Kᵀ, softmax, P·V one after another; `ping_pong` = Q·Kᵀ of the next KV tile on the GEMM engine while the vector unit does this tile's softmax", \
    "none: the AHBM note's sequential PE; ping_pong: FlashAttention-3's ping-pong scheduling (docs/model.md)")

struct PeConfig {
  AHBM_PARAMS_PE(AHBM_HW_MEMBER)
  bool ping_pong() const { return overlap == PeOverlap::ping_pong; }
  GemmConfig gemm;
  VectorConfig vector;
  HbmSliceConfig hbm;
  DmaConfig dma;
};

// cube.q_buffer: the CUBE's shared Q buffer.
#define AHBM_PARAMS_CUBE_Q_BUFFER(X)                                                                             \
  X(uint64_t, bytes, 256 * 1024, between(64, kMaxConfigBytes), "bytes", "capacity of the CUBE's shared Q buffer", \
    "three 160-row fp32 tiles (80 KiB each): one being read, one arriving")                                      \
  X(int, read_ports, 2, between(1, 256), "ports", "PEs reading at the same time", "a banked SRAM with two read ports") \
  X(int, port_bytes_per_cycle, 64, between(1, 1 << 16).slower_when_smaller(), "B/cycle", "read bandwidth per port", "a 512-bit port") \
  X(int, write_bytes_per_cycle, 64, between(1, 1 << 16).slower_when_smaller(), "B/cycle", "write bandwidth of multicast arrivals", \
    "one 512-bit write port")

// cube.reducer: merges the CUBE's PE states.
#define AHBM_PARAMS_CUBE_REDUCER(X)                                                                              \
  X(int, bus_bytes_per_cycle, 64, between(1, 1 << 16).slower_when_smaller(), "B/cycle", "intra-CUBE bus carrying PE states to the reducer", \
    "a 512-bit bus shared by 8 PEs")                                                                             \
  X(int, lanes, 32, between(1, 4096).slower_when_smaller(), "fp32/cycle", "reducer vector width (of each merge unit)", "same as the PE vector unit") \
  X(int, units, 1, between(1, 64).slower_when_smaller(), "count",                                                    \
    "merge units of the reducer, each `lanes` wide, merging two states at once (different pairs of a tree, or different tiles)", \
    "1 = one serial merge unit; the note (§3.4) parallelises a merge across rows (the lanes), not across PE states") \
  X(MergeOrder, order, MergeOrder::serial, one_of_names(), "name",                                            \
    "how a tile's PE states are merged: `serial` = each arrival into one running state (states − 1 merges in a row); `tree` = pairs by PE index, level by level, a pair as soon as both are present (⌈log2 states⌉ levels with states / 2 units)", \
    "serial: the merge needs one unit; a tree needs more units for its speed-up") \
  X(InterCubeMerge, inter_cube, InterCubeMerge::own_unit, one_of_names(), "name",                                  \
    "where the states arriving over the reduction links are merged (and the root normalises): `own_unit` = one merge unit at the CUBE's link port; `shared` = on the reducer's `units`, contending with the intra-CUBE merges", \
    "own_unit: the inter-CUBE merges never wait for the intra-CUBE ones")

// cube: one HBM CUBE.
#define AHBM_PARAMS_CUBE(X) X(int, pes, 8, between(1, 64), "count", "PEs per CUBE", \
    "the note; at most 128: 64 CUBEs × 128 PEs is the largest group that elaborates within vm.max_map_count = 65530 (docs/reliability.md)")

struct QBufferConfig {
  AHBM_PARAMS_CUBE_Q_BUFFER(AHBM_HW_MEMBER)
};
struct ReducerConfig {
  AHBM_PARAMS_CUBE_REDUCER(AHBM_HW_MEMBER)
};
struct CubeConfig {
  AHBM_PARAMS_CUBE(AHBM_HW_MEMBER)
  QBufferConfig q_buffer;
  ReducerConfig reducer;
};

// group.link: the inter-CUBE reduction links of a group.
#define AHBM_PARAMS_GROUP_LINK(X)                                                                                \
  X(double, bandwidth_gbps, 64.0, between(0.001, 1e6).slower_when_smaller().clock_scaled(), "GB/s", "inter-CUBE reduction link, per direction", \
    "a short-reach die-to-die link of a few lanes")                                                              \
  X(double, latency_ns, 20.0, between(0.0, 1e6).slower_when_larger(), "ns", "link latency", "serdes plus wire for a short link") \
  X(ReductionTopology, topology, ReductionTopology::tree, one_of_names(), "name", "reduction tree shape",             \
    "fewest levels (2 for 4 CUBEs)")

// group: a KV-head group.
#define AHBM_PARAMS_GROUP(X)                                                                                     \
  X(int, cubes, 4, between(1, 64), "count", "CUBEs per KV-head group", "the note: 1 KV head = 4 CUBEs = 32 PEs")

struct LinkConfig {
  AHBM_PARAMS_GROUP_LINK(AHBM_HW_MEMBER)
};
struct GroupConfig {
  AHBM_PARAMS_GROUP(AHBM_HW_MEMBER)
  LinkConfig link;
};

// noc: the network on chip. `params` belongs to the chosen model, which validates it.
#define AHBM_PARAMS_NOC(X)                                                                                       \
  X(std::string, model, "ideal", checked_by("a registered NoC model (`ahbm-sim nocs`)"), "name",                  \
    "NoC model by name (`ahbm-sim nocs`)", "the reference point; see docs/noc.md")                               \
  X(Json, params, Json::object(), checked_by("the keys the model documents (docs/noc.md)"), "object",           \
    "the model's own parameters", "`ideal`: `latency_ns` (default 10)")

// host: the host and its link to the chip.
#define AHBM_PARAMS_HOST(X)                                                                                      \
  X(double, bandwidth_gbps, 64.0, between(0.001, 1e6).slower_when_smaller(), "GB/s",                                 \
    "host ↔ chip link, per direction: Q tiles in, O tiles back, each direction its own resource (full duplex)", \
    "PCIe 5.0 ×16: 32 GT/s × 16 lanes ≈ 64 GB/s in each direction at once (a PCIe link is dual-simplex: every lane has its own transmit and receive pair)") \
  X(double, latency_ns, 500.0, between(0.0, 1e9).slower_when_larger(), "ns",                                         \
    "latency of a transfer over the host link: each Q write (the host writes tiles one after another) and each O tile's return (behind the link's earlier O transfers)", \
    "a PCIe round trip")                                                                                         \
  X(double, kernel_launch_ns, 0.0, between(0.0, 1e9).slower_when_larger(), "ns",                                     \
    "per kernel launch (T_create_group + T_launch_group), paid serially on the host",                            \
    "off by default (Policy A unchanged); THInfer's point needs it set (docs/policies.md)")

// remote: KV moved between PEs (Policy B1 remap, B2 remote reads; docs/policies.md).
#define AHBM_PARAMS_REMOTE(X)                                                                                    \
  X(int, request_bytes, 64, between(1, 1 << 20), "bytes", "a remote-read request packet on the NoC (B2)", "one flit") \
  X(double, overhead_ns, 100.0, between(0.0, 1e9).slower_when_larger(), "ns",                                        \
    "symmetric-memory cost at the serving CUBE per remote request (translation, protocol; B2)",                 \
    "a few hundred cycles of remote-access software/hardware path; varied to 1000 in the sweep")                 \
  X(int, page_tokens, 16, between(1, 1 << 20), "tokens", "KV tokens per page-table entry", "vLLM-style 16-token pages") \
  X(int, page_rebuild_cycles, 32, between(0, kMaxConfigCycles).slower_when_larger(), "cycles",                       \
    "cycles to rebuild one page-table entry after a KV remap (B1)", "a table write plus a TLB-style invalidate")

// system: several chips of this config and the network between them (docs/system.md). Absent
// (every field at its default) it is left out of the resolved config, so a one-chip config reads
// and echoes as before. The network is a plug-in of the NoC's kind whose endpoints are the chips;
// its `params` belong to the chosen model, which validates them when it is built.
#define AHBM_PARAMS_SYSTEM(X)                                                                                    \
  X(int, chips, 1, between(1, 4096), "count", "chips in the system, each an ordinary chip of this config",           \
    "one chip: the single-chip model, outputs as without a system block")
#define AHBM_PARAMS_SYSTEM_NETWORK(X)                                                                            \
  X(std::string, model, "switch", checked_by("a registered system network (`ahbm-sim nocs --system`)"), "name",       \
    "chip-to-chip network model by name (`ahbm-sim nocs --system`)",                                              \
    "one switch with a port per chip, as a CXL 2.0 switch or an NVSwitch fabric (docs/system.md)")               \
  X(Json, params, Json::object(), checked_by("the keys the model documents (docs/system.md)"), "object",         \
    "the network model's own parameters", "each model's defaults (docs/system.md)")

struct NocConfig {
  AHBM_PARAMS_NOC(AHBM_HW_MEMBER)
};
struct HostConfig {
  AHBM_PARAMS_HOST(AHBM_HW_MEMBER)
};
struct RemoteConfig {
  AHBM_PARAMS_REMOTE(AHBM_HW_MEMBER)
};

struct SystemNetworkConfig {
  AHBM_PARAMS_SYSTEM_NETWORK(AHBM_HW_MEMBER)
};
struct SystemConfig {
  AHBM_PARAMS_SYSTEM(AHBM_HW_MEMBER)
  SystemNetworkConfig network;
};

// energy: the cost of each counted activity and the static power of each component
// (docs/energy.md: the model, each default's source, what is and is not counted). Energy is a
// reading of the statistics the timing keeps (hw/chip/energy.h), so none of these changes timing.
#define AHBM_PARAMS_ENERGY(X)                                                                                    \
  X(double, hbm_activate_pj_per_bit, 0.11, between(0.0, 1e3), "pJ/bit",                                           \
    "HBM row activation (cell to bit-line sense amplifier), per bit read from or written to a PE's slice",       \
    "AttAcc (ASPLOS 2024, src/config.py, after FGDRAM, MICRO 2017) HBM3 energy breakdown: cell activate 0.11 pJ/bit")                                     \
  X(double, hbm_access_pj_per_bit, 0.44, between(0.0, 1e3), "pJ/bit",                                             \
    "HBM column access (sense amplifier to bank I/O), per bit read or written",                                   \
    "AttAcc src/config.py (after FGDRAM): cell read/write 0.44 pJ/bit")                                              \
  X(double, hbm_bank_group_pj_per_bit, 1.01, between(0.0, 1e3), "pJ/bit",                                         \
    "bank-group multiplexer to the PE, per bit: the in-stack path of a bank-group-level PE",                       \
    "AttAcc src/config.py (after FGDRAM): column decoder to bank-group mux 1.01 pJ/bit; its bank-group PIM pays 0.11 + 0.44 + 1.01 per bit, as a PE here")              \
  X(double, stack_io_pj_per_bit, 2.03, between(0.0, 1e3), "pJ/bit",                                               \
    "off-stack I/O, per bit of NoC payload delivered (every NoC delivery enters or leaves a CUBE's stack)",       \
    "AttAcc src/config.py (after FGDRAM): bank-group mux to global I/O 1.23 + TSV 0.5 + interposer 0.3 pJ/bit")                                                 \
  X(double, sram_pj_per_byte, 1.25, between(0.0, 1e4), "pJ/B",                                                   \
    "SRAM access (Q buffer, PE SRAM), per byte written or read",                                                  \
    "Horowitz (ISSCC 2014, 45 nm): a 64-bit access of an 8 KiB SRAM 10 pJ")                                       \
  X(double, mac_fp32_pj, 4.6, between(0.0, 1e4), "pJ/MAC", "one fp32 multiply-accumulate of the GEMM engine",    \
    "Horowitz (45 nm): fp32 multiply 3.7 + fp32 add 0.9 pJ")                                                     \
  X(double, mac_fp16_pj, 2.0, between(0.0, 1e4), "pJ/MAC",                                                       \
    "one fp16 multiply with fp32 accumulation", "Horowitz (45 nm): fp16 multiply 1.1 + fp32 add 0.9 pJ")         \
  X(double, mac_bf16_pj, 2.0, between(0.0, 1e4), "pJ/MAC",                                                       \
    "one bf16 multiply with fp32 accumulation",                                                                  \
    "taken as fp16's (Horowitz gives no bf16 figure; its 8-bit significand multiplier is smaller, so an upper bound)") \
  X(double, vector_op_pj, 3.7, between(0.0, 1e4), "pJ/op",                                                       \
    "one element-pass of a vector unit (PE softmax, state merge, fused operators; CUBE reducer merge)",          \
    "Horowitz (45 nm): an fp32 multiply, the dearest of the passes' basic operations")                          \
  X(double, noc_flit_hop_pj, 180.0, between(0.0, 1e6), "pJ/flit-hop",                                             \
    "a flit through one router and its output link (the default is for 64-byte flits: set it with noc flit_bytes)", \
    "router buffer write + read 2 × 64 B × 1.25 pJ/B (Horowitz SRAM) + 1 mm link 512 bit × 40.4 fJ/bit/mm (Park et al., DATE 2013) ≈ 180 pJ") \
  X(double, link_pj_per_bit, 0.5, between(0.0, 1e3), "pJ/bit", "inter-CUBE reduction link, per bit sent",       \
    "UCIe 1.0 standard-package die-to-die link: 0.5 pJ/bit")                                                     \
  X(double, host_link_pj_per_bit, 5.0, between(0.0, 1e3), "pJ/bit", "host link, per bit in either direction",    \
    "assumed: a long-reach PCIe 5.0-class SerDes, ten times UCIe's on-package figure (no public per-bit figure cited)") \
  X(double, pe_static_w, 0.1, between(0.0, 1e4), "W", "static (leakage) power of one PE: engines, vector unit, SRAM", \
    "assumed (no public figure): about 10 % of a PE's dynamic power at full GEMM rate (256 fp32 MAC/cycle × 4.6 pJ × 1 GHz ≈ 1.2 W)") \
  X(double, cube_static_w, 1.0, between(0.0, 1e4), "W",                                                          \
    "static power of one CUBE outside its PEs: HBM stack background (refresh, periphery), Q buffer, reducer",    \
    "assumed (no public figure): about 10 % of an HBM3 stack's active power at 819 GB/s × 8 × ~1.6 pJ/bit ≈ 10 W") \
  X(double, router_static_w, 0.01, between(0.0, 1e4), "W", "static power of one NoC router (flit-level models; the ideal NoC has none)", \
    "assumed (no public figure): a small 5-port router's leakage")

struct EnergyConfig {
  AHBM_PARAMS_ENERGY(AHBM_HW_MEMBER)
};

// The root object: the chip.
#define AHBM_PARAMS_CHIP(X)                                                                                      \
  X(double, clock_ghz, 1.0, between(0.01, 100.0).slower_when_smaller().clock_scaled(), "GHz", "clock of PEs, Q buffers, reducers", \
    "near-memory logic on the HBM base die; HBM2-PIM runs its units at 0.3 GHz, a logic-process base die can go faster; a round number to scale from") \
  X(int, groups, 1, between(1, 1024), "count", "KV-head groups on the chip", "one KV head per group (note §2); more for GQA") \
  X(int, chip_cubes, 0, between(0, 1 << 16), "count", "CUBEs the chip has; 0 = exactly `groups` × `group.cubes`", \
    "the note fixes a group (4 CUBEs), not the chip; set it to check that the groups fit (`groups` × `group.cubes` ≤ `chip_cubes`, [reliability.md](reliability.md))") \
  X(int, q_tile_rows, 0, between(0, 1 << 20), "rows", "Q rows per tile; 0 = the runtime decides (`q_tile_search`)", \
    "let the runtime fit SRAM and Q buffer")                                                                     \
  X(QTileSearch, q_tile_search, QTileSearch::cost_model, one_of_names(), "name",                         \
    "with q_tile_rows = 0: each policy's tile rows are the cost model's best of the tiles that fit (`cost_model`), or the largest that fits (`largest`)", \
    "a fixed tile choice can flip the A-vs-B verdict (docs/policies.md)")                                       \
  X(double, power_cap_w, 0.0, between(0.0, 1e6), "W",                                                              \
    "the chip's power cap: 0 = off; else at least the static power, and the run takes the highest clock scale at which no power window exceeds it", \
    "off: the issue's power budget is a study knob (docs/energy.md, Power cap)")

struct HwConfig {
  AHBM_PARAMS_CHIP(AHBM_HW_MEMBER)
  PeConfig pe;
  CubeConfig cube;
  GroupConfig group;
  NocConfig noc;
  HostConfig host;
  RemoteConfig remote;
  EnergyConfig energy;
  FaultConfig fault;  // JSON "fault_injection": test-only (docs/reliability.md); off by default
  SystemConfig system;  // JSON "system": several chips (docs/system.md); left out of to_json at its defaults

  int pes_per_group() const { return cube.pes * group.cubes; }
};

// Parses and validates; missing fields keep their defaults, unknown keys are errors. Ends with
// check_hw_config, so a parsed config is also consistent.
HwConfig parse_hw_config(const Json& j, const std::string& file);
HwConfig load_hw_config(const std::string& path);
// The resolved config, every field present (fault_injection only when it is on).
Json to_json(const HwConfig& c);
// Cross-field consistency of a config (docs/reliability.md): the DMA tile is whole GEMM
// tiles, the groups fit the chip, fault-injection targets exist. Throws InputError naming `file`.
void check_hw_config(const HwConfig& c, const std::string& file);

// Static power, W: pe_static_w per PE, cube_static_w per CUBE, router_static_w per router of
// the elaborated chip (`groups` × `group.cubes` CUBEs of `cube.pes` PEs; the routers are the
// NoC model's, known once it is built: 0 gives the chip's static power without them).
double static_power_w(const HwConfig& c, int routers);
// The InputError text for a power cap below the static power (config checks; the runtime again
// with the NoC's routers).
std::string power_cap_below_static(double cap_w, double static_w);

// The timing parameters of `c` that make the model slower than the defaults, with their values
// and defaults ("timing parameters slower than their defaults: clock_ghz = 0.01 (default 1.0),
// ..."): what a run too long for simulated time names (docs/reliability.md).
std::string slow_parameters(const HwConfig& c);

// A power cap's operating point (runtime/run/power_cap.h): `c` with every parameter the table
// marks clock_scaled (the PE clock, the HBM and inter-CUBE link bandwidths) multiplied by `f`.
HwConfig at_clock_scale(const HwConfig& c, double f);
// The lowest clock scale that keeps every clock_scaled parameter within its allowed range.
double min_clock_scale(const HwConfig& c);

// The table, in declaration order (sections depth first, each section's own fields first).
const std::vector<HwParam>& hw_params();
const std::vector<HwSection>& hw_sections();

// Generated artefacts (hw_config_docs.cpp; tools/gen-hw-config.sh writes them):
// the JSON Schema of a hardware config file (draft 2020-12), with noc.params checked against
// the parameters each model of `noc_models` declares when noc.model names it (and
// system.network.params against `system_models` likewise) ...
Json hw_config_schema(const std::vector<PluginParams>& noc_models = {}, const std::vector<PluginParams>& system_models = {});
// ... the parameter table of docs/model.md (markdown, one row per parameter) ...
std::string hw_config_markdown_table();
// ... and the table of the NoC models' parameters in docs/noc.md (one row per parameter and
// declaration: a row several models declare alike lists them all).
std::string plugin_params_markdown_table(const std::vector<PluginParams>& models);

}  // namespace ahbm
