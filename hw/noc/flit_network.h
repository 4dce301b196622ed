#pragma once
// The flit-level engine shared by the mesh, ring and crossbar models: input-queued routers with
// virtual channels, wormhole switching, credit-based flow control, destination-table routing and
// in-network multicast replication. Plain C++, no SystemC: the FlitNoc wrapper calls step() only
// for cycles in which something can happen (a flit arrives, leaves a router pipeline, a credit
// returns, or a flit moved in the previous cycle), so an idle network costs nothing and cycles in
// which flits only sit in pipelines are skipped.
//
// Timing of one flit (see docs/noc.md for the closed forms): it enters a router's input buffer at
// cycle a (from the source at the cycle it is injected, from a channel link_cycles after it was
// sent), may leave at a + router_cycles at the earliest (subject to VC allocation, switch
// allocation and a credit), and reaches the next router or the destination endpoint
// link_cycles later. Each channel carries one flit per cycle; each source injects one flit per
// cycle; destinations always accept (ejection never back-pressures).
#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hw/noc/flit_allocators.h"
#include "hw/noc/flit_params.h"
#include "hw/noc/flit_routing.h"
#include "hw/noc/noc.h"

namespace ahbm {

// splitmix64: a small, fully specified generator, so a seed gives the same draws everywhere
// (the testbench's traffic, the per-packet choices of O1TURN and Valiant routing).
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
  int below(int n) { return int((unsigned __int128)next() * unsigned(n) >> 64); }

 private:
  uint64_t s_;
};

// Routers, the unidirectional channels between them, where endpoints attach, and the routing
// table. Table routing is destination-based (the next channel depends on the current router and
// the destination only), which makes the union of the routes from one source a tree: that tree is
// what a multicast packet follows, replicated where its routes split.
//
// Routing beyond the table (docs/noc.md, "Routing"), for unicast worms on grids: multicast worms
// always follow the table (the tree) in VC class 0 (min_adapt: in any VC, and in the escape VC
// only once they are in it, as its unicasts). One class per algorithm in hw/noc/flit_routing.h:
// - kO1Turn: each packet draws X-first or Y-first (route_pick(seed, packet, 2)) and travels in
//   VC class 0 or 1 accordingly; each class alone is dimension-ordered, hence deadlock-free.
// - kValiant: each packet draws an intermediate router (route_pick(seed, packet, routers)), goes
//   there X-first in VC class 0 (phase 0), then to its destination X-first in class 1 (phase 1).
// - kMinAdapt (Duato): VC 0 is the escape channel, routed X-first; VCs 1.. are adaptive, on any
//   productive port (the one with the most credits over its adaptive VCs, ties X first). A head
//   that finds no adaptive VC free takes the escape VC if it is, and stays in escape VCs from
//   then on (as BookSim's min_adapt).
// VC classes multiply: route class (O1TURN order, Valiant phase; FlitRouting::classes) x dateline
// class (tori).
struct FlitTopology {
  // kTorusDor: BookSim's dim_order_torus (TorusDorRouting), on tori and rings.
  enum class Routing { kTable, kO1Turn, kValiant, kMinAdapt, kTorusDor };
  struct Channel {
    int from = 0, to = 0;
    bool dateline = false;  // crossing it moves a packet to VC class 1
    int dim = 0;            // dimension (torus); entering a new dimension puts a packet back in class 0
    int cycles = 0;         // latency of the channel and of its credits; 0 = link_cycles
  };
  std::vector<std::string> router_names;
  std::vector<Channel> channels;
  std::vector<int> endpoint_router;     // router each endpoint attaches to
  std::vector<std::vector<int>> route;  // [router][endpoint]: outgoing channel, or -1 = eject here
  Routing routing = Routing::kTable;
  uint64_t route_seed = 1;  // O1TURN, Valiant: per-packet draws
  // Not kTable: the channel a dimension-order route takes from `router` towards `target` (a
  // router; -1 when there), `order` 0 = X first, 1 = Y first. On a grid the two orders' first
  // hops are the productive directions.
  NextChannel next_channel;
  // kTorusDor: the grid and each router's channels (+x, -x, +y, -y; -1 = none).
  int cols = 0, rows = 0;
  std::vector<std::array<int, 4>> grid_channels;
  bool inject_any_vc = false;  // sources inject into every VC (BookSim's torus), not only class 0's
  int routers() const { return int(router_names.size()); }
};

