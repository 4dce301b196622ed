#pragma once
// The packet-level engine of the chip-to-chip (system) networks: plain C++, no SystemC (the
// SystemC side is PacketNoc, packet_noc.h, as FlitNetwork is FlitNoc's). Nodes are the chips
// (0 .. chips-1) and the switches after them; directed links join them, each with its own
// bandwidth and latency; a destination table routes every packet (docs/system.md).
//
// Timing (virtual cut-through, unbounded buffers; docs/system.md, "Timing rules"). A message of
// S bytes is split into ceil(S / packet_bytes) packets (the last one shorter), all ready at the
// source when the message is sent. A packet occupies a link of bandwidth B for bytes / B. When
// it starts on a link at s, its head reaches the link's far node at s + link latency, plus the
// switch latency when that node is a switch; the next link may start it no earlier than that,
// no earlier than the link is free, and no earlier than makes it finish after it finished on
// the previous link (a packet cannot leave faster than it arrives). Links are reserved first
// come, first served in the order of the times packets ask for them (ties: packet id, then the
// order the requests were made), so results do not depend on anything but the inputs. Buffers
// are unbounded: contention is queueing at a link, never back-pressure. The tail reaches a
// destination chip one link latency after the packet finished on the last link; a message is
// delivered when its last packet's tail has. A packet to several chips follows the union of its
// routes (a tree: the table is per destination) and is copied where they split.
//
// Time is in integer ticks (the SystemC resolution: PacketNoc uses sc_time values), so the
// arithmetic is exact and the order of events deterministic.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ahbm {

struct SystemLink {
  int from = 0, to = 0;  // nodes
  double gbps = 1;       // bytes per ns
  double latency_ns = 0;
  std::string name;      // "chip0->chip1", "chip3->sw0", "leaf1->spine"
};

// Chips, switches, links and the routing table of one network (topologies.h builds them).
struct SystemTopology {
  int chips = 0;
  std::vector<std::string> switch_names;  // node chips + i is switch i
  std::vector<SystemLink> links;
  std::vector<std::vector<int>> route;    // [node][chip]: outgoing link to reach the chip; -1 at the chip
  std::string description;                // e.g. "ring of 8 chips", reported in the statistics

  int nodes() const { return chips + int(switch_names.size()); }
  bool is_switch(int node) const { return node >= chips; }
  std::string node_name(int node) const;
  // Links from `src` to `dst` along the table (empty when src == dst). Throws std::logic_error
  // on a table that loops or has no route (a bug in a topology).
  std::vector<int> path(int src, int dst) const;
  // Checks the table: every chip reaches every chip. Called by the engine.
  void check() const;
};

struct PacketNetworkParams {
  uint64_t packet_bytes = 4096;
  double switch_latency_ns = 0;
  double energy_pj_per_byte = 0;  // per link traversal
};

class PacketNetwork {
 public:
  // `ticks_per_ns`: the time unit (1000 for picoseconds).
  PacketNetwork(SystemTopology topo, PacketNetworkParams params, double ticks_per_ns);

  // A message from chip `src` to the chips `dsts`, ready at `now` (no earlier than the last
  // time advanced to). `id` is the caller's and must be unique among messages in flight.
  void send(uint64_t id, int src, const std::vector<int>& dsts, uint64_t bytes, uint64_t now);

  struct Delivery {
    uint64_t id;
    int dst;
    uint64_t at;  // ticks: the last packet's tail arrival
  };
  // Processes every event due by `until` (ticks) and returns the messages delivered, in the
  // order they arrived (ties: the order of processing).
  std::vector<Delivery> advance(uint64_t until);
  // Time of the next event, or UINT64_MAX when idle.
  uint64_t next_event() const;
  bool idle() const { return heap_.empty(); }

  struct LinkStats {
    uint64_t bytes = 0, packets = 0, busy_ticks = 0;
  };
  const std::vector<LinkStats>& link_stats() const { return stats_; }
  const SystemTopology& topology() const { return topo_; }
  const PacketNetworkParams& params() const { return params_; }
  double ticks_per_ns() const { return ticks_per_ns_; }
  uint64_t link_traversals() const;  // packets summed over links
  double energy_pj() const;          // bytes summed over links x energy_pj_per_byte

 private:
  enum class Kind { request, arrive };
  struct Event {
    uint64_t time;      // request: earliest start on `link`; arrive: tail arrival at `node`
    uint64_t packet;    // global packet number (tie-break)
    uint64_t seq;       // order the event was made (tie-break)
    Kind kind;
    int link;           // request
    int node;           // arrive: the chip
    uint64_t msg;
    uint64_t bytes;
    std::vector<int> dsts;  // request: the chips this copy serves
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      if (a.time != b.time) return a.time > b.time;
      if (a.packet != b.packet) return a.packet > b.packet;
      return a.seq > b.seq;
    }
  };
  struct Message {
    std::map<int, uint64_t> waiting;  // destination -> packets not yet arrived
  };
  uint64_t duration(int link, uint64_t bytes) const;
  uint64_t ticks(double ns) const;
  void push(Event e);
  // Copies of a packet at `node` (head there at `head`, after finishing on the previous link at
  // `prev_finish`; 0 at the source) toward each outgoing link its destinations need, and the
  // tail's arrival at `tail` when `node` is one of them.
  void fan_out(int node, const Event& at, uint64_t head, uint64_t prev_finish, uint64_t tail);

  SystemTopology topo_;
  PacketNetworkParams params_;
  double ticks_per_ns_;
  std::vector<uint64_t> link_free_;
  std::vector<uint64_t> switch_ticks_;  // per node: switch latency (0 on chips)
  std::vector<LinkStats> stats_;
  std::vector<Event> heap_;
  std::map<uint64_t, Message> messages_;
  uint64_t next_packet_ = 0, next_seq_ = 0;
};

}  // namespace ahbm
