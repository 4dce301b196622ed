#pragma once
// Collectives on a system network (docs/system.md, "Collectives"). A collective over a set of
// ranks (chip endpoints of the network) is a dependency schedule of point-to-point messages
// (collective_schedule): a message is sent when every message it depends on has arrived at
// its sender and been reduced there (reduce_ns_per_byte x the bytes to reduce, 0 by default).
// The CollectiveEngine, a SystemC module attached to every endpoint of the network, runs any
// number of collectives at once on it (that is how contention between them shows): start one
// from anywhere at the current simulated time, wait on its event from a SystemC thread.
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <systemc>

#include "hw/common/base/timing.h"
#include "hw/noc/noc.h"
#include "hw/system/collective_closed_form.h"
#include "hw/system/system_network.h"

namespace ahbm {

struct CollectiveSpec {
  CollectiveKind kind = CollectiveKind::all_reduce;
  CollectiveAlgo algo = CollectiveAlgo::ring;
  std::vector<int> ranks;         // endpoints of the network, in rank order (p2p: sender, receiver)
  uint64_t bytes = 0;             // S, as collective_closed_form.h defines it per collective
  double reduce_ns_per_byte = 0;  // local reduction time
  std::string name;               // for spans and results; "" = "<kind>.<algo>"
};

// One message of a schedule: from rank `src` to rank `dst` (indices into the ranks), sent once
// every message in `deps` is ready; ready when it has arrived and its `reduce_bytes` are
// reduced at `dst`.
struct CollectiveMessage {
  int src = 0, dst = 0;
  uint64_t bytes = 0;
  uint64_t reduce_bytes = 0;
  std::vector<int> deps;
};

// The schedule of a collective (its ranks only matter by count). Throws InputError for a
// combination that does not exist (halving_doubling on a rank count not a power of two, an
// algorithm the collective does not have, p2p with other than 2 ranks).
std::vector<CollectiveMessage> collective_schedule(const CollectiveSpec& spec);
// Checks the spec against a network of `endpoints`: ranks distinct and in range, at least one,
// the algorithm the collective's. InputError naming `where` otherwise.
void check_collective(const CollectiveSpec& spec, int endpoints, const std::string& where);

// The closed form's alpha and B for `spec` on a packet-level network (PacketNoc): the largest
// latency (links and switches) and the smallest link bandwidth over the rank pairs its
// schedule uses; the reduction rate from the spec. Nothing for a network of another kind.
std::optional<AlphaBeta> collective_alpha_beta(const Noc& network, const CollectiveSpec& spec);

struct CollectiveResult {
  std::string name;
  sc_core::sc_time start, end;  // end: the last message ready
  uint64_t messages = 0, bytes = 0;
  double time_ns() const { return to_ns(end - start); }
};

class CollectiveEngine : public sc_core::sc_module, public NocClient {
 public:
  // Attaches itself to every endpoint of `network` (it is their only client).
  CollectiveEngine(sc_core::sc_module_name name, Noc& network);

  // Starts a collective now; returns its handle. Checked like check_collective.
  int start(const CollectiveSpec& spec);
  bool done(int handle) const { return ops_.at(size_t(handle)).left == 0; }
  // Notified when the collective ends (with nothing left, at the time start() was called).
  const sc_core::sc_event& done_event(int handle) const { return ops_.at(size_t(handle)).done; }
  // From a SystemC thread: returns when the collective has ended.
  void wait(int handle);
  const CollectiveResult& result(int handle) const { return ops_.at(size_t(handle)).result; }
  size_t collectives() const { return ops_.size(); }

  void noc_receive(int endpoint, const NocPacket& packet) override;

 private:
  struct Ref {
    int op, msg;
  };
  struct Op {
    CollectiveSpec spec;
    std::vector<CollectiveMessage> msgs;
    std::vector<std::vector<int>> dependents;
    std::vector<int> waiting;  // per message: dependencies not yet ready
    size_t left = 0;           // messages not yet ready
    sc_core::sc_event done;
    CollectiveResult result;
  };
  void send(int op, int msg);
  void ready(Ref r);
  void reduce_loop();

  Noc& net_;
  std::deque<Op> ops_;  // stable addresses: each holds an event
  TimedQueue<Ref> reducing_;
};

// A whole run on a fresh network, for tests and coll-bench: builds `model` (from `registry`)
// with `params` over `chips` endpoints in a simulation context of its own, starts every spec
// at time 0 (concurrently) and runs until all have ended.
struct CollectiveRun {
  std::vector<CollectiveResult> results;
  StatsNode network_stats;  // the network's report_stats
  double end_ns = 0;
  std::optional<AlphaBeta> alpha_beta;  // the first spec's on this network (collective_alpha_beta)
};
CollectiveRun run_collectives(const NocRegistry& registry, const SystemNetworkSpec& network,
                              const std::vector<CollectiveSpec>& specs);

}  // namespace ahbm
