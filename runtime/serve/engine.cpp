#include "runtime/serve/engine.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <unordered_map>

#include "hw/common/error.h"
#include "hw/common/timing.h"
#include "runtime/kv/page_manager.h"
#include "runtime/kv/placement.h"
#include "runtime/serve/scheduler.h"
#include "runtime/session.h"
#include "hw/chip/energy.h"
#include "runtime/step_record.h"
#include "runtime/step_runner.h"

namespace ahbm::serve {

namespace {

// Appends the raw bytes of trivially copyable values to a key.
struct KeyWriter {
  std::string s;
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    s.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  void str(const std::string& v) {
    put(v.size());
    s += v;
  }
  template <class T>
  void vec(const std::vector<T>& v) {
    put(v.size());
    for (const T& x : v) put(x);
  }
};

enum class AgentState { run, tool, done };

// What the step cache keeps of a simulated step.
struct StepCost {
  double ns = 0;
  uint64_t hbm_bytes = 0;  // read from every PE's HBM slice
  double energy_j = 0;     // the step's energy reading (hw/chip/energy.h): dynamic + static over ns
};

// A parent or a branch of a workflow, with the work it has left.
struct Agent {
  StepAgent sa;
  int request = -1;     // index into ServeResult::requests
  int prefill_left = 0;  // tokens to prefill in its next step
  int decode_left = 0;
  AgentState state = AgentState::run;
  double tool_until = 0;
  bool has_work() const { return state == AgentState::run && (prefill_left > 0 || decode_left > 0); }
};

struct Flow {
  const WorkflowSpec* spec = nullptr;
  int record = 0;
  bool arrived = false, admitted = false, done = false;
  Agent parent;
  std::vector<Agent> branches;
  int round = 0;  // next round to fan out
  bool in_round = false, answering = false;
  int branches_done = 0;
  int64_t reserved = 0;
  int64_t remaining = 0;  // tokens left to prefill and decode
  // Pages after the prompt: the least-loaded PE, ties broken by the workflow's own cursor (as a
  // run's session): a workflow alone on the chip places its pages the same wherever it runs.
  BalancedPlacer placer;
  // KvPageManager::writes() after the last step it took part in: its next step is charged the
  // KV written since (its appends, copy-on-write copies, a no-sharing round's fork copies).
  uint64_t kv_since = 0;
};

// Pages a workflow may hold at once (admission reserves them, so a run never runs out): its
// parent's whole sequence, plus the largest round's branches, each a copy of the parent's
// partly filled last page (copy-on-write, up to page_tokens - 1 tokens) and its own tokens.
// Without sharing, each branch holds a copy of the parent's pages as well.
int64_t reservation(const WorkflowSpec& w, int page_tokens, bool share) {
  int64_t parent_tokens = w.prompt_tokens + int64_t(w.rounds.size()) * w.join_tokens + w.answer_tokens;
  const int64_t parent_pages = int64_t(ceil_div(uint64_t(parent_tokens), uint64_t(page_tokens)));
  int64_t branch_pages = 0;
  for (const auto& round : w.rounds) {
    int64_t pages = 0;
    for (const BranchSpec& b : round)
      pages += int64_t(ceil_div(uint64_t(page_tokens - 1 + b.new_tokens + b.decode_tokens), uint64_t(page_tokens))) +
               (share ? 0 : parent_pages);
    branch_pages = std::max(branch_pages, pages);
  }
  return parent_pages + branch_pages;
}

int64_t work_tokens(const WorkflowSpec& w) {
  int64_t n = w.prompt_tokens - w.cached_tokens + int64_t(w.rounds.size()) * w.join_tokens + w.answer_tokens;
  for (const auto& round : w.rounds)
    for (const BranchSpec& b : round) n += b.new_tokens + b.decode_tokens;
  return n;
}

class Engine {
 public:
  Engine(const Workload& w, const HwConfig& hw, const ServeOptions& opt)
      : w_(w), hw_(hw), opt_(opt), specs_(expand(w)),
        policy_(schedulers_.get(opt.scheduler.empty() ? w.scheduler.policy : opt.scheduler,
                                opt.scheduler.empty() ? w.file + ": scheduler.policy" : "--scheduler")),
        pool_(pool_pages()), kv_(hw.pes_per_group(), pool_, w.scenario.kv.page_tokens, capacity_note_) {
    StepSettings set;
    set.seed = w.scenario.seed;
    set.sim.vcd = false;
    set.sim.hw_file = opt.hw_file;
    set.sim.nocs = opt.nocs;
    set.sims = opt.sims ? opt.sims : &own_sims_;
    runner_.emplace(w_.scenario, hw_, set);
    hw_key_ = to_json(hw_).dump() + "|policy=" + set.policy + "|launch=" + set.launch;
  }

