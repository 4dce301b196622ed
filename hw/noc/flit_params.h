#pragma once
// The flow-control and router parameters every flit-level model shares (noc.params of crossbar,
// mesh, ring, torus, cmesh, flatfly), declared as one parameter table like the hardware
// config's (hw/common/config/hw_config.h): the struct members, the reader, the JSON Schema, the
// table in docs/noc.md and the fuzz dictionary all come from the lines below.
//
// Router micro-architecture (docs/noc.md, "Router micro-architecture"). Two pipelines:
// - lumped (the `classic` preset, the default): every flit waits router_cycles in a router; a head
//   allocates its output VC in the cycle it traverses the switch.
// - staged (the `booksim-iq` preset): the input-queued router's stages of route computation, VC
//   allocation, switch allocation and switch traversal, each with its own delay; a head needs an
//   output VC before it may request the switch (or, speculative, in parallel with it); body flits
//   go through switch allocation and traversal only.
#include <algorithm>
#include <cstdint>

#include "hw/common/config/param_table.h"

namespace ahbm {

#define AHBM_FLIT_ROUTER_PRESETS(V) V(classic, "classic") V(booksim_iq, "booksim-iq")
AHBM_CHOICE(FlitRouterPreset, AHBM_FLIT_ROUTER_PRESETS)
#define AHBM_FLIT_PIPELINES(V) V(lumped, "lumped") V(staged, "staged")
AHBM_CHOICE(FlitPipeline, AHBM_FLIT_PIPELINES)
#define AHBM_FLIT_VC_SELECTS(V) V(kLowest, "lowest") V(kRoundRobin, "round-robin")
AHBM_CHOICE(FlitVcSelect, AHBM_FLIT_VC_SELECTS)
// Switch allocators: greedy (maximal, lumped or staged); the rest staged only: separable
// input-first, separable output-first (round-robin arbiters that advance on every grant), iSLIP
// (output arbiters advance only on an accepted grant in the first iteration), wavefront.
#define AHBM_FLIT_SW_ALLOCATORS(V) \
  V(kGreedy, "greedy") V(kInputFirst, "input-first") V(kOutputFirst, "output-first") V(kIslip, "islip") V(kWavefront, "wavefront")
AHBM_CHOICE(FlitSwAllocator, AHBM_FLIT_SW_ALLOCATORS)
// VC allocators (staged only besides greedy): greedy (inputs in rotating order, every free VC to
// a waiting head: maximal), separable input-first, output-first, iSLIP (one iteration each).
#define AHBM_FLIT_VC_ALLOCATORS(V) V(kGreedy, "greedy") V(kInputFirst, "input-first") V(kOutputFirst, "output-first") V(kIslip, "islip")
AHBM_CHOICE(FlitVcAllocator, AHBM_FLIT_VC_ALLOCATORS)
// When a packet gives up its input VC (the next packet in the buffer may be routed) and its output
// VC (another packet may allocate it): after its tail's switch traversal, or at its tail's switch
// allocation, as BookSim2's iq_router (staged only; the flit still reaches the channel st_delay later).
#define AHBM_FLIT_VC_RELEASES(V) V(traversal, "traversal") V(allocation, "switch-allocation")
AHBM_CHOICE(FlitVcRelease, AHBM_FLIT_VC_RELEASES)
#define AHBM_FLIT_MULTICASTS(V) V(tree, "tree") V(source, "source")
AHBM_CHOICE(FlitMulticast, AHBM_FLIT_MULTICASTS)

// The table. Read in this order, on top of the model's defaults with the preset named by
// `router` laid over them (read_flit_params); relations between fields are checked after it.
#define AHBM_PARAMS_NOC_FLIT(X)                                                                                 \
  X(FlitRouterPreset, router, FlitRouterPreset::classic, one_of_names(), "name",                                \
    "router preset (docs/noc.md, Router micro-architecture); the parameters below override its values",         \
    "classic: the lumped router of the first flit-level model; booksim-iq: BookSim2's input-queued router")      \
  X(int, flit_bytes, 64, between(1, 4096).slower_when_smaller(), "bytes",                                       \
    "payload per flit = channel width; a packet of B bytes is ceil(B / flit_bytes) flits (at least 1)",          \
    "a 512-bit channel (the NoC energy default, energy.noc_flit_hop_pj, is for 64-byte flits)")                  \
  X(FlitPipeline, pipeline, FlitPipeline::lumped, one_of_names(), "name",                                      \
    "router pipeline: lumped (router_cycles) or staged (routing, VC allocation, switch allocation, traversal)",   \
    "the classic preset's; booksim-iq: staged")                                                                  \
  X(int, router_cycles, 4, between(1, 64).slower_when_larger(), "cycles",                                       \
    "lumped pipeline only: cycles from a flit's arrival in an input buffer until it may leave (crossbar: 2, arbitration then traversal)", \
    "four stages (route, VC allocation, switch allocation, traversal) of one cycle, as BookSim2's defaults")     \
  X(int, routing_delay, 1, between(0, 64).slower_when_larger(), "cycles", "staged pipeline only: route computation", \
    "BookSim2's routing_delay")                                                                                  \
  X(int, vc_alloc_delay, 1, between(0, 64).slower_when_larger(), "cycles", "staged pipeline only: VC allocation", \
    "BookSim2's vc_alloc_delay")                                                                                 \
  X(int, sw_alloc_delay, 1, between(0, 64).slower_when_larger(), "cycles", "staged pipeline only: switch allocation", \
    "BookSim2's sw_alloc_delay")                                                                                 \
  X(int, st_delay, 1, between(1, 64).slower_when_larger(), "cycles", "staged pipeline only: switch traversal",   \
    "BookSim2's st_final_delay")                                                                                 \
  X(bool, speculative, false, true_or_false(), "bool",                                                          \
    "staged pipeline only: switch allocation in parallel with VC allocation (head: routing + max(VA, SA) + ST)",  \
    "BookSim2's speculative = 0")                                                                                \
  X(FlitVcRelease, vc_release, FlitVcRelease::traversal, one_of_names(), "name",                                \
    "staged pipeline only: a packet frees its input and output VCs after its tail's switch traversal, or at its tail's switch allocation", \
    "classic: traversal; booksim-iq: switch-allocation, as BookSim2's iq_router (a VC passes a packet every routing + VA + SA cycles)") \
  X(int, link_cycles, 1, between(1, 64).slower_when_larger(), "cycles",                                         \
    "latency of every router-to-router channel and of the credit wire", "a short on-chip wire")                 \
  X(int, inject_cycles, 0, between(0, 64).slower_when_larger(), "cycles",                                       \
    "injection channel: a packet created at cycle c may enter its router's input buffer at c + this",            \
    "classic: the source writes the router's buffer directly; booksim-iq: 2, as measured against BookSim")       \
  X(int, eject_cycles, 0, between(0, 64).slower_when_larger(), "cycles",                                        \
    "ejection channel, router to endpoint; 0 = link_cycles", "a channel like the links")                         \
  X(int, credit_delay, 0, between(0, 64).slower_when_larger(), "cycles",                                        \
    "credit processing on top of the credit wire: a credit is usable link_cycles + credit_delay after its flit left the buffer", \
    "classic: none; booksim-iq: 1, BookSim's 7-cycle credit loop (docs/noc.md)")                                 \
  X(int, buffer_flits, 8, between(1, 1024), "flits", "depth of each input virtual channel", "BookSim2's vc_buf_size") \
  X(int, vcs, 2, between(1, 16), "count", "virtual channels per input port (ring, torus: even)",                 \
    "the fewest a ring or torus needs for its two dateline classes")                                             \
  X(FlitVcSelect, vc_select, FlitVcSelect::kLowest, one_of_names(), "name",                                     \
    "which free output VC a head gets: the lowest numbered, or round-robin from the one after the port's last choice", \
    "classic: lowest; booksim-iq: round-robin")                                                                  \
  X(FlitSwAllocator, sw_allocator, FlitSwAllocator::kGreedy, one_of_names(), "name",                           \
    "switch allocator; all but greedy need the staged pipeline", "classic: greedy (maximal); booksim-iq: islip")  \
  X(int, alloc_iters, 1, between(1, 16), "iterations",                                                          \
    "iterations of a separable switch allocator (input-first, output-first, islip) per cycle", "BookSim2's alloc_iters") \
  X(int, input_speedup, 1, between(1, 16), "count",                                                             \
    "switch inputs per input port, at most vcs (staged allocators): VC v uses input v mod input_speedup",         \
    "BookSim2's input_speedup")                                                                                  \
  X(FlitVcAllocator, vc_allocator, FlitVcAllocator::kGreedy, one_of_names(), "name",                           \
    "VC allocator; all but greedy need the staged pipeline", "greedy: every free VC to a waiting head (maximal)")  \
  X(FlitMulticast, multicast, FlitMulticast::tree, one_of_names(), "name",                                      \
    "tree: one packet replicated where its routes split; source: one unicast copy per destination",               \
    "in-network replication, what a multicast-capable NoC does (docs/noc.md, Multicast schemes)")

struct FlitParams {
  using VcSelect = FlitVcSelect;
  using SwAllocator = FlitSwAllocator;
  using VcAllocator = FlitVcAllocator;

