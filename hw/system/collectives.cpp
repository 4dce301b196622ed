#include "hw/system/collectives.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "hw/common/base/error.h"
#include "hw/common/sim/sim_context.h"
#include "hw/system/packet_noc.h"

namespace ahbm {

namespace {

bool power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

// Chunk j of S bytes split n ways (sizes differ by at most one byte).
uint64_t chunk(uint64_t S, int n, int j) { return S / uint64_t(n) + (uint64_t(j) < S % uint64_t(n) ? 1 : 0); }

int mod(int a, int n) { return ((a % n) + n) % n; }

// Ring steps `first` .. `last` (inclusive) of the ring all-reduce, whose step s < n - 1 is a
// reduce-scatter step and the rest all-gather steps (all_gather alone: steps with the
// all-gather's chunk numbering, from its own step 0). Message (s, r) is rank r's send of step s
// to r + 1; it waits for what r received in step s - 1.
void ring_steps(std::vector<CollectiveMessage>& out, int n, int steps, const std::function<uint64_t(int s, int r)>& bytes,
                const std::function<bool(int s)>& reduces) {
  for (int s = 0; s < steps; ++s)
    for (int r = 0; r < n; ++r) {
      CollectiveMessage m;
      m.src = r;
      m.dst = mod(r + 1, n);
      m.bytes = bytes(s, r);
      m.reduce_bytes = reduces(s) ? m.bytes : 0;
      if (s > 0) m.deps.push_back((s - 1) * n + mod(r - 1, n));
      out.push_back(std::move(m));
    }
}

void tree_all_reduce(std::vector<CollectiveMessage>& out, int n, uint64_t S) {
  const int L = tree_rounds(n);
  std::vector<std::vector<int>> received(static_cast<size_t>(n));  // messages each rank received while reducing
  for (int k = 0; k < L; ++k)
    for (int i = 1 << k; i < n; i += 2 << k) {
      CollectiveMessage m;
      m.src = i;
      m.dst = i - (1 << k);
      m.bytes = m.reduce_bytes = S;
      m.deps.insert(m.deps.end(), received[size_t(i)].begin(), received[size_t(i)].end());
      received[size_t(m.dst)].push_back(int(out.size()));
      out.push_back(std::move(m));
    }
  std::vector<int> got(static_cast<size_t>(n), -1);  // the broadcast message each rank received
  for (int k = L - 1; k >= 0; --k)
    for (int i = 0; i + (1 << k) < n; i += 2 << k) {
      CollectiveMessage m;
      m.src = i;
      m.dst = i + (1 << k);
      m.bytes = S;
      if (i == 0) m.deps.insert(m.deps.end(), received[0].begin(), received[0].end());
      else m.deps.push_back(got[size_t(i)]);
      got[size_t(m.dst)] = int(out.size());
      out.push_back(std::move(m));
    }
}

// Reduce-scatter by recursive halving (partners n/2, n/4, .. apart, halves of the segment),
// then all-gather by recursive doubling (partners 1, 2, .. apart). Each exchange waits for the
// rank's exchange of the round before.
void halving_doubling(std::vector<CollectiveMessage>& out, int n, uint64_t S) {
  const int L = tree_rounds(n);
  std::vector<int> last(static_cast<size_t>(n), -1);  // the message each rank received last
  const auto round = [&](int distance, uint64_t bytes, bool reduce) {
    std::vector<int> now(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      CollectiveMessage m;
      m.src = i;
      m.dst = i ^ distance;
      m.bytes = bytes;
      m.reduce_bytes = reduce ? bytes : 0;
      if (last[size_t(i)] >= 0) m.deps.push_back(last[size_t(i)]);
      now[size_t(m.dst)] = int(out.size());
      out.push_back(std::move(m));
    }
    last.swap(now);
  };
  for (int k = 0; k < L; ++k) round(n >> (k + 1), S >> (k + 1), true);
  for (int k = 0; k < L; ++k) round(1 << k, S >> (L - k), false);
}

}  // namespace

void check_collective(const CollectiveSpec& spec, int endpoints, const std::string& where) {
  const int n = int(spec.ranks.size());
  if (n < 1) throw InputError(where + ": a collective needs at least one rank");
  std::vector<int> sorted = spec.ranks;
  std::sort(sorted.begin(), sorted.end());
  if (sorted.front() < 0 || sorted.back() >= endpoints)
    throw InputError(where + ": rank endpoint " + std::to_string(sorted.front() < 0 ? sorted.front() : sorted.back()) +
                     " out of range (allowed: 0 to " + std::to_string(endpoints - 1) + ")");
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw InputError(where + ": a chip is listed twice among the ranks");
  const std::vector<CollectiveAlgo> algos = collective_algorithms(spec.kind);
  if (std::find(algos.begin(), algos.end(), spec.algo) == algos.end()) {
    std::string list;
    for (CollectiveAlgo a : algos) list += (list.empty() ? "" : ", ") + collective_name(a);
    throw InputError(where + ": " + collective_name(spec.kind) + " has no algorithm " + collective_name(spec.algo) +
                     " (allowed: " + list + ")");
  }
  if (spec.kind == CollectiveKind::p2p && n != 2)
    throw InputError(where + ": p2p takes 2 ranks (sender, receiver), not " + std::to_string(n));
  if (spec.algo == CollectiveAlgo::halving_doubling && !power_of_two(n))
    throw InputError(where + ": halving_doubling needs a power-of-two rank count, not " + std::to_string(n) +
                     " (allowed: 1, 2, 4, 8, ...)");
  if (!(spec.reduce_ns_per_byte >= 0 && spec.reduce_ns_per_byte <= 1e6))
    throw InputError(where + ": reduce time " + std::to_string(spec.reduce_ns_per_byte) +
                     " ns/byte out of range (allowed: [0, 1e6])");
}

std::vector<CollectiveMessage> collective_schedule(const CollectiveSpec& spec) {
  check_collective(spec, std::numeric_limits<int>::max(), "collective " + collective_name(spec.kind));
  const int n = int(spec.ranks.size());
  const uint64_t S = spec.bytes;
  std::vector<CollectiveMessage> out;
  if (spec.kind == CollectiveKind::p2p) {
    out.push_back({0, 1, S, 0, {}});
    return out;
  }
  if (n == 1) return out;
  switch (spec.kind) {
    case CollectiveKind::all_reduce:
      if (spec.algo == CollectiveAlgo::tree) tree_all_reduce(out, n, S);
      else if (spec.algo == CollectiveAlgo::halving_doubling) halving_doubling(out, n, S);
      else  // step s < n - 1: chunk r - s, reduced; then chunk r + 1 - (s - (n - 1)), forwarded
        ring_steps(
            out, n, 2 * (n - 1),
            [&](int s, int r) { return chunk(S, n, s < n - 1 ? mod(r - s, n) : mod(r + 1 - (s - (n - 1)), n)); },
            [n](int s) { return s < n - 1; });
      break;
    case CollectiveKind::reduce_scatter:
      ring_steps(out, n, n - 1, [&](int s, int r) { return chunk(S, n, mod(r - s, n)); }, [](int) { return true; });
      break;
    case CollectiveKind::all_gather:
      ring_steps(out, n, n - 1, [&](int s, int r) { return chunk(S, n, mod(r - s, n)); }, [](int) { return false; });
      break;
    case CollectiveKind::all_to_all:  // round j: every rank to the rank j after it
      for (int j = 1; j < n; ++j)
        for (int i = 0; i < n; ++i) out.push_back({i, mod(i + j, n), chunk(S, n, mod(i + j, n)), 0, {}});
      break;
    case CollectiveKind::p2p: break;
  }
  return out;
}

std::optional<AlphaBeta> collective_alpha_beta(const Noc& network, const CollectiveSpec& spec) {
  const auto* packet = dynamic_cast<const PacketNoc*>(&network);
  if (!packet) return std::nullopt;
  const SystemTopology& t = packet->topology();
  AlphaBeta ab;
  ab.gbps = std::numeric_limits<double>::infinity();
  ab.reduce_ns_per_byte = spec.reduce_ns_per_byte;
  for (const CollectiveMessage& m : collective_schedule(spec)) {
    double latency = 0;
    for (int l : t.path(spec.ranks[size_t(m.src)], spec.ranks[size_t(m.dst)])) {
      const SystemLink& link = t.links[size_t(l)];
      latency += link.latency_ns + (t.is_switch(link.to) ? packet->network_params().switch_latency_ns : 0.0);
      ab.gbps = std::min(ab.gbps, link.gbps);
    }
    ab.alpha_ns = std::max(ab.alpha_ns, latency);
  }
  if (!std::isfinite(ab.gbps)) ab.gbps = t.links.empty() ? 1.0 : t.links[0].gbps;
  return ab;
}

CollectiveEngine::CollectiveEngine(sc_core::sc_module_name name, Noc& network) : sc_core::sc_module(name), net_(network) {
  for (int e = 0; e < net_.endpoint_count(); ++e) net_.attach(e, this);
  SC_HAS_PROCESS(CollectiveEngine);
  SC_THREAD(reduce_loop);
}

int CollectiveEngine::start(const CollectiveSpec& spec) {
  check_collective(spec, net_.endpoint_count(), std::string(name()));
  const int h = int(ops_.size());
  Op& op = ops_.emplace_back();
  op.spec = spec;
  if (op.spec.name.empty()) op.spec.name = collective_name(spec.kind) + "." + collective_name(spec.algo);
  op.msgs = collective_schedule(spec);
  op.dependents.resize(op.msgs.size());
  op.waiting.resize(op.msgs.size());
  for (size_t m = 0; m < op.msgs.size(); ++m) {
    op.waiting[m] = int(op.msgs[m].deps.size());
    for (int d : op.msgs[m].deps) op.dependents[size_t(d)].push_back(int(m));
    op.result.bytes += op.msgs[m].bytes;
  }
  op.left = op.msgs.size();
  op.result.name = op.spec.name;
  op.result.messages = op.msgs.size();
  op.result.start = op.result.end = sc_core::sc_time_stamp();
  if (op.left == 0) op.done.notify(sc_core::SC_ZERO_TIME);
  for (size_t m = 0; m < op.msgs.size(); ++m)
    if (op.waiting[m] == 0) send(h, int(m));
  return h;
}

void CollectiveEngine::wait(int handle) {
  if (!done(handle)) sc_core::wait(done_event(handle));
}

void CollectiveEngine::send(int op, int msg) {
  const Op& o = ops_[size_t(op)];
  const CollectiveMessage& m = o.msgs[size_t(msg)];
  NocPacket p;
  p.src = o.spec.ranks[size_t(m.src)];
  p.dsts.push_back(o.spec.ranks[size_t(m.dst)]);
  p.bytes = m.bytes;
  p.tag = msg;
  p.payload = std::make_shared<const Ref>(Ref{op, msg});
  net_.send(std::move(p));
}

void CollectiveEngine::noc_receive(int, const NocPacket& packet) {
  const Ref r = *std::static_pointer_cast<const Ref>(packet.payload);
  const Op& o = ops_[size_t(r.op)];
  const double reduce_ns = o.spec.reduce_ns_per_byte * double(o.msgs[size_t(r.msg)].reduce_bytes);
  if (reduce_ns > 0) reducing_.push(r, sc_core::sc_time(reduce_ns, sc_core::SC_NS));
  else ready(r);
}

void CollectiveEngine::reduce_loop() {
  for (;;) ready(reducing_.pop());
}

void CollectiveEngine::ready(Ref r) {
  Op& o = ops_[size_t(r.op)];
  for (int d : o.dependents[size_t(r.msg)])
    if (--o.waiting[size_t(d)] == 0) send(r.op, d);
  if (--o.left == 0) {
    o.result.end = sc_core::sc_time_stamp();
    o.done.notify(sc_core::SC_ZERO_TIME);
  }
}

namespace {

// Starts every collective at time 0 (a process: sends need the simulation running).
class CollectiveDriver : public sc_core::sc_module {
 public:
  CollectiveDriver(sc_core::sc_module_name name, CollectiveEngine& engine, std::vector<CollectiveSpec> specs)
      : sc_core::sc_module(name), engine_(engine), specs_(std::move(specs)) {
    SC_HAS_PROCESS(CollectiveDriver);
    SC_THREAD(run);
  }