// One switch allocator and one VC allocator per router, and one routing function, chosen at
// construction (make_switch_allocator, make_vc_allocator, make_routing): the engine builds their
// requests from its buffers and carries out their grants.
class FlitNetwork {
 public:
  static constexpr int64_t kIdle = std::numeric_limits<int64_t>::max();
  struct Delivery {
    uint64_t packet;
    int endpoint;
    int hops;  // routers traversed
  };
  struct Totals {
    uint64_t flits_injected = 0;  // flits that entered the network at the sources
    uint64_t link_flits = 0;      // router-to-router channel traversals
    uint64_t eject_flits = 0;     // flits handed to destination endpoints
    uint64_t multicast_channel_flits = 0;  // injection + link + ejection traversals of multicast packets
  };

  // The per-packet draw of O1TURN (n = 2: 0 = X first) and Valiant (n = routers: the
  // intermediate router): a function of the seed and the packet id only, so runs repeat.
  static int route_pick(uint64_t seed, uint64_t packet, int n) {
    return SplitMix64(seed ^ (packet * 0xD1B54A32D192ED03ull)).below(n);
  }

  // Throws std::invalid_argument on an inconsistent topology (a bug in the model, not user input).
  FlitNetwork(FlitTopology topo, const FlitParams& params, std::vector<std::string> endpoint_names);

  // Queues a packet at endpoint `src`. Each element of `copies` is one worm (its destination set);
  // the source injects them one after the other, `flits` flits each, from cycle `cycle` on
  // (which must be later than the last processed cycle).
  void enqueue(uint64_t packet, int src, std::vector<std::vector<int>> copies, int flits, int64_t cycle,
               bool multicast);
  // Processes cycle `c`, which must not lie beyond next_cycle(). Clears and refills the
  // observations below.
  void step(int64_t c);
  // The earliest cycle in which something can happen, or kIdle.
  int64_t next_cycle() const;
  int64_t last_cycle() const { return last_; }

  // Observations of the last step.
  const std::vector<uint64_t>& first_injected() const { return first_injected_; }  // first flit entered
  const std::vector<uint64_t>& last_injected() const { return last_injected_; }    // last flit entered
  const std::vector<Delivery>& delivered() const { return delivered_; }           // tail reached endpoint

  std::vector<NocLink> links() const;
  const Totals& totals() const { return totals_; }
  int routers() const { return int(routers_.size()); }
  const FlitParams& params() const { return p_; }

