#include "hw/noc/flit_network.h"

#include <algorithm>
#include <stdexcept>

namespace ahbm {

FlitNetwork::FlitNetwork(FlitTopology topo, const FlitParams& params, std::vector<std::string> endpoint_names)
    : topo_(std::move(topo)), p_(params), endpoint_names_(std::move(endpoint_names)) {
  const int R = topo_.routers(), E = int(endpoint_names_.size());
  routing_ = make_routing(topo_, p_);
  if (p_.router_cycles < 1 || p_.link_cycles < 1 || p_.buffer_flits < 1 || p_.vcs < 1 || p_.vc_classes < 1 ||
      p_.vcs % (p_.vc_classes * routing_->classes()) != 0 || p_.flit_bytes < 1 || p_.routing_delay < 0 || p_.vc_alloc_delay < 0 ||
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
    o.channel = int(channel_out_.size());
    o.dateline = ch.dateline;
    o.dim = ch.dim;
    if (ch.cycles < 0) throw std::invalid_argument("FlitNetwork: negative channel latency");
    o.cycles = ch.cycles > 0 ? ch.cycles : p_.link_cycles;
    o.credits.assign(size_t(p_.vcs), p_.buffer_flits);
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
  check_routes();
  // Each router's allocators: its switch inputs (input_speedup per input port) by its output
  // ports; its input VCs by its output ports' VCs.
  for (Router& router : routers_) {
    const int ins = int(router.ins.size()), outs = int(router.outs.size());
    if (p_.staged()) router.sw = make_switch_allocator(p_, ins * p_.input_speedup, outs);
    router.va = make_vc_allocator(p_, ins * p_.vcs, outs);
  }
  // Events lie at most this many cycles ahead: pipelines, channels, credits (released at switch
  // allocation: st_delay further).
  int link = p_.link_cycles;
  for (const OutPort& o : out_)
    if (o.endpoint < 0) link = std::max(link, o.cycles);
  const int lag = p_.release_lag();
  const int ahead = std::max({p_.router_cycles, link + lag, link + p_.credit_delay + lag, p_.eject() + lag,
                              p_.head_cycles(), p_.body_cycles(), p_.routing_delay});
  wheel_.resize(size_t(ahead + 1));
}

void FlitNetwork::check_routes() const {
  const int R = topo_.routers(), E = int(endpoint_names_.size());
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
  const int body = p_.body_cycles() - p_.release_lag();  // when it may win switch allocation
  if (body != p_.routing_delay) wake_at(router, c + body, c);
}

void FlitNetwork::inject(Source& s, int64_t c) {
  if (s.queue.empty()) return;
  Queued& q = s.queue.front();
  InPort& ip = in_[size_t(s.in_port)];
  if (s.vc < 0) {
    if (q.cycle > c) return;
    // Sources inject into class-0 VCs (BookSim's torus: into any VC), round-robin, into the first
    // one with room.
    const int per_class = topo_.inject_any_vc ? p_.vcs : p_.vcs / p_.vc_classes;
    for (int k = 0; k < per_class && s.vc < 0; ++k) {
      const int v = (s.next_vc + k) % per_class;
      if (ip.vcs[size_t(v)].buffered() < p_.buffer_flits) s.vc = v;
    }
    if (s.vc < 0) return;
    s.next_vc = (s.vc + 1) % per_class;
    Worm w{q.packet, q.flits, 1, 0, q.multicast, q.dests, -1, true, RouteState()};
    if (q.dests.size() == 1) w.table = !routing_->start(q.packet, w.route);
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
  // A unicast the routing function routes: one branch, towards the destination's router (Valiant
  // phase 0: the intermediate one). min_adapt starts from the escape (X-first) port; VC allocation
  // may move it to the other productive port.
  Worm& w = worms_[size_t(iv.segs.front().worm)];
  const int d = w.dests[0], rclass = w.route.rclass;
  const int ch = routing_->next(r, topo_.endpoint_router[size_t(d)], w.route);
  if (w.route.rclass != rclass) {  // a new route class is a network of its own: dateline classes start afresh
    w.vclass = 0;
    w.dim = -1;
  }
  iv.branches.push_back({ch >= 0 ? channel_out_[size_t(ch)] : eject_out_[size_t(d)], ch >= 0 ? -1 : 0, 0, {d}, c});
  iv.routed = true;
}

void FlitNetwork::request_vc(int r, const Branch& b, const Worm& w, int input, int64_t c) {
  options_.clear();
  const int to = w.table ? -1 : topo_.endpoint_router[size_t(w.dests[0])];
  routing_->options(r, to, out_[size_t(b.out)].channel, !w.table, w.route, Credits(*this), options_);
  VcAllocator& va = *routers_[size_t(r)].va;
  va.add_request(input);
  for (const RouteOption& opt : options_) {
    const OutPort& o = out_[size_t(channel_out_[size_t(opt.channel)])];
    // The lumped pipeline allocates in the cycle the head crosses the switch: a port already used
    // in this cycle is no choice there.
    if (!p_.staged() && o.used == c) continue;
    // Each route class's VCs split into the dateline classes, the class after this channel taken.
    const int per_class = opt.count / p_.vc_classes;
    va.add_option(o.local, opt.first + class_on(o, w, b.dests) * per_class, per_class, ~o.held);
  }
}

void FlitNetwork::take_vc(int r, Branch& b, int port, int vc) {
  b.out = routers_[size_t(r)].outs[size_t(port)];
  out_[size_t(b.out)].held |= uint64_t(1) << vc;
  b.vc = vc;
}

bool FlitNetwork::ready_staged(const Branch& b, const InVc& iv, int64_t c) const {
  // Released at switch allocation, a flit leaves its buffer when it wins the switch and reaches the
  // channel st_delay later (send()); otherwise it leaves when through switch traversal.
  const int lag = p_.release_lag();
  if (b.sent >= iv.segs.front().received) return false;  // the flit has not arrived yet
  if (b.sent == 0) {
    if (b.vc < 0 || b.vc_at + p_.after_vc_alloc() - lag > c) return false;  // head: VC allocation, then the switch
  } else if (arrival_of(iv, b.sent) + p_.body_cycles() - lag > c) {
    return false;  // body: still in switch allocation or traversal
  }
  const OutPort& o = out_[size_t(b.out)];
  return o.endpoint >= 0 || o.credits[size_t(b.vc)] > 0;
}

bool FlitNetwork::can_send_lumped(int r, Branch& b, const InVc& iv, int input, int64_t c) {
  if (b.sent >= iv.segs.front().received) return false;  // the flit has not arrived yet
  if (arrival_of(iv, b.sent) + p_.router_cycles > c) return false;  // still in the pipeline
  if (b.vc < 0) {
    // VC allocation in the cycle the head traverses the switch, on a port not used in this cycle
    // (min_adapt: either productive port, which becomes b.out).
    VcAllocator& va = *routers_[size_t(r)].va;
    va.clear();
    request_vc(r, b, worms_[size_t(iv.segs.front().worm)], input, c);
    va.allocate();
    if (va.vc_of(0) < 0) return false;
    take_vc(r, b, va.port_of(0), va.vc_of(0));
  } else {
    const OutPort& o = out_[size_t(b.out)];
    if (o.used == c) return false;     // one flit per channel per cycle
    if (o.endpoint >= 0) return true;  // destinations always accept
  }
  return out_[size_t(b.out)].credits[size_t(b.vc)] > 0;
}

void FlitNetwork::send(Branch& b, InVc& iv, int64_t c) {
  const Worm w = worms_[size_t(iv.segs.front().worm)];  // a copy: new_worm() below may reallocate the pool
  const int s = b.sent++;
  const bool head = s == 0, tail = s == w.flits - 1;
  const int lag = p_.release_lag();  // cycles until the flit is on the channel
  OutPort& o = out_[size_t(b.out)];
  o.used = c;
  ++o.flits;
  if (w.multicast) ++totals_.multicast_channel_flits;
  if (o.endpoint >= 0) {
    ++totals_.eject_flits;
    schedule(c + lag + p_.eject(), {kEject, o.endpoint, w.hops, tail ? 1 : 0, w.packet});
    return;
  }
  ++totals_.link_flits;
  ++o.vc_flits[size_t(b.vc)];
  --o.credits[size_t(b.vc)];
  if (tail) o.held &= ~(uint64_t(1) << b.vc);  // the next packet may follow into the downstream buffer
  int nw = -1;
  if (head) {
    RouteState route = w.route;
    routing_->left(b.vc, route);
    nw = new_worm({w.packet, w.flits, w.hops + 1, class_on(o, w, b.dests), w.multicast, b.dests, o.dim, w.table, route});
  }
  schedule(c + lag + o.cycles, {kArrive, o.down, b.vc, nw, 0});
}

void FlitNetwork::replicate(InPort& ip, int vc, int64_t c) {
  // A packet that splits here leaves the input buffer as soon as each flit is through the
  // pipeline, into a store the branches read from independently. Without it a blocked branch
  // would hold the flits its siblings need and the channel behind them: the classic deadlock
  // of tree multicast under wormhole switching. With it every wait follows the routing order.
  InVc& iv = ip.vcs[size_t(vc)];
  while (iv.freed < iv.segs.front().received && arrival_of(iv, iv.freed) + p_.body_cycles() - p_.release_lag() <= c) {
    iv.store[size_t(iv.freed)] = arrival_of(iv, iv.freed);
    ++iv.freed;
    if (ip.upstream >= 0) schedule(c + credit_cycles(ip), {kCredit, ip.upstream, vc, 0, 0});
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
    // Released at switch allocation, the credit leaves then too (as BookSim's): the loop from one
    // switch allocation to the next is the same as from traversal to traversal.
    if (ip.upstream >= 0) schedule(c + credit_cycles(ip), {kCredit, ip.upstream, vc, 0, 0});
  }
  if (iv.done == flits) {  // the front packet has left: the next one (if any) moves up
    free_worms_.push_back(worm);
    worms_[size_t(worm)].dests.clear();
    iv.segs.pop_front();
    iv.front_base += flits;
    iv.freed = iv.done = 0;
    iv.routed = iv.replicating = false;
    iv.branches.clear();
    if (p_.release_lag() > 0) {  // the next packet is routed from now on, as in BookSim
      iv.front_at = c;
      if (!iv.segs.empty()) wake_at(ip.router, c + p_.routing_delay, c + 1);
    }
  }
}

void FlitNetwork::route_and_allocate_vcs(int r, int64_t c) {
  // Staged pipeline: route computation routing_delay after a head arrives, then VC requests (inputs
  // in rotating order: the order in which the greedy allocator serves them and the separable ones
  // move the VC selection pointer); replication.
  Router& R = routers_[size_t(r)];
  const int n = int(R.ins.size());
  R.va->clear();
  va_branch_.clear();
  for (int k = 0; k < n; ++k) {
    const int local = (R.rr + k) % n;
    InPort& ip = in_[size_t(R.ins[size_t(local)])];
    for (int v = 0; v < p_.vcs; ++v) {
      InVc& iv = ip.vcs[size_t(v)];
      if (!iv.pending()) continue;
      if (!iv.routed) {
        if (arrival_of(iv, 0) + p_.routing_delay > c) continue;
        if (p_.release_lag() > 0 && iv.front_at + p_.routing_delay > c) continue;  // routing starts at the front
        route(r, iv, c);
        // An ejection branch holds its "VC" from routing on: its head may leave this much later.
        for (const Branch& b : iv.branches)
          if (b.vc >= 0) {
            wake_at(r, c + p_.after_vc_alloc() - p_.release_lag(), c);
            break;
          }
      }
      const Worm& w = worms_[size_t(iv.segs.front().worm)];
      for (size_t j = 0; j < iv.branches.size(); ++j) {
        if (iv.branches[j].vc >= 0) continue;
        request_vc(r, iv.branches[j], w, local * p_.vcs + v, c);
        va_branch_.push_back({&iv, int(j)});
      }
      if (iv.replicating) replicate(ip, v, c);
    }
  }
  if (!va_branch_.empty()) allocate_vcs(r, c);
}

void FlitNetwork::allocate_vcs(int r, int64_t c) {
  VcAllocator& va = *routers_[size_t(r)].va;
  va.allocate();
  for (size_t i = 0; i < va_branch_.size(); ++i) {
    if (va.vc_of(i) < 0) continue;
    Branch& b = va_branch_[i].first->branches[size_t(va_branch_[i].second)];
    take_vc(r, b, va.port_of(i), va.vc_of(i));
    b.vc_at = c;
    wake_at(r, c + p_.after_vc_alloc() - p_.release_lag(), c);
  }
  // A request that lost while VCs were handed out may find one free next cycle without any flit
  // moving: step the router again then.
  if (va.retry()) schedule(c + 1, {kWake, r, 0, 0, 0});
}

template <class F>
void FlitNetwork::for_each_vc(InPort& ip, int sub, F&& f) {
  // The VCs of switch input `sub` of a port (v mod input_speedup == sub), in round-robin order from
  // the one after the last that sent; f returns true to stop.
  const int s = p_.input_speedup, start = vc_pointer(ip, sub);
  for (int j = 0, v = start; j < p_.vcs; ++j, v = v + 1 == p_.vcs ? 0 : v + 1)
    if ((s == 1 || v % s == sub) && f(v)) return;
}

bool FlitNetwork::request_switch(int r, int64_t c) {
  // The request matrix: rows are the router's switch inputs (each input port has input_speedup of
  // them, VC v on row v mod input_speedup), columns its output ports. A row asks for a column for
  // each of its VCs with a flit ready for that output, in the row's round-robin order of VCs.
  Router& R = routers_[size_t(r)];
  SwitchAllocator& sw = *R.sw;
  const int s = p_.input_speedup;
  sw.clear();
  for (int row = 0; row < sw.rows(); ++row) {
    InPort& ip = in_[size_t(R.ins[size_t(row / s)])];
    for_each_vc(ip, row % s, [&](int v) {
      const InVc& iv = ip.vcs[size_t(v)];
      if (!iv.pending() || !iv.routed) return false;
      for (const Branch& b : iv.branches)
        if (ready_staged(b, iv, c)) sw.add_request(row, out_[size_t(b.out)].local, v);
      return false;
    });
  }
  return sw.has_requests();
}

bool FlitNetwork::allocate_switch(int r, int64_t c) {
  // Staged switch allocation: at most one flit per output per cycle, one VC per row per cycle (a VC
  // may feed several outputs: multicast replication in the switch). Each row that won sends its
  // VC's flit on every output granted to it.
  if (!request_switch(r, c)) return false;
  Router& R = routers_[size_t(r)];
  SwitchAllocator& sw = *R.sw;
  sw.allocate();
  const int s = p_.input_speedup, rows = sw.rows();
  bool sent_any = false;
  for (int k = 0; k < rows; ++k) {
    const int row = (sw.first_row() + k) % rows, v = sw.label_of(row);
    if (v < 0) continue;
    InPort& ip = in_[size_t(R.ins[size_t(row / s)])];
    InVc& iv = ip.vcs[size_t(v)];
    bool sent = false;
    for (Branch& b : iv.branches) {
      const OutPort& o = out_[size_t(b.out)];
      if (sw.row_of(o.local) != row || o.used == c || !ready_staged(b, iv, c)) continue;
      send(b, iv, c);
      sent = true;
    }
    if (!sent) continue;
    free_flits(ip, v, c);
    vc_pointer(ip, row % s) = (v + 1) % p_.vcs;
    sent_any = true;
  }
  return sent_any;
}

void FlitNetwork::route_lumped(int r, int64_t c) {
  // Route computation for heads through the pipeline, and replication into the store; neither
  // uses the switch.
  for (int i : routers_[size_t(r)].ins) {
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

bool FlitNetwork::traverse_lumped(int r, int64_t c) {
  // Greedy allocation with rotating priorities, done in place: each input port forwards from at
  // most one VC per cycle (that VC may feed several outputs: multicast replication in the
  // crossbar), and each output takes at most one flit per cycle. An input whose first VC finds its
  // output taken tries its next VC, so the matching is maximal. The lumped pipeline cannot collect
  // a request matrix first (as the staged one does for GreedySwitchAllocator): a head allocates
  // its output VC as its input's turn comes, among the ports no earlier input used in this cycle.
  Router& R = routers_[size_t(r)];
  const int n = int(R.ins.size());
  bool sent_any = false;
  for (int k = 0; k < n; ++k) {
    const int local = (R.rr + k) % n;
    InPort& ip = in_[size_t(R.ins[size_t(local)])];
    for (int j = 0; j < p_.vcs; ++j) {
      const int v = (ip.rr + j) % p_.vcs;
      InVc& iv = ip.vcs[size_t(v)];
      if (!iv.pending() || !iv.routed) continue;
      bool any = false;
      for (Branch& b : iv.branches)
        if (can_send_lumped(r, b, iv, local * p_.vcs + v, c)) {
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
  return sent_any;
}

void FlitNetwork::step_router(int r, int64_t c) {
  bool sent;
  if (p_.staged()) {
    route_and_allocate_vcs(r, c);
    sent = allocate_switch(r, c);
  } else {
    route_lumped(r, c);
    sent = traverse_lumped(r, c);
  }
  if (sent) {
    Router& R = routers_[size_t(r)];
    R.rr = (R.rr + 1) % int(R.ins.size());
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