 private:
  void run() {
    for (const CollectiveSpec& s : specs_) engine_.start(s);
  }
  CollectiveEngine& engine_;
  std::vector<CollectiveSpec> specs_;
};

}  // namespace

CollectiveRun run_collectives(const NocRegistry& registry, const SystemNetworkSpec& network,
                              const std::vector<CollectiveSpec>& specs) {
  SimContext context;
  SimContext::Scope use_context(context);
  CollectiveRun run;
  std::unique_ptr<Noc> net = make_system_network(registry, network);
  for (size_t i = 0; i < specs.size(); ++i)  // bad specs before anything runs
    check_collective(specs[i], net->endpoint_count(), "collective " + std::to_string(i));
  CollectiveEngine engine("collectives", *net);
  CollectiveDriver driver("driver", engine, specs);
  with_internal_errors([] { sc_core::sc_start(); });  // until nothing is left to happen
  resync_sanitizer_stack();
  for (size_t h = 0; h < engine.collectives(); ++h) {
    if (!engine.done(int(h))) throw std::logic_error("collective " + engine.result(int(h)).name + " did not end");
    run.results.push_back(engine.result(int(h)));
  }
  net->report_stats(run.network_stats);
  if (!specs.empty()) run.alpha_beta = collective_alpha_beta(*net, specs.front());
  run.end_ns = to_ns(sc_core::sc_time_stamp());
  unwind_threads();
  return run;
}

}  // namespace ahbm