  ServeResult run();

 private:
  int64_t pool_pages() {
    const uint64_t slot = kv_page_bytes(w_.scenario, hw_.groups);
    const int64_t pages = int64_t(hw_.pe.hbm.capacity_bytes / slot);
    capacity_note_ = opt_.hw_file + ": pe.hbm.capacity_bytes = " + std::to_string(hw_.pe.hbm.capacity_bytes) +
                     " holds " + std::to_string(pages) + " pages of " + std::to_string(slot) + " bytes (" +
                     w_.scenario_file + ": kv.page_tokens x model.head_dim x 2 (K, V) x storage bytes x model.layers "
                     "x KV heads per group)";
    if (pages < 1) throw InputError("KV capacity exceeded: " + capacity_note_);
    return pages;
  }
  WorkflowView view(const Flow& f) const { return {f.spec->id, f.spec->arrival_ns, f.remaining, f.reserved}; }
  std::vector<Flow*> ordered(bool admitted);
  void admit(Flow& f);
  void advance(Flow& f);  // the parent has no work and no branch is out: what comes next
  void start_round(Flow& f);
  void join(Flow& f);
  void finish_agent(Flow& f, Agent& a, bool is_parent);
  void branch_done(Flow& f, Agent& b, double at_ns);
  int new_request(Flow& f, int round, int branch, int prefill, int decode);
  StepCost time_step(const std::vector<Step>& parts, bool& reused);