  AHBM_PARAMS_NOC_FLIT(AHBM_HW_MEMBER)
  int vc_classes = 1;  // set by the model, not a parameter: 2 on rings and tori (a packet moves to the upper half of the VCs after a dateline)

  bool staged() const { return pipeline == FlitPipeline::staged; }
  // Staged, released at switch allocation: the engine moves a flit out of its buffer at switch
  // allocation, and the flit reaches its channel this many cycles later (0 otherwise).
  int release_lag() const { return staged() && vc_release == FlitVcRelease::allocation ? st_delay : 0; }
  bool tree_multicast() const { return multicast == FlitMulticast::tree; }
  int eject() const { return eject_cycles == 0 ? link_cycles : eject_cycles; }
  int credit_cycles() const { return link_cycles + credit_delay; }
  // Cycles a head spends in a router without contention (arrival to leaving on the channel).
  int head_cycles() const {
    return staged() ? routing_delay + (speculative ? std::max(vc_alloc_delay, sw_alloc_delay) : vc_alloc_delay + sw_alloc_delay) +
                          st_delay
                    : router_cycles;
  }
  // Cycles from a head's VC allocation to leaving (staged).
  int after_vc_alloc() const { return head_cycles() - routing_delay; }
  // Cycles a body flit spends in a router without contention.
  int body_cycles() const { return staged() ? sw_alloc_delay + st_delay : router_cycles; }
  // Zero-load latency (creation to tail arrival) of an F-flit packet through H routers:
  // injection channel + H router pipelines + (H - 1) links + ejection channel + serialisation.
  int64_t zero_load_cycles(int64_t H, int64_t F) const {
    return inject_cycles + H * head_cycles() + (H - 1) * link_cycles + eject() + (F - 1);
  }
};

// The table of the lines above.
const ParamTable<FlitParams>& flit_param_table();

}  // namespace ahbm
