#include "hw/noc/flit_network.h"

#include <algorithm>
#include <stdexcept>

namespace ahbm {

FlitNetwork::FlitNetwork(FlitTopology topo, const FlitParams& params, std::vector<std::string> endpoint_names)
    : topo_(std::move(topo)), p_(params), endpoint_names_(std::move(endpoint_names)) {
  const int R = topo_.routers(), E = int(endpoint_names_.size());
  if (p_.router_cycles < 1 || p_.link_cycles < 1 || p_.buffer_flits < 1 || p_.vcs < 1 || p_.vc_classes < 1 ||
      p_.vcs % (p_.vc_classes * topo_.route_classes()) != 0 || p_.flit_bytes < 1 || p_.routing_delay < 0 || p_.vc_alloc_delay < 0 ||
      p_.sw_alloc_delay < 0 || p_.st_delay < 1 || p_.inject_cycles < 0 || p_.eject() < 1 || p_.credit_delay < 0 ||
      p_.alloc_iters < 1 || p_.input_speedup < 1 || p_.input_speedup > p_.vcs ||
      (p_.sw_allocator != FlitParams::SwAllocator::kGreedy && !p_.staged()) ||
      (p_.sw_allocator == FlitParams::SwAllocator::kGreedy && p_.input_speedup != 1) ||
      (p_.vc_allocator != FlitParams::VcAllocator::kGreedy &&
       (!p_.staged() || topo_.routing == FlitTopology::Routing::kMinAdapt)))
    throw std::invalid_argument("FlitNetwork: bad flow-control parameters");
  if (int(topo_.endpoint_router.size()) != E || int(topo_.route.size()) != R)
    throw std::invalid_argument("FlitNetwork: topology does not match the endpoints");
  routers_.resize(size_t(R));
  auto add_in = [&](int router, int upstream) {
    InPort ip;
    ip.router = router;
    ip.upstream = upstream;
    ip.vcs.resize(size_t(p_.vcs));
    ip.sub_rr.assign(size_t(p_.input_speedup - 1), 0);
    ip.accept.assign(size_t(p_.input_speedup), 0);
    for (auto& v : ip.vcs) v.arrival.assign(size_t(p_.buffer_flits), 0);
    in_.push_back(std::move(ip));
    routers_[size_t(router)].ins.push_back(int(in_.size()) - 1);
    return int(in_.size()) - 1;
  };
  for (const auto& ch : topo_.channels) {
    if (ch.from < 0 || ch.from >= R || ch.to < 0 || ch.to >= R)
      throw std::invalid_argument("FlitNetwork: channel between unknown routers");
    OutPort o;
    o.router = ch.from;
    o.dateline = ch.dateline;
    o.dim = ch.dim;
    o.credits.assign(size_t(p_.vcs), p_.buffer_flits);
    o.owned.assign(size_t(p_.vcs), 0);
    o.vc_flits.assign(size_t(p_.vcs), 0);
    o.name = topo_.router_names[size_t(ch.from)] + "->" + topo_.router_names[size_t(ch.to)];
    out_.push_back(std::move(o));
    const int op = int(out_.size()) - 1;
    channel_out_.push_back(op);
    out_[size_t(op)].down = add_in(ch.to, op);
  }
  for (int e = 0; e < E; ++e) {
    const int r = topo_.endpoint_router[size_t(e)];
    if (r < 0 || r >= R) throw std::invalid_argument("FlitNetwork: endpoint on an unknown router");
    OutPort o;
    o.router = r;
    o.endpoint = e;
    o.name = topo_.router_names[size_t(r)] + "->" + endpoint_names_[size_t(e)];
    out_.push_back(std::move(o));
    eject_out_.push_back(int(out_.size()) - 1);
    Source s;
    s.in_port = add_in(r, -1);
    s.name = endpoint_names_[size_t(e)] + "->" + topo_.router_names[size_t(r)];
    sources_.push_back(std::move(s));
  }
  for (int op = 0; op < int(out_.size()); ++op) {
    auto& outs = routers_[size_t(out_[size_t(op)].router)].outs;
    out_[size_t(op)].local = int(outs.size());
    outs.push_back(op);
  }
  // Every route must end at the destination's router: follow it from every router.
  for (int r = 0; r < R; ++r) {
    if (int(topo_.route[size_t(r)].size()) != E) throw std::invalid_argument("FlitNetwork: routing table size");
    for (int e = 0; e < E; ++e) {
      int at = r;
      for (int steps = 0; topo_.route[size_t(at)][size_t(e)] >= 0; ++steps) {
        const int ch = topo_.route[size_t(at)][size_t(e)];
        if (ch >= int(topo_.channels.size()) || topo_.channels[size_t(ch)].from != at || steps > R)
          throw std::invalid_argument("FlitNetwork: route from " + topo_.router_names[size_t(r)] + " to " +
                                      endpoint_names_[size_t(e)] + " is broken or loops");
        at = topo_.channels[size_t(ch)].to;
      }
      if (at != topo_.endpoint_router[size_t(e)])
        throw std::invalid_argument("FlitNetwork: route to " + endpoint_names_[size_t(e)] + " ejects at the wrong router");
    }
  }
  if (topo_.routing != FlitTopology::Routing::kTable) {
    if (!topo_.next_channel) throw std::invalid_argument("FlitNetwork: routing without next_channel");
    if (topo_.routing == FlitTopology::Routing::kMinAdapt && (p_.vcs < 2 || p_.vc_classes != 1))
      throw std::invalid_argument("FlitNetwork: min_adapt needs an escape VC and an adaptive one, no datelines");
    // Both orders from every router to every router end there without a loop (checked on
    // networks up to 256 routers: the check is quadratic in routers times the diameter).
    for (int r = 0; R <= 256 && r < R; ++r)
      for (int target = 0; target < R; ++target)
        for (int order = 0; order < 2; ++order) {
          int at = r;
          for (int steps = 0, ch; (ch = topo_.next_channel(at, target, order)) >= 0; ++steps) {
            if (ch >= int(topo_.channels.size()) || topo_.channels[size_t(ch)].from != at || steps > R)
              throw std::invalid_argument("FlitNetwork: route from " + topo_.router_names[size_t(r)] + " to " +
                                          topo_.router_names[size_t(target)] + " is broken or loops");
            at = topo_.channels[size_t(ch)].to;
          }
          if (at != target) throw std::invalid_argument("FlitNetwork: route ends at the wrong router");
        }
  }
  // Events lie at most this many cycles ahead: pipelines, channels, credits.
  const int ahead = std::max({p_.router_cycles, p_.link_cycles, p_.credit_cycles(), p_.eject(), p_.head_cycles(),
                              p_.body_cycles(), p_.routing_delay});
  wheel_.resize(size_t(ahead + 1));
}

void FlitNetwork::enqueue(uint64_t packet, int src, std::vector<std::vector<int>> copies, int flits, int64_t cycle,
                          bool multicast) {
  if (cycle <= last_) throw std::logic_error("FlitNetwork::enqueue into a processed cycle");
  Source& s = sources_.at(size_t(src));
  for (size_t i = 0; i < copies.size(); ++i)
    s.queue.push_back({packet, std::move(copies[i]), std::max(flits, 1), cycle + p_.inject_cycles, multicast, i == 0,
                       i + 1 == copies.size()});
  if (!s.active) {
    s.active = true;
    active_sources_.push_back(src);
  }
}

void FlitNetwork::schedule(int64_t at, const Event& e) {
  wheel_[size_t(at % int64_t(wheel_.size()))].push_back(e);
  ++pending_events_;
}

void FlitNetwork::activate(int router) {
  Router& R = routers_[size_t(router)];
  if (!R.active) {
    R.active = true;
    active_routers_.push_back(router);
  }
}

int FlitNetwork::new_worm(Worm w) {
  if (free_worms_.empty()) {
    worms_.push_back(std::move(w));
    return int(worms_.size()) - 1;
  }
  const int i = free_worms_.back();
  free_worms_.pop_back();
  worms_[size_t(i)] = std::move(w);
  return i;
}

int64_t FlitNetwork::next_cycle() const {
  if (moved_) return last_ + 1;  // an output or buffer slot may have freed up
  int64_t best = kIdle;
  if (pending_events_)
    for (int64_t d = 1; d < int64_t(wheel_.size()); ++d)
      if (!wheel_[size_t((last_ + d) % int64_t(wheel_.size()))].empty()) {
        best = last_ + d;
        break;
      }
  for (int s : active_sources_) {
    const Source& src = sources_[size_t(s)];
    // A source that waits for buffer space or a free VC is woken by a router moving a flit.
    if (src.vc < 0 && !src.queue.empty() && src.queue.front().cycle > last_)
      best = std::min(best, src.queue.front().cycle);
  }
  return best;
}

void FlitNetwork::apply(const Event& e, int64_t c) {
  switch (e.kind) {
    case kArrive: {
      InPort& ip = in_[size_t(e.a)];
      InVc& iv = ip.vcs[size_t(e.b)];
      if (e.c >= 0) iv.segs.push_back({e.c, 0});  // a head starts a new packet behind any others
      ++iv.segs.back().received;
      push_arrival(iv, ip.router, c);
      break;
    }
    case kCredit:
      ++out_[size_t(e.a)].credits[size_t(e.b)];
      break;
    case kEject:
      if (e.c) delivered_.push_back({e.packet, e.a, e.b});
      break;
    case kWake:
      break;
  }
}

void FlitNetwork::push_arrival(InVc& iv, int router, int64_t c) {
  iv.arrival[size_t(iv.arrived % p_.buffer_flits)] = c;
  ++iv.arrived;
  ++routers_[size_t(router)].buffered;
  activate(router);
  if (!p_.staged()) {
    schedule(c + p_.router_cycles, {kWake, router, 0, 0, 0});  // when this flit may leave
    return;
  }
  // Staged: a head is routed routing_delay later (then allocates a VC, which schedules its own
  // wake), a body flit may leave body_cycles later. A zero delay needs no wake: the router is
  // stepped in this cycle.
  if (p_.routing_delay > 0) schedule(c + p_.routing_delay, {kWake, router, 0, 0, 0});
  if (p_.body_cycles() != p_.routing_delay) schedule(c + p_.body_cycles(), {kWake, router, 0, 0, 0});
}

void FlitNetwork::inject(Source& s, int64_t c) {
  if (s.queue.empty()) return;
  Queued& q = s.queue.front();
  InPort& ip = in_[size_t(s.in_port)];
  if (s.vc < 0) {
    if (q.cycle > c) return;
    // Sources inject into class-0 VCs, round-robin, into the first one with room.
    const int per_class = p_.vcs / p_.vc_classes;
    for (int k = 0; k < per_class && s.vc < 0; ++k) {
      const int v = (s.next_vc + k) % per_class;
      if (ip.vcs[size_t(v)].buffered() < p_.buffer_flits) s.vc = v;
    }
    if (s.vc < 0) return;
    s.next_vc = (s.vc + 1) % per_class;
    Worm w{q.packet, q.flits, 1, 0, q.multicast, q.dests};
    if (topo_.routing != FlitTopology::Routing::kTable && q.dests.size() == 1) {
      w.table = false;
      if (topo_.routing == FlitTopology::Routing::kO1Turn) w.rclass = route_pick(topo_.route_seed, q.packet, 2);
      if (topo_.routing == FlitTopology::Routing::kValiant) w.via = route_pick(topo_.route_seed, q.packet, routers());
    }
    ip.vcs[size_t(s.vc)].segs.push_back({new_worm(std::move(w)), 0});
    s.injected = 0;
  }
  InVc& iv = ip.vcs[size_t(s.vc)];
  if (iv.buffered() >= p_.buffer_flits) return;
  ++iv.segs.back().received;
  push_arrival(iv, ip.router, c);
  ++s.flits;
  ++totals_.flits_injected;
  if (q.multicast) ++totals_.multicast_channel_flits;
  if (s.injected == 0 && q.first) first_injected_.push_back(q.packet);
  moved_ = true;
  if (++s.injected == q.flits) {
    if (q.last) last_injected_.push_back(q.packet);
    s.queue.pop_front();
    s.vc = -1;
  }
}

void FlitNetwork::route(int r, InVc& iv, int64_t c) {
  const Worm& w = worms_[size_t(iv.segs.front().worm)];
  if (!w.table) return route_unicast(r, iv, c);
  for (int d : w.dests) {
    const int ch = topo_.route[size_t(r)][size_t(d)];
    const int out = ch >= 0 ? channel_out_[size_t(ch)] : eject_out_[size_t(d)];
    auto it = std::find_if(iv.branches.begin(), iv.branches.end(), [&](const Branch& b) { return b.out == out; });
    // An ejection port has no VCs: its branch holds "VC 0" from routing on.
    if (it == iv.branches.end()) iv.branches.push_back({out, ch >= 0 ? -1 : 0, 0, {d}, c});
    else it->dests.push_back(d);
  }
  iv.routed = true;
  iv.replicating = iv.branches.size() > 1;
  if (iv.replicating) iv.store.assign(size_t(w.flits), 0);
}

void FlitNetwork::route_unicast(int r, InVc& iv, int64_t c) {
  // A unicast under O1TURN, Valiant or min_adapt: one branch, towards the destination's router
  // (Valiant phase 0: the intermediate one) in the worm's dimension order. min_adapt starts from
  // the escape (X-first) port; VC allocation may move it to the other productive port.
  Worm& w = worms_[size_t(iv.segs.front().worm)];
  const int d = w.dests[0], to = topo_.endpoint_router[size_t(d)];
  if (topo_.routing == FlitTopology::Routing::kValiant && w.rclass == 0 && r == w.via) {
    w.rclass = 1;  // phase 1 from here: the upper VC half, dateline classes start afresh
    w.vclass = 0;
    w.dim = -1;
  }
  const bool to_via = topo_.routing == FlitTopology::Routing::kValiant && w.rclass == 0;
  const int order = topo_.routing == FlitTopology::Routing::kO1Turn ? w.rclass : 0;
  const int ch = topo_.next_channel(r, to_via ? w.via : to, order);
  iv.branches.push_back({ch >= 0 ? channel_out_[size_t(ch)] : eject_out_[size_t(d)], ch >= 0 ? -1 : 0, 0, {d}, c});
  iv.routed = true;
}

int FlitNetwork::free_vc(const OutPort& o, int first, int count) const {
  // The lowest-numbered free VC of the range, or the first at or after the port's round-robin
  // pointer (which counts within the range).
  const bool rr = p_.vc_select == FlitParams::VcSelect::kRoundRobin;
  for (int k = 0; k < count; ++k) {
    const int v = first + (rr ? (o.next_vc + k) % count : k);
    if (!o.owned[size_t(v)]) return v;
  }
  return -1;
}

bool FlitNetwork::alloc_vc(OutPort& o, int first, int count, int& vc) {
  const int v = free_vc(o, first, count);
  if (v < 0) return false;
  o.owned[size_t(v)] = 1;
  vc = v;
  if (p_.vc_select == FlitParams::VcSelect::kRoundRobin) o.next_vc = (v - first + 1) % count;
  return true;
}

std::pair<int, int> FlitNetwork::vc_range(const OutPort& o, const Worm& w) const {
  // min_adapt (multicasts; unicasts choose in allocate_output): any VC, the escape VC 0 only once
  // in it. A packet in the escape VC waiting for an adaptive one would make the escape network
  // depend on adaptive packets, whose routes are not dimension-ordered: a cycle (found by the
  // burst tests on the cmesh).
  if (topo_.routing == FlitTopology::Routing::kMinAdapt) return {0, w.rclass ? 1 : p_.vcs};
  // The VCs of the class the packet travels in after this channel: route class x dateline class.
  const int per_class = p_.vcs / (p_.vc_classes * topo_.route_classes());
  return {(w.rclass * p_.vc_classes + next_class(o, w)) * per_class, per_class};
}

bool FlitNetwork::allocate_output(int r, Branch& b, const Worm& w, int64_t c) {
  if (w.table || topo_.routing != FlitTopology::Routing::kMinAdapt) {
    OutPort& o = out_[size_t(b.out)];
    const auto [first, count] = vc_range(o, w);
    return alloc_vc(o, first, count, b.vc);
  }
  // min_adapt. The lumped pipeline allocates in the cycle the flit crosses the switch, so a port
  // already used in this cycle is no choice there.
  const int to = topo_.endpoint_router[size_t(w.dests[0])];
  const int escape = channel_out_[size_t(topo_.next_channel(r, to, 0))];
  auto usable = [&](const OutPort& o) { return p_.staged() || o.used != c; };
  if (w.rclass == 0) {  // not in the escape VCs: an adaptive VC on the productive port with most room
    int best = -1, best_room = -1;
    for (int order = 0; order < 2; ++order) {
      const int ch = topo_.next_channel(r, to, order);
      if (ch < 0) continue;
      const int op = channel_out_[size_t(ch)];
      const OutPort& o = out_[size_t(op)];
      if (op == best || !usable(o) || free_vc(o, 1, p_.vcs - 1) < 0) continue;
      int room = 0;
      for (int v = 1; v < p_.vcs; ++v) room += o.credits[size_t(v)];
      if (room > best_room) {
        best = op;
        best_room = room;
      }
    }
    if (best >= 0) {
      b.out = best;
      return alloc_vc(out_[size_t(best)], 1, p_.vcs - 1, b.vc);
    }
  }
  if (!usable(out_[size_t(escape)]) || !alloc_vc(out_[size_t(escape)], 0, 1, b.vc)) return false;
  b.out = escape;
  return true;
}

bool FlitNetwork::ready_staged(const Branch& b, const InVc& iv, int64_t c) const {
  if (b.sent >= iv.segs.front().received) return false;  // the flit has not arrived yet
  if (b.sent == 0) {
    if (b.vc < 0 || b.vc_at + p_.after_vc_alloc() > c) return false;  // head: VC allocation, then the switch
  } else if (arrival_of(iv, b.sent) + p_.body_cycles() > c) {
    return false;  // body: still in switch allocation or traversal
  }
  const OutPort& o = out_[size_t(b.out)];
  return o.endpoint >= 0 || o.credits[size_t(b.vc)] > 0;
}

bool FlitNetwork::can_send(Branch& b, const InVc& iv, int64_t c) {
  if (p_.staged()) return out_[size_t(b.out)].used != c && ready_staged(b, iv, c);
  if (b.sent >= iv.segs.front().received) return false;  // the flit has not arrived yet
  if (arrival_of(iv, b.sent) + p_.router_cycles > c) return false;  // still in the pipeline
  const OutPort& o = out_[size_t(b.out)];
  const Worm& w = worms_[size_t(iv.segs.front().worm)];
  const bool adaptive = b.vc < 0 && !w.table && topo_.routing == FlitTopology::Routing::kMinAdapt;
  if (o.used == c && !adaptive) return false;  // one flit per channel per cycle
  if (o.endpoint >= 0) return true;  // destinations always accept
  // Lumped pipeline: VC allocation in the cycle the head traverses the switch (min_adapt: on a
  // productive port not used in this cycle, which becomes b.out).
  if (b.vc < 0 && !allocate_output(o.router, b, w, c)) return false;
  return out_[size_t(b.out)].credits[size_t(b.vc)] > 0;
}

void FlitNetwork::send(Branch& b, InVc& iv, int64_t c) {
  const Worm w = worms_[size_t(iv.segs.front().worm)];  // a copy: new_worm() below may reallocate the pool
  const int s = b.sent++;
  const bool head = s == 0, tail = s == w.flits - 1;
  OutPort& o = out_[size_t(b.out)];
  o.used = c;
  ++o.flits;
  if (w.multicast) ++totals_.multicast_channel_flits;
  if (o.endpoint >= 0) {
    ++totals_.eject_flits;
    schedule(c + p_.eject(), {kEject, o.endpoint, w.hops, tail ? 1 : 0, w.packet});
    return;
  }
  ++totals_.link_flits;
  ++o.vc_flits[size_t(b.vc)];
  --o.credits[size_t(b.vc)];
  if (tail) o.owned[size_t(b.vc)] = 0;  // the next packet may follow into the downstream buffer
  int nw = -1;
  if (head) {
    // min_adapt: once in the escape VC, always in the escape VCs (unicast and multicast).
    const bool escaped = topo_.routing == FlitTopology::Routing::kMinAdapt && b.vc == 0;
    nw = new_worm({w.packet, w.flits, w.hops + 1, next_class(o, w), w.multicast, b.dests, o.dim, w.table,
                   escaped ? 1 : w.rclass, w.via});
  }
  schedule(c + p_.link_cycles, {kArrive, o.down, b.vc, nw, 0});
}

void FlitNetwork::replicate(InPort& ip, int vc, int64_t c) {
  // A packet that splits here leaves the input buffer as soon as each flit is through the
  // pipeline, into a store the branches read from independently. Without it a blocked branch
  // would hold the flits its siblings need and the channel behind them: the classic deadlock
  // of tree multicast under wormhole switching. With it every wait follows the routing order.
  InVc& iv = ip.vcs[size_t(vc)];
  while (iv.freed < iv.segs.front().received && arrival_of(iv, iv.freed) + p_.body_cycles() <= c) {
    iv.store[size_t(iv.freed)] = arrival_of(iv, iv.freed);
    ++iv.freed;
    if (ip.upstream >= 0) schedule(c + p_.credit_cycles(), {kCredit, ip.upstream, vc, 0, 0});
    moved_ = true;  // a source sees the room at once
  }
}

void FlitNetwork::free_flits(InPort& ip, int vc, int64_t c) {
  InVc& iv = ip.vcs[size_t(vc)];
  const int worm = iv.segs.front().worm;
  const int flits = worms_[size_t(worm)].flits;
  int sent = flits;
  for (const Branch& b : iv.branches) sent = std::min(sent, b.sent);
  while (iv.done < sent) {
    ++iv.done;
    --routers_[size_t(ip.router)].buffered;
    if (iv.replicating) continue;  // its buffer slot was released by replicate()
    ++iv.freed;
    if (ip.upstream >= 0) schedule(c + p_.credit_cycles(), {kCredit, ip.upstream, vc, 0, 0});
  }
  if (iv.done == flits) {  // the front packet has left: the next one (if any) moves up
    free_worms_.push_back(worm);
    worms_[size_t(worm)].dests.clear();
    iv.segs.pop_front();
    iv.front_base += flits;
    iv.freed = iv.done = 0;
    iv.routed = iv.replicating = false;
    iv.branches.clear();
  }
}

void FlitNetwork::route_and_allocate_vcs(int r, int64_t c) {
  // Staged pipeline: route computation routing_delay after a head arrives, then VC allocation
  // (inputs in rotating order, so that no input always wins a contested VC); replication.
  Router& R = routers_[size_t(r)];
  const int n = int(R.ins.size());
  const bool separable = p_.vc_allocator != FlitParams::VcAllocator::kGreedy;
  va_req_.clear();
  for (int k = 0; k < n; ++k) {
    const int local = (R.rr + k) % n;
    InPort& ip = in_[size_t(R.ins[size_t(local)])];
    for (int v = 0; v < p_.vcs; ++v) {
      InVc& iv = ip.vcs[size_t(v)];
      if (!iv.pending()) continue;
      if (!iv.routed) {
        if (arrival_of(iv, 0) + p_.routing_delay > c) continue;
        route(r, iv, c);
        // An ejection branch holds its "VC" from routing on: its head may leave this much later.
        for (const Branch& b : iv.branches)
          if (b.vc >= 0) {
            schedule(c + p_.after_vc_alloc(), {kWake, r, 0, 0, 0});
            break;
          }
      }
      const Worm& w = worms_[size_t(iv.segs.front().worm)];
      for (size_t j = 0; j < iv.branches.size(); ++j) {
        Branch& b = iv.branches[j];
        if (b.vc >= 0) continue;
        if (separable) {
          const auto [first, count] = vc_range(out_[size_t(b.out)], w);
          va_req_.push_back({&iv, int(j), local * p_.vcs + v, first, count});
          continue;
        }
        if (!allocate_output(r, b, w, c)) continue;
        b.vc_at = c;
        schedule(c + p_.after_vc_alloc(), {kWake, r, 0, 0, 0});
      }
      if (iv.replicating) replicate(ip, v, c);
    }
  }
  if (!va_req_.empty()) allocate_vcs_separable(r, c);
}

void FlitNetwork::allocate_vcs_separable(int r, int64_t c) {
  // Separable VC allocation, one iteration (BookSim's vc_allocator): every request is a head's
  // branch asking for any free VC of its class on its output port. Output VCs arbitrate among
  // requests by router-local input VC, round robin from their pointer (va_arb).
  // - input-first: each request nominates one free VC (the one vc_select would give it); each
  //   nominated VC goes to one nominee; a loser waits for the next cycle even if another VC of its
  //   class is free.
  // - output-first: each free VC grants one request that may use it; each request accepts one
  //   grant (from its accept pointer); pointers move past the winner on every grant and accept.
  // - iSLIP: as output-first, but a VC's pointer moves only when its grant is accepted.
  const int ids = int(routers_[size_t(r)].ins.size()) * p_.vcs;
  auto dist = [ids](int id, int from) { return (id - from + ids) % ids; };
  const auto kind = p_.vc_allocator;
  const size_t n = va_req_.size();
  auto out_of = [&](const VcRequest& q) -> OutPort& { return out_[size_t(q.iv->branches[size_t(q.branch)].out)]; };
  for (const VcRequest& q : va_req_) {
    OutPort& o = out_of(q);
    if (o.va_arb.empty()) o.va_arb.assign(size_t(p_.vcs), 0);
  }
  va_pick_.assign(n, -1);
  if (kind == FlitParams::VcAllocator::kInputFirst) {
    std::vector<int> nominee(n, -1);
    for (size_t a = 0; a < n; ++a) nominee[a] = free_vc(out_of(va_req_[a]), va_req_[a].first, va_req_[a].count);
    for (size_t a = 0; a < n; ++a) {
      if (nominee[a] < 0) continue;
      const OutPort& o = out_of(va_req_[a]);
      const int from = o.va_arb[size_t(nominee[a])];
      bool wins = true;
      for (size_t b = 0; b < n && wins; ++b)
        if (b != a && nominee[b] == nominee[a] && &out_of(va_req_[b]) == &o &&
            dist(va_req_[b].id, from) < dist(va_req_[a].id, from))
          wins = false;
      if (wins) va_pick_[a] = nominee[a];
    }
  } else {
    // grant[a]: the VCs granting request a, as a bit mask (vcs <= 16).
    std::vector<uint32_t> granted(n, 0);
    for (size_t a = 0; a < n; ++a) {
      const VcRequest& q = va_req_[a];
      const OutPort& o = out_of(q);
      for (int vc = q.first; vc < q.first + q.count; ++vc) {
        if (o.owned[size_t(vc)]) continue;
        // Does this VC grant request a? Only if no other request for it comes first.
        const int from = o.va_arb[size_t(vc)];
        bool first = true;
        for (size_t b = 0; b < n && first; ++b) {
          const VcRequest& qb = va_req_[b];
          if (b != a && &out_of(qb) == &o && vc >= qb.first && vc < qb.first + qb.count &&
              dist(qb.id, from) < dist(q.id, from))
            first = false;
        }
        if (first) granted[a] |= 1u << vc;
      }
    }
    if (kind == FlitParams::VcAllocator::kOutputFirst)
      for (size_t a = 0; a < n; ++a)
        for (int vc = 0; vc < p_.vcs; ++vc)
          if (granted[a] >> vc & 1) out_of(va_req_[a]).va_arb[size_t(vc)] = (va_req_[a].id + 1) % ids;
    for (size_t a = 0; a < n; ++a) {
      if (!granted[a]) continue;
      const VcRequest& q = va_req_[a];
      for (int k = 0; k < p_.vcs; ++k) {
        const int vc = (q.iv->va_accept + k) % p_.vcs;
        if (granted[a] >> vc & 1) {
          va_pick_[a] = vc;
          break;
        }
      }
    }
  }
  bool lost = false, won = false;
  for (size_t a = 0; a < n; ++a) {
    const VcRequest& q = va_req_[a];
    const int vc = va_pick_[a];
    if (vc < 0) {
      lost = true;
      continue;
    }
    won = true;
    Branch& b = q.iv->branches[size_t(q.branch)];
    OutPort& o = out_[size_t(b.out)];
    o.owned[size_t(vc)] = 1;
    b.vc = vc;
    b.vc_at = c;
    if (p_.vc_select == FlitParams::VcSelect::kRoundRobin) o.next_vc = (vc - q.first + 1) % q.count;
    if (kind != FlitParams::VcAllocator::kOutputFirst) o.va_arb[size_t(vc)] = (q.id + 1) % ids;
    if (kind != FlitParams::VcAllocator::kInputFirst) q.iv->va_accept = (vc + 1) % p_.vcs;
    schedule(c + p_.after_vc_alloc(), {kWake, r, 0, 0, 0});
  }
  // A request that lost while VCs were handed out may find one free next cycle without any flit
  // moving: step the router again then.
  if (lost && won) schedule(c + 1, {kWake, r, 0, 0, 0});
}

template <class F>
void FlitNetwork::for_each_vc(InPort& ip, int sub, F&& f) {
  // The VCs of switch input `sub` of a port (v mod input_speedup == sub), in round-robin order from
  // the one after the last that sent; f returns true to stop.
  const int s = p_.input_speedup, start = vc_pointer(ip, sub);
  for (int j = 0, v = start; j < p_.vcs; ++j, v = v + 1 == p_.vcs ? 0 : v + 1)
    if ((s == 1 || v % s == sub) && f(v)) return;
}

bool FlitNetwork::allocate_switch(int r, int64_t c) {
  // Staged switch allocation on a request matrix: rows are the router's switch inputs (each input
  // port has input_speedup of them, VC v on row v mod input_speedup), columns its output ports.
  // A row requests a column when one of its VCs has a flit ready for that output; the VC is the
  // first such one in the row's round-robin order. At most one flit per output per cycle, one VC
  // per row per cycle (a VC may feed several outputs: multicast replication in the switch).
  Router& R = routers_[size_t(r)];
  const int s = p_.input_speedup, rows = int(R.ins.size()) * s, cols = int(R.outs.size());
  req_.assign(size_t(rows * cols), -1);
  row_vc_.assign(size_t(rows), -1);
  col_row_.assign(size_t(cols), -1);
  auto port = [&](int row) -> InPort& { return in_[size_t(R.ins[size_t(row / s)])]; };
  auto req = [&](int row, int col) -> int& { return req_[size_t(row * cols + col)]; };
  auto ring_dist = [](int x, int from, int n) { return (x - from + n) % n; };
  const auto kind = p_.sw_allocator;
  // The matrix allocators see every request; input-first only each row's nominee (below).
  if (kind != FlitParams::SwAllocator::kInputFirst) {
    bool any = false;
    for (int row = 0; row < rows; ++row) {
      InPort& ip = port(row);
      for_each_vc(ip, row % s, [&](int v) {
        const InVc& iv = ip.vcs[size_t(v)];
        if (!iv.pending() || !iv.routed) return false;
        for (const Branch& b : iv.branches)
          if (ready_staged(b, iv, c)) {
            int& q = req(row, out_[size_t(b.out)].local);
            if (q < 0) q = v;
            any = true;
          }
        return false;
      });
    }
    if (!any) return false;
  }
  const bool first_only = kind == FlitParams::SwAllocator::kIslip;
  if (kind == FlitParams::SwAllocator::kWavefront) {
    // Wavefront: cells (row, col) on one diagonal (row + col = d mod N) share no row or column,
    // so a diagonal is granted at once; diagonals are swept from the priority one, which moves
    // on by one every cycle the router sends.
    const int N = std::max(rows, cols);
    for (int d = 0; d < N; ++d) {
      const int diag = (R.diag + d) % N;
      for (int row = 0; row < rows; ++row) {
        const int col = (diag - row % N + N) % N;
        if (col >= cols || row_vc_[size_t(row)] >= 0 || col_row_[size_t(col)] >= 0 || req(row, col) < 0) continue;
        row_vc_[size_t(row)] = req(row, col);
        col_row_[size_t(col)] = row;
      }
    }
    R.diag = (R.diag + 1) % N;
  } else if (kind == FlitParams::SwAllocator::kInputFirst) {
    // Separable input-first: each unmatched row nominates one VC, the first in its round-robin
    // order with a flit ready for a free output; each free output grants one nominating row (its
    // own round-robin pointer, which moves past the row when the flit is sent); a row is granted
    // every output its nominee asked for that chose it. A row whose nominee lost everything sends
    // nothing in this iteration, even if another of its VCs could have.
    for (int it = 0; it < p_.alloc_iters; ++it) {
      grant_.assign(size_t(cols), -1);
      bool progress = false;
      nominee_.assign(size_t(rows), -1);
      for (int row = 0; row < rows; ++row) {
        if (row_vc_[size_t(row)] >= 0) continue;
        InPort& ip = port(row);
        for_each_vc(ip, row % s, [&](int v) {
          const InVc& iv = ip.vcs[size_t(v)];
          if (!iv.pending() || !iv.routed) return false;
          for (const Branch& b : iv.branches) {
            const int col = out_[size_t(b.out)].local;
            if (col_row_[size_t(col)] >= 0 || !ready_staged(b, iv, c)) continue;
            nominee_[size_t(row)] = v;
            int& g = grant_[size_t(col)];
            const int arb = out_[size_t(b.out)].arb;
            if (g < 0 || ring_dist(row, arb, rows) < ring_dist(g, arb, rows)) g = row;
          }
          return nominee_[size_t(row)] >= 0;
        });
      }
      for (int col = 0; col < cols; ++col) {
        const int row = grant_[size_t(col)];
        if (row < 0) continue;
        row_vc_[size_t(row)] = nominee_[size_t(row)];
        col_row_[size_t(col)] = row;
        progress = true;
      }
      if (!progress) break;
    }
  } else {
    // Output-first and iSLIP: request, grant (each free output picks one requesting row from its
    // pointer), accept (each row picks one granting output from its accept pointer). Output-first
    // moves an output's pointer past every row it grants; iSLIP only past a row that accepts, and
    // only in the first iteration, which desynchronises the outputs (McKeown, IEEE/ACM ToN 1999).
    for (int it = 0; it < p_.alloc_iters; ++it) {
      grant_.assign(size_t(cols), -1);
      for (int col = 0; col < cols; ++col) {
        if (col_row_[size_t(col)] >= 0) continue;
        OutPort& o = out_[size_t(R.outs[size_t(col)])];
        int& g = grant_[size_t(col)];
        for (int row = 0; row < rows; ++row)
          if (row_vc_[size_t(row)] < 0 && req(row, col) >= 0 &&
              (g < 0 || ring_dist(row, o.arb, rows) < ring_dist(g, o.arb, rows)))
            g = row;
        if (g >= 0 && !first_only) o.arb = (g + 1) % rows;
      }
      bool progress = false;
      for (int row = 0; row < rows; ++row) {
        if (row_vc_[size_t(row)] >= 0) continue;
        int& acc = port(row).accept[size_t(row % s)];
        int best = -1;
        for (int col = 0; col < cols; ++col)
          if (grant_[size_t(col)] == row && (best < 0 || ring_dist(col, acc, cols) < ring_dist(best, acc, cols)))
            best = col;
        if (best < 0) continue;
        row_vc_[size_t(row)] = req(row, best);
        col_row_[size_t(best)] = row;
        progress = true;
        if (!first_only || it == 0) {
          acc = (best + 1) % cols;
          if (first_only) out_[size_t(R.outs[size_t(best)])].arb = (row + 1) % rows;
        }
      }
      if (!progress) break;
    }
  }
  if (kind != FlitParams::SwAllocator::kInputFirst) {
    // The matching above is one-to-one; a multicast VC also feeds its other outputs still free
    // (the switch replicates the flit).
    for (int row = 0; row < rows; ++row) {
      const int v = row_vc_[size_t(row)];
      if (v < 0) continue;
      const InVc& iv = port(row).vcs[size_t(v)];
      if (iv.branches.size() < 2) continue;
      for (const Branch& b : iv.branches) {
        const int col = out_[size_t(b.out)].local;
        if (col_row_[size_t(col)] < 0 && ready_staged(b, iv, c)) col_row_[size_t(col)] = row;
      }
    }
  }
  bool sent_any = false;
  for (int row = 0; row < rows; ++row) {
    const int v = row_vc_[size_t(row)];
    if (v < 0) continue;
    InPort& ip = port(row);
    InVc& iv = ip.vcs[size_t(v)];
    bool sent = false;
    for (Branch& b : iv.branches) {
      OutPort& o = out_[size_t(b.out)];
      if (col_row_[size_t(o.local)] != row || o.used == c || !ready_staged(b, iv, c)) continue;
      send(b, iv, c);
      if (kind == FlitParams::SwAllocator::kInputFirst) o.arb = (row + 1) % rows;
      sent = true;
    }
    if (!sent) continue;
    free_flits(ip, v, c);
    vc_pointer(ip, row % s) = (v + 1) % p_.vcs;
    sent_any = true;
  }
  return sent_any;
}

void FlitNetwork::step_router(int r, int64_t c) {
  Router& R = routers_[size_t(r)];
  const int n = int(R.ins.size());
  if (p_.staged()) {
    route_and_allocate_vcs(r, c);
  } else {
    // Route computation for heads through the pipeline, and replication into the store; neither
    // uses the switch.
    for (int i : R.ins) {
      InPort& ip = in_[size_t(i)];
      for (int v = 0; v < p_.vcs; ++v) {
        InVc& iv = ip.vcs[size_t(v)];
        if (!iv.pending()) continue;
        if (!iv.routed) {
          if (arrival_of(iv, 0) + p_.router_cycles > c) continue;  // head not through the pipeline yet
          route(r, iv, c);
        }
        if (iv.replicating) replicate(ip, v, c);
      }
    }
  }
  if (p_.sw_allocator != FlitParams::SwAllocator::kGreedy) {
    if (allocate_switch(r, c)) {
      R.rr = (R.rr + 1) % n;
      moved_ = true;
    }
    return;
  }
  // Greedy allocation with rotating priorities: each input port forwards from at most one VC per
  // cycle (that VC may feed several outputs: multicast replication in the crossbar), and each
  // output takes at most one flit per cycle. An input whose first VC finds its output taken tries
  // its next VC, so the matching is maximal.
  bool sent_any = false;
  for (int k = 0; k < n; ++k) {
    InPort& ip = in_[size_t(R.ins[size_t((R.rr + k) % n)])];
    for (int j = 0; j < p_.vcs; ++j) {
      const int v = (ip.rr + j) % p_.vcs;
      InVc& iv = ip.vcs[size_t(v)];
      if (!iv.pending() || !iv.routed) continue;
      bool any = false;
      for (Branch& b : iv.branches)
        if (can_send(b, iv, c)) {
          send(b, iv, c);
          any = true;
        }
      if (!any) continue;
      free_flits(ip, v, c);
      ip.rr = (v + 1) % p_.vcs;
      sent_any = true;
      break;
    }
  }
  if (sent_any) {
    R.rr = (R.rr + 1) % n;
    moved_ = true;
  }
}

void FlitNetwork::step(int64_t c) {
  if (c <= last_ || c > next_cycle()) throw std::logic_error("FlitNetwork::step out of order");
  first_injected_.clear();
  last_injected_.clear();
  delivered_.clear();
  last_ = c;
  moved_ = false;
  std::vector<Event>& slot = wheel_[size_t(c % int64_t(wheel_.size()))];
  pending_events_ -= slot.size();
  due_.clear();
  due_.swap(slot);  // apply() schedules into later slots only, never into this cycle's
  for (const Event& e : due_) apply(e, c);
  for (int s : active_sources_) inject(sources_[size_t(s)], c);
  for (size_t i = 0; i < active_routers_.size(); ++i) step_router(active_routers_[i], c);
  auto idle_router = [&](int r) {
    if (routers_[size_t(r)].buffered > 0) return false;
    routers_[size_t(r)].active = false;
    return true;
  };
  active_routers_.erase(std::remove_if(active_routers_.begin(), active_routers_.end(), idle_router),
                        active_routers_.end());
  auto idle_source = [&](int s) {
    if (!sources_[size_t(s)].queue.empty()) return false;
    sources_[size_t(s)].active = false;
    return true;
  };
  active_sources_.erase(std::remove_if(active_sources_.begin(), active_sources_.end(), idle_source),
                        active_sources_.end());
}

std::vector<NocLink> FlitNetwork::links() const {
  std::vector<NocLink> out;
  for (const Source& s : sources_) out.push_back({s.name, "inject", s.flits, {}});  // no VCs at injection
  for (const OutPort& o : out_) out.push_back({o.name, o.endpoint >= 0 ? "eject" : "link", o.flits, o.vc_flits});
  return out;
}

}  // namespace ahbm