 private:
  struct Worm {  // one packet copy occupying an input virtual channel
    uint64_t packet = 0;
    int flits = 0;
    int hops = 0;
    int vclass = 0;
    bool multicast = false;
    std::vector<int> dests;
    int dim = -1;  // dimension of the channel it arrived on (-1: from the source)
    bool table = true;  // routed by the destination table (else by the routing function)
    RouteState route;   // the routing function's state (route class, Valiant's intermediate router)
  };
  struct Branch {  // one output a worm is forwarded to, with the destinations behind it
    int out = 0;
    int vc = -1;   // output VC; -1 until allocated
    int sent = 0;  // flits forwarded so far
    std::vector<int> dests;
    int64_t vc_at = 0;  // staged: cycle the output VC was allocated
  };
  // A FIFO of flits that may hold the tail of one packet and the heads of the next ones
  // (an output VC is released when a tail is sent, as in BookSim). Only the front packet is
  // routed and forwarded.
  struct InVc {
    struct Seg {
      int worm;
      int received;  // flits of this packet arrived so far
    };
    std::deque<Seg> segs;          // packets in the buffer, front first
    int freed = 0;                 // flits of the front packet that left the buffer (credit returned)
    int done = 0;                  // flits of the front packet forwarded on every branch
    int64_t front_base = 0;        // arrival index of the front packet's first flit
    int64_t arrived = 0;           // flits ever arrived
    int64_t front_at = 0;          // vc_release = switch-allocation: cycle the front packet became the front
    bool routed = false;           // front packet routed (branches valid)
    bool replicating = false;      // front packet splits here: its flits go to the replication store
    std::vector<Branch> branches;  // of the front packet
    std::vector<int64_t> arrival;  // ring of buffer_flits arrival cycles, indexed by arrival index
    std::vector<int64_t> store;    // replication store: arrival cycles of the front packet's freed flits
    int buffered() const { return int(arrived - front_base) - freed; }
    bool pending() const { return !segs.empty() && segs.front().received > done; }
  };
  struct InPort {
    int router = 0;
    int upstream = -1;  // output port feeding it; -1 = a source endpoint
    std::vector<InVc> vcs;
    // The VC a switch input offers first (round robin from the one after the last that sent):
    // rr for switch input 0, sub_rr for inputs 1 .. input_speedup - 1.
    int rr = 0;
    std::vector<int> sub_rr;
  };
  struct OutPort {
    int router = 0;
    int channel = -1;   // the topology's channel, or -1 when it ejects
    int down = -1;      // input port it feeds, or -1 when it ejects
    int endpoint = -1;  // ejection: the endpoint it delivers to
    bool dateline = false;
    int dim = 0;
    int cycles = 1;  // channel (and credit wire) latency
    std::vector<int> credits;
    uint64_t held = 0;  // bit v: VC v held by a packet from head allocation until its tail is sent
    int local = 0;      // index among its router's output ports (its switch column)
    int64_t used = -1;  // last cycle a flit was sent
    uint64_t flits = 0;
    std::vector<uint64_t> vc_flits;  // router-to-router links: flits per VC
    std::string name;
  };
  struct Router {
    std::vector<int> ins;
    std::vector<int> outs;  // output ports, by OutPort::local
    int rr = 0;             // input with priority (VC requests, lumped traversal); moves when a flit is sent
    std::unique_ptr<SwitchAllocator> sw;  // staged pipeline
    std::unique_ptr<VcAllocator> va;
    int buffered = 0;
    bool active = false;
  };
  struct Queued {
    uint64_t packet;
    std::vector<int> dests;
    int flits;
    int64_t cycle;
    bool multicast, first, last;
  };
  struct Source {
    int in_port = 0;
    std::deque<Queued> queue;
    int vc = -1;  // input VC the current worm is being injected into
    int next_vc = 0;  // round-robin start for the next worm
    int injected = 0;
    uint64_t flits = 0;
    bool active = false;
    std::string name;
  };
  enum EvKind : uint8_t { kArrive, kCredit, kEject, kWake };
  struct Event {
    EvKind kind;
    int a, b, c;  // arrive: in port, vc, new worm (head) or -1; credit: out port, vc; eject: endpoint, hops, tail
    uint64_t packet;
  };
  // The routing function's view of the credits (min_adapt weighs channels by them).
  class Credits final : public ChannelCredits {
   public:
    explicit Credits(const FlitNetwork& n) : n_(n) {}
    int credits(int channel, int vc) const override {
      return n_.out_[size_t(n_.channel_out_[size_t(channel)])].credits[size_t(vc)];
    }

   private:
    const FlitNetwork& n_;
  };