  const Workload& w_;
  const HwConfig& hw_;
  ServeOptions opt_;
  std::vector<WorkflowSpec> specs_;
  SchedulerRegistry schedulers_ = builtin_schedulers();
  const SchedulerPolicy& policy_;
  std::string capacity_note_;
  int64_t pool_;  // pages per PE (sets capacity_note_ first: declared before kv_)
  KvPageManager kv_;
  SimulatorPool own_sims_;
  std::optional<StepRunner> runner_;
  std::string hw_key_;
  std::unordered_map<std::string, StepCost> cache_;
  std::vector<Flow> flows_;
  ServeResult res_;
  double now_ = 0;
  int64_t reserved_ = 0;
  int active_ = 0;
};

std::vector<Flow*> Engine::ordered(bool admitted) {
  std::vector<Flow*> out;
  for (Flow& f : flows_)
    if (f.arrived && !f.done && f.admitted == admitted) out.push_back(&f);
  std::stable_sort(out.begin(), out.end(), [&](const Flow* a, const Flow* b) {
    const double ka = policy_.key(view(*a)), kb = policy_.key(view(*b));
    return ka != kb ? ka < kb : a->spec->id < b->spec->id;
  });
  return out;
}

int Engine::new_request(Flow& f, int round, int branch, int prefill, int decode) {
  RequestRecord r;
  r.workflow = f.spec->id;
  r.round = round;
  r.branch = branch;
  r.prefill_tokens = prefill;
  r.requested_tokens = decode;
  r.ready_ns = now_;
  res_.requests.push_back(r);
  return int(res_.requests.size()) - 1;
}

void Engine::admit(Flow& f) {
  f.admitted = true;
  reserved_ += f.reserved;
  ++active_;
  res_.workflows[size_t(f.record)].admitted_ns = now_;
  const WorkflowSpec& s = *f.spec;
  const int pages = int(ceil_div(uint64_t(s.prompt_tokens), uint64_t(kv_.page_tokens())));
  const PlacePage prefix = prefix_placer(w_.scenario.kv.prefix_placement, pages);
  f.parent.sa.name = "w" + std::to_string(s.id) + "." + kMainAgentName;
  f.parent.sa.origin = tensor_origin_prefix();
  f.parent.sa.seq = kv_.create();
  // The cached part of the prompt is in the KV cache already; the rest is the parent's prefill
  // (both on the prefix placement, as a run's session places its prefix).
  kv_.append(f.parent.sa.seq, tensor_origin_prefix(), s.cached_tokens, prefix, /*cached=*/true);
  f.parent.sa.length = kv_.length(f.parent.sa.seq);
  // The main request: the parent's thread from the workflow's arrival to its answer (its
  // prefills: the uncached prompt and every join's continuation).
  f.parent.request = new_request(f, -1, -1, s.prompt_tokens - s.cached_tokens + int(s.rounds.size()) * s.join_tokens,
                                 s.answer_tokens);
  res_.requests[size_t(f.parent.request)].ready_ns = s.arrival_ns;
  f.parent.prefill_left = s.prompt_tokens - s.cached_tokens;
  if (f.parent.prefill_left == 0) advance(f);
}

void Engine::start_round(Flow& f) {
  const std::vector<BranchSpec>& round = f.spec->rounds[size_t(f.round)];
  f.branches.clear();
  f.branches_done = 0;
  f.in_round = true;
  for (size_t b = 0; b < round.size(); ++b) {
    Agent a;
    a.sa.name = "w" + std::to_string(f.spec->id) + ".r" + std::to_string(f.round) + ".b" + std::to_string(b);
    a.sa.agent = int(b);
    a.sa.origin = int(b);
    a.sa.seq = w_.scheduler.share_prefix
                   ? kv_.fork(f.parent.sa.seq)
                   : kv_.fork_copy(f.parent.sa.seq, [&f](const KvPageManager& kv, SeqId s) { return f.placer(kv, s); });
    a.sa.length = kv_.length(a.sa.seq);
    a.prefill_left = round[b].new_tokens;
    a.decode_left = round[b].decode_tokens;
    a.request = new_request(f, f.round, int(b), round[b].new_tokens, round[b].decode_tokens);
    f.branches.push_back(a);
  }
}

void Engine::join(Flow& f) {
  // Every branch is released (the run's join releases them too); those a "first" join does not
  // wait for are cancelled where they stand.
  double last_token = -1;
  for (Agent& b : f.branches) {
    RequestRecord& r = res_.requests[size_t(b.request)];
    if (b.state != AgentState::done) {
      r.cancelled = true;
      r.done_ns = now_;
      ++r.finished;
      f.remaining -= b.prefill_left + b.decode_left;
    } else {
      last_token = std::max(last_token, r.last_token_ns);
    }
    kv_.release(b.sa.seq);
  }
  if (last_token >= 0) res_.workflows[size_t(f.record)].tool_wait_ns += std::max(0.0, now_ - last_token);
  f.branches.clear();
  f.in_round = false;
  ++f.round;
  f.parent.sa.origin = int(f.spec->rounds[size_t(f.round - 1)].size());  // the parent after the fork
  f.parent.prefill_left = f.spec->join_tokens;
  if (f.parent.prefill_left == 0) advance(f);
}

void Engine::advance(Flow& f) {
  if (f.round < int(f.spec->rounds.size())) return start_round(f);
  if (!f.answering) {
    f.answering = true;
    f.parent.decode_left = f.spec->answer_tokens;
    if (f.parent.decode_left > 0) return;
  }
  // Done: the parent's pages go back to the pool with its reservation.
  RequestRecord& r = res_.requests[size_t(f.parent.request)];
  r.done_ns = now_;
  ++r.finished;
  kv_.release(f.parent.sa.seq);
  f.done = true;
  reserved_ -= f.reserved;
  --active_;
  res_.workflows[size_t(f.record)].done_ns = now_;
}

void Engine::branch_done(Flow& f, Agent& b, double at_ns) {
  b.state = AgentState::done;
  RequestRecord& r = res_.requests[size_t(b.request)];
  r.done_ns = at_ns;
  ++r.finished;
  if (++f.branches_done >= f.spec->join_first) join(f);
}

void Engine::finish_agent(Flow& f, Agent& a, bool is_parent) {
  if (is_parent) return advance(f);
  if (f.spec->tool_ns > 0) {
    a.state = AgentState::tool;
    a.tool_until = now_ + f.spec->tool_ns;
    res_.requests[size_t(a.request)].tool_ns = f.spec->tool_ns;
    return;
  }
  branch_done(f, a, now_);
}

StepCost Engine::time_step(const std::vector<Step>& parts, bool& reused) {
  const std::vector<AttentionJob> jobs = runner_->batch_jobs(kv_, parts);
  const auto simulate = [&] {
    ++res_.steps_simulated;
    const SimResult sim = runner_->simulate_quiet(jobs);
    return StepCost{sim.end_ns, hbm_bytes_read(sim), read_energy(sim.stats, hw_, w_.scenario.model.dtype, sim.end_ns).total_j()};
  };
  reused = false;
  if (!w_.scheduler.step_cache) return simulate();
  const std::string key = hw_key_ + step_key(jobs);
  const auto it = cache_.find(key);
  if (it != cache_.end()) {
    reused = true;
    ++res_.steps_reused;
    return it->second;
  }
  const StepCost c = simulate();
  cache_.emplace(key, c);
  return c;
}

ServeResult Engine::run() {
  res_.scheduler = policy_.name;
  res_.pes = kv_.pes();
  res_.pages_per_pe = kv_.pages_per_pe();
  res_.pages_total = kv_.pages_per_pe() * kv_.pes();
  flows_.resize(specs_.size());
  for (size_t i = 0; i < specs_.size(); ++i) {
    Flow& f = flows_[i];
    f.spec = &specs_[i];
    f.record = int(i);
    f.reserved = reservation(specs_[i], kv_.page_tokens(), w_.scheduler.share_prefix);
    f.remaining = work_tokens(specs_[i]);
    if (f.reserved > res_.pages_total)
      throw InputError(w_.file + ": workflow " + std::to_string(i) + " (template " +
                       (specs_[i].tmpl >= 0 ? w_.templates[size_t(specs_[i].tmpl)].name : std::string("azure_csv")) +
                       ", prompt_tokens " + std::to_string(specs_[i].prompt_tokens) + ") needs up to " +
                       std::to_string(f.reserved) + " KV pages, more than the pool's " +
                       std::to_string(res_.pages_total) + " (" + capacity_note_ + ")");
    WorkflowRecord wr;
    wr.id = specs_[i].id;
    wr.tmpl = specs_[i].tmpl >= 0 ? w_.templates[size_t(specs_[i].tmpl)].name : "azure_csv";
    wr.arrival_ns = specs_[i].arrival_ns;
    wr.requested_tokens = specs_[i].requested_tokens();
    wr.reserved_pages = f.reserved;
    res_.workflows.push_back(wr);
  }
  size_t next_arrival = 0;  // specs_ are in arrival order
  size_t finished = 0;
  while (true) {
    // Arrivals up to now, tool calls that returned by now.
    while (next_arrival < flows_.size() && flows_[next_arrival].spec->arrival_ns <= now_)
      flows_[next_arrival++].arrived = true;
    for (Flow& f : flows_) {
      if (!f.admitted || f.done || !f.in_round) continue;
      const int round = f.round;  // a join ends the round (and may start the next): stop there
      for (size_t b = 0; b < f.branches.size() && f.round == round; ++b)
        if (f.branches[b].state == AgentState::tool && f.branches[b].tool_until <= now_)
          branch_done(f, f.branches[b], f.branches[b].tool_until);
    }
    // Admission in the policy's order, under the KV reservation and the workflow limit.
    for (Flow* f : ordered(false)) {
      if (w_.scheduler.max_workflows > 0 && active_ >= w_.scheduler.max_workflows) break;
      if (reserved_ + f->reserved <= res_.pages_total) admit(*f);
      else if (policy_.head_of_line) break;
    }
    finished = 0;
    for (const Flow& f : flows_) finished += f.done;
    if (finished == flows_.size()) break;

    // The step: one part per admitted workflow with work, in the policy's order, up to the
    // token budget (a part that alone exceeds it runs alone).
    std::vector<Step> parts;
    std::vector<std::pair<Flow*, std::vector<Agent*>>> members;
    int tokens = 0, agents = 0;
    for (Flow* f : ordered(true)) {
      std::vector<Agent*> in;
      if (f->in_round) {
        for (Agent& b : f->branches)
          if (b.has_work()) in.push_back(&b);
      } else if (f->parent.has_work()) {
        in.push_back(&f->parent);
      }
      if (in.empty()) continue;
      int t = 0;
      for (const Agent* a : in) t += a->prefill_left > 0 ? a->prefill_left : 1;
      if (!parts.empty() && tokens + t > w_.scheduler.max_batch_tokens) continue;
      tokens += t;
      agents += int(in.size());
      Step part;
      part.phase = f->in_round ? PhaseType::decode : PhaseType::prefill;
      part.kv_since = f->kv_since;
      for (Agent* a : in) {
        const bool prefill = a->prefill_left > 0;
        if (prefill && f->in_round) part.phase = PhaseType::fanout;
        if (!prefill && !f->in_round) part.phase = PhaseType::decode;
        kv_.append(a->sa.seq, a->sa.origin, prefill ? a->prefill_left : 1,
                   [f](const KvPageManager& kv, SeqId s) { return f->placer(kv, s); });
        a->sa.length = kv_.length(a->sa.seq);
        a->sa.new_tokens = prefill ? a->prefill_left : 1;
        part.agents.push_back(a->sa);
      }
      if (w_.scheduler.batch_branches) {
        parts.push_back(std::move(part));
      } else {  // the baseline: every agent a part of its own
        for (const StepAgent& sa : part.agents) {
          parts.push_back(Step{part.phase, 0, {sa}, ""});
          parts.back().kv_since = part.kv_since;
        }
      }
      f->kv_since = kv_.writes();
      members.emplace_back(f, std::move(in));
    }
    if (parts.empty()) {  // idle until the next arrival or tool return
      double next = std::numeric_limits<double>::infinity();
      if (next_arrival < flows_.size()) next = flows_[next_arrival].spec->arrival_ns;
      for (const Flow& f : flows_)
        for (const Agent& b : f.branches)
          if (f.admitted && !f.done && b.state == AgentState::tool) next = std::min(next, b.tool_until);
      if (!(next > now_) || next == std::numeric_limits<double>::infinity())
        throw std::logic_error("serve: no work, no arrival and no tool call pending with " +
                               std::to_string(flows_.size() - finished) + " workflows unfinished");
      now_ = next;
      continue;
    }
    StepSample sample;
    sample.start_ns = now_;
    sample.workflows = int(members.size());
    sample.agents = agents;
    sample.tokens = tokens;
    sample.kv_pages = kv_.in_use();
    sample.active = active_;
    for (const Flow& f : flows_) sample.waiting += f.arrived && !f.admitted;
    const StepCost cost = time_step(parts, sample.reused);
    sample.ns = cost.ns;
    sample.hbm_bytes = cost.hbm_bytes;
    sample.energy_j = cost.energy_j;
    res_.steps.push_back(sample);
    const double start = now_;
    now_ += sample.ns;
    // The step's energy is shared among its requests by the new tokens each brings to it.
    int64_t step_tokens = 0;
    for (auto& [f, in] : members)
      for (const Agent* a : in)
        if (a->request >= 0) step_tokens += a->sa.new_tokens;
    for (auto& [f, in] : members) {
      for (Agent* a : in) {
        if (a->request >= 0) {
          RequestRecord& r = res_.requests[size_t(a->request)];
          if (r.scheduled_ns < 0) r.scheduled_ns = start;
          if (step_tokens > 0) r.energy_j += cost.energy_j * double(a->sa.new_tokens) / double(step_tokens);
        }
        if (a->prefill_left > 0) {
          f->remaining -= a->prefill_left;
          a->prefill_left = 0;
        } else {
          --a->decode_left;
          --f->remaining;
          RequestRecord& r = res_.requests[size_t(a->request)];
          ++r.generated_tokens;
          if (r.first_token_ns < 0) r.first_token_ns = now_;
          r.last_token_ns = now_;
          WorkflowRecord& wr = res_.workflows[size_t(f->record)];
          ++wr.generated_tokens;
          if (wr.first_token_ns < 0) wr.first_token_ns = now_;
        }
      }
      // Agents that finished their work (the parent last: its next stage may fork new branches).
      const bool parent_in = in.size() == 1 && in[0] == &f->parent;
      if (parent_in) {
        if (!f->parent.has_work()) finish_agent(*f, f->parent, true);
      } else {
        const int round = f->round;  // a join ends the round (and may start the next): stop there
        for (Agent* a : in) {
          if (f->round != round) break;
          if (!a->has_work() && a->state == AgentState::run) finish_agent(*f, *a, false);
        }
      }
    }
  }
  res_.end_ns = now_;
  res_.peak_pages = kv_.peak_total();
  res_.in_use_end = kv_.in_use();
  res_.allocations = kv_.allocations();
  res_.frees = kv_.frees();
  kv_.check_invariants();
  return res_;
}

}  // namespace

std::string step_key(const std::vector<AttentionJob>& jobs) {
  static_assert(sizeof(RowInfo) == 2 * sizeof(int32_t) && sizeof(KvInfo) == 2 * sizeof(int32_t) &&
                    sizeof(KvReplica) == 3 * sizeof(int) && sizeof(KvWrite) == 3 * sizeof(int),
                "key bytes must have no padding");
  KeyWriter k;
  k.put(jobs.size());
  for (const AttentionJob& j : jobs) {
    k.str(j.phase);
    k.put(j.group);
    k.put(j.head_dim);
    k.put(j.dtype);
    k.put(j.scale);
    k.put(j.values);
    k.put(j.remap);
    k.put(j.kv_broadcast);
    k.put(j.kernel);
    k.put(j.agents.size());
    k.vec(j.rows);
    k.put(j.tiles.size());
    for (const QTile& t : j.tiles) {
      k.put(t.row_begin);
      k.put(t.row_end);
      k.vec(t.pes);
    }
    k.put(j.shards.size());
    for (const KvShard& s : j.shards) {
      k.put(s.tokens);
      k.vec(s.info);
    }
    k.put(j.segments.size());
    for (const auto& segs : j.segments) {  // field by field: KvSegment has padding bytes
      k.put(segs.size());
      for (const KvSegment& g : segs) {
        k.put(g.src_pe);
        k.put(g.first);
        k.put(g.count);
        k.put(g.remote);
      }
    }
    k.put(j.replicas.size());
    for (const auto& reps : j.replicas) k.vec(reps);
    k.put(j.kv_writes.size());
    for (const auto& writes : j.kv_writes) k.vec(writes);
  }
  return k.s;
}

ServeResult serve(const Workload& w, const HwConfig& hw, const ServeOptions& opt) {
  if (hw.power_cap_w > 0)
    throw InputError(opt.hw_file + ": power_cap_w (the chip's power cap) = " + Json(hw.power_cap_w).dump() +
                     " is not applied by serve (allowed: 0 = off; the cap applies to `ahbm-sim run`, docs/energy.md)");
  Engine e(w, hw, opt);
  return e.run();
}

}  // namespace ahbm::serve