  // Throws std::invalid_argument unless every route (the table's, and the routing function's
  // dimension orders) ends where it should without a loop.
  void check_routes() const;
  void schedule(int64_t at, const Event& e);
  void apply(const Event& e, int64_t c);
  void activate(int router);
  void inject(Source& s, int64_t c);
  void step_router(int r, int64_t c);
  void route(int r, InVc& iv, int64_t c);
  void route_unicast(int r, InVc& iv, int64_t c);
  int& vc_pointer(InPort& ip, int sub) { return sub == 0 ? ip.rr : ip.sub_rr[size_t(sub - 1)]; }
  template <class F>
  void for_each_vc(InPort& ip, int sub, F&& f);
  int64_t arrival_of(const InVc& iv, int flit) const {
    return flit < iv.freed ? iv.store[size_t(flit)] : iv.arrival[size_t((iv.front_base + flit) % p_.buffer_flits)];
  }
  void replicate(InPort& ip, int vc, int64_t c);
  void push_arrival(InVc& iv, int router, int64_t c);
  bool ready_staged(const Branch& b, const InVc& iv, int64_t c) const;
  // VC allocation. request_vc adds to router r's VC allocator the request of branch b of worm w
  // (input VC `input`, router-local): the options the routing function gives, split by the dateline
  // class, with their free VCs. take_vc gives the branch a granted VC (on the port granted, which
  // an adaptive routing may have chosen).
  void request_vc(int r, const Branch& b, const Worm& w, int input, int64_t c);
  void take_vc(int r, Branch& b, int port, int vc);
  // The VC class a packet travels in on channel `o`: 1 after crossing a dateline, back to 0 when
  // it enters a new dimension, else unchanged.
  static int next_class(const OutPort& o, const Worm& w) {
    return o.dateline ? 1 : o.dim != w.dim && w.dim >= 0 ? 0 : w.vclass;
  }
  // The class on channel `o` of a worm routed to it: the routing function's (BookSim's torus),
  // else next_class.
  // Table-routed worms (multicasts) the same way when they enter a dimension (branch
  // destinations `dests`), then keep their class through it.
  int class_on(const OutPort& o, const Worm& w, const std::vector<int>& dests) const {
    if (!w.table) {
      const int k = routing_->vc_class(w.route);
      if (k >= 0) return k;
    } else if (topo_.routing == FlitTopology::Routing::kTorusDor) {
      if (w.dim >= 0 && o.dim == w.dim) return w.vclass;
      std::vector<int> to;
      for (int d : dests) to.push_back(topo_.endpoint_router[size_t(d)]);
      const int k = routing_->table_class(o.router, o.channel, to);
      if (k >= 0) return k;
    }
    return next_class(o, w);
  }
  // A credit for a flit that left input port ip is usable this long after it left.
  int credit_cycles(const InPort& ip) const { return out_[size_t(ip.upstream)].cycles + p_.credit_delay; }
  // Schedules a wake of router r at `at` unless that is this cycle (stepped anyway) or earlier.
  void wake_at(int r, int64_t at, int64_t c) {
    if (at > c) schedule(at, {kWake, r, 0, 0, 0});
  }
  // Staged pipeline: route computation, VC requests and replication, then VC allocation; switch
  // requests from the flits ready, then switch allocation and traversal.
  void route_and_allocate_vcs(int r, int64_t c);
  void allocate_vcs(int r, int64_t c);
  bool request_switch(int r, int64_t c);
  bool allocate_switch(int r, int64_t c);
  // Lumped pipeline: route computation and replication, then allocation in switch traversal.
  void route_lumped(int r, int64_t c);
  bool traverse_lumped(int r, int64_t c);
  bool can_send_lumped(int r, Branch& b, const InVc& iv, int input, int64_t c);
  void send(Branch& b, InVc& iv, int64_t c);
  void free_flits(InPort& ip, int vc, int64_t c);
  int new_worm(Worm w);

  FlitTopology topo_;
  FlitParams p_;
  std::vector<std::string> endpoint_names_;
  std::unique_ptr<FlitRouting> routing_;
  std::vector<InPort> in_;
  std::vector<OutPort> out_;
  std::vector<Router> routers_;
  std::vector<Source> sources_;
  std::vector<int> channel_out_;   // channel -> output port
  std::vector<int> eject_out_;     // endpoint -> its ejection output port
  std::vector<Worm> worms_;
  std::vector<int> free_worms_;
  std::vector<std::vector<Event>> wheel_;  // events by cycle modulo its size
  std::vector<Event> due_;                 // the slot being applied (kept for its capacity)
  // VC allocation scratch: the branch behind each request, the routing function's options.
  std::vector<std::pair<InVc*, int>> va_branch_;
  std::vector<RouteOption> options_;
  size_t pending_events_ = 0;
  std::vector<int> active_routers_, active_sources_;
  int64_t last_ = -1;
  bool moved_ = false;
  Totals totals_;
  std::vector<uint64_t> first_injected_, last_injected_;
  std::vector<Delivery> delivered_;
};

}  // namespace ahbm
