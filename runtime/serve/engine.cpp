#include "runtime/serve/engine.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <set>
#include <tuple>
#include <optional>
#include <stdexcept>
#include <type_traits>

#include "hw/common/model/engines.h"
#include "hw/common/base/error.h"
#include "hw/common/base/timing.h"
#include "runtime/kv/page_manager.h"
#include "runtime/kv/placement.h"
#include "runtime/model/memory_map.h"
#include "runtime/plan/choose.h"
#include "runtime/step/model_steps.h"
#include "runtime/policy/cost_model.h"
#include "runtime/report/progress.h"
#include "runtime/run/preflight.h"
#include "runtime/serve/flow.h"
#include "runtime/serve/pools.h"
#include "runtime/serve/preemption.h"
#include "runtime/serve/lifecycle.h"
#include "runtime/serve/request_log.h"
#include "runtime/serve/scheduler.h"
#include "runtime/serve/step_timer.h"
#include "runtime/serve/topology.h"
#include "runtime/scenario/session.h"
#include "hw/chip/energy.h"
#include "runtime/step/step_record.h"
#include "runtime/step/step_runner.h"

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
  void vec(const std::vector<T>& v) {  // the elements' bytes in one append (no padding: step_key)
    static_assert(std::is_trivially_copyable_v<T>);
    put(v.size());
    s.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
};

// A step being put together: its parts (one per workflow) and who is in them.
struct StepBuild {
  std::vector<Step> parts;
  std::vector<std::pair<Flow*, std::vector<Agent*>>> members;
  int tokens = 0, agents = 0;
};

// Pages a workflow may hold at once (admission reserves them, so a run never runs out): its
// parent's whole sequence, plus the largest round's branches, each a copy of the parent's
// partly filled last page (copy-on-write, up to page_tokens - 1 tokens) and its own tokens.
// Without sharing, each branch holds a copy of the parent's pages as well; so does each branch
// planned as its own part (batch_branches = false): the chip holds every job's KV in a region
// of its own (hw/group/group.cpp), the shared prefix once per branch's job, and a reservation
// that counted it once admitted workflows whose steps then failed, "pe.hbm.capacity_bytes
// exceeded" (`share` is false for both).
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

int64_t prompt_pages(const WorkflowSpec& w, int page_tokens) {
  return int64_t(ceil_div(uint64_t(w.prompt_tokens), uint64_t(page_tokens)));
}

int64_t work_tokens(const WorkflowSpec& w) {
  int64_t n = w.prompt_tokens - w.cached_tokens + int64_t(w.rounds.size()) * w.join_tokens + w.answer_tokens;
  for (const auto& round : w.rounds)
    for (const BranchSpec& b : round) n += b.new_tokens + b.decode_tokens;
  return n;
}

// The steps a workflow takes alone that hold the most (runtime/run/preflight.h, preflight_steps):
// its prompt's prefill and each round's fan-out (every branch's instruction tokens over the
// context by then), each as a one-step run of the workload's model. Decode and join steps bring a
// token per agent or the join's few over the same context: less.
void add_step_shapes(const Workload& w, const WorkflowSpec& s, const std::string& name, std::vector<PreflightStep>& out) {
  const std::string who = w.file + ": workflow " + std::to_string(s.id) + " (" + name + ")";
  const std::string model = ", " + w.scenario_file + ": model.num_kv_heads = " +
                            std::to_string(w.scenario.model.num_kv_heads) + " x " +
                            std::to_string(w.scenario.model.q_per_kv()) + " query heads each, model.head_dim = " +
                            std::to_string(w.scenario.model.head_dim);
  Scenario prompt = w.scenario;
  prompt.agents.clear();
  prompt.join = nullptr;
  prompt.shared_prefix_tokens = s.prompt_tokens;
  prompt.phases = {PhaseSpec{PhaseType::prefill, s.prompt_tokens - s.cached_tokens, 0}};
  out.push_back({who + ": prompt_tokens = " + std::to_string(s.prompt_tokens) + " (cached_tokens = " +
                     std::to_string(s.cached_tokens) + ") prefilled in one step" + model,
                 prompt});
  for (size_t r = 0; r < s.rounds.size(); ++r) {
    Scenario fan = prompt;
    fan.shared_prefix_tokens = s.prompt_tokens + int(r) * s.join_tokens;
    fan.phases = {PhaseSpec{PhaseType::fanout, 0, 0}};
    int tokens = 0;
    for (size_t b = 0; b < s.rounds[r].size(); ++b) {
      fan.agents.push_back({"b" + std::to_string(b), s.rounds[r][b].new_tokens, 0});
      tokens += s.rounds[r][b].new_tokens;
    }
    out.push_back({who + ": round " + std::to_string(r) + "'s fan-out, " + std::to_string(s.rounds[r].size()) +
                       " branches' " + std::to_string(tokens) + " new tokens over a context of " +
                       std::to_string(fan.shared_prefix_tokens) + " (prompt_tokens and join tokens)" + model,
                   std::move(fan)});
  }
}

class Engine final : private LifecycleEvents {
 public:
  Engine(const Workload& w, const HwConfig& hw, const ServeOptions& opt, StepSampler* sampler, ModelPlans* plans)
      : w_(w), hw_(hw), opt_(opt), specs_(expand(w)),
        policy_(schedulers_.get(opt.scheduler.empty() ? w.scheduler.policy : opt.scheduler,
                                opt.scheduler.empty() ? w.file + ": scheduler.policy" : "--scheduler")),
        admission_((opt.admissions ? *opt.admissions : builtin_admission_rules())
                       .get(w.scheduler.admission, w.file + ": scheduler.admission")
                       .policy),
        plans_(plans ? plans : &own_plans_), sampler_(sampler) {
    if (opt.gemm_mapping != GemmMapping::w_stationary && !w.scenario.model.full)
      throw InputError("gemm_mapping = '" + choice_name(opt.gemm_mapping) + "' needs a workload whose scenario (" +
                       w.scenario_file + ") names a whole model (model.config; docs/models.md): allowed with an "
                       "attention-only model: w_stationary");
    if (admission_->grows_on_demand()) {
      preemption_ = (opt.preemptions ? *opt.preemptions : builtin_preemption_rules())
                        .get(w.scheduler.preemption, w.file + ": scheduler.preemption")
                        .policy;
      preempt_.emplace();
      preempt_->mode = w.scheduler.preemption;
      preempt_->page_bytes = kv_page_bytes(w.scenario, 1);
    }
    lay_out((opt.topologies ? *opt.topologies : builtin_topologies())
                .get(topology_name(w), w.file + (w.scheduler.pbd ? ": scheduler.pbd" : ": scheduler.placement"))
                .policy->layout(w, hw, opt.hw_file));
  }

  ServeResult run();

 private:
  static constexpr double kNever = std::numeric_limits<double>::infinity();
  void start_results();
  void start_flows();
  void preflight() const;
  void take_events();
  void admit_waiting();
  void pull_idle();
  size_t finished() const;
  void start_steps();
  double next_event() const;
  void advance_clock();
  ServeResult finish();
  void finish_models(std::vector<Json>& operators, std::vector<Json>& memory_maps) const;
  void finish_pbd(std::vector<Json>& operators, std::vector<Json>& memory_maps);
  void finish_replicas();
  void lay_out(const TopologyLayout& layout);
  void add_pool(const std::string& name, int groups, PoolModel* model);
  // Copies of each KV page the HBM holds: policy B3 reads copies of the peer CUBEs' shards placed
  // when the KV was written (apply_policy.h), so with B3 among a step's policies (B3, or auto,
  // which may pick it) every page is held once on every CUBE of its group; policy B1 receives
  // those copies over the NoC during the step, into the same HBM space (the chip's check_jobs
  // counts them: a B1 serve that counted one copy failed mid-run, "pe.hbm.capacity_bytes
  // exceeded"); else once.
  int kv_copies() const {
    const std::string& p = w_.scheduler.attention_policy;
    return p == "B3" || p == "B1" || p == "auto" ? hw_.group.cubes : 1;
  }
  // HBM a KV page takes on a pool of `groups` groups, its copies included.
  uint64_t kv_slot_bytes(int groups) const { return kv_page_bytes(w_.scenario, groups) * uint64_t(kv_copies()); }
  PoolModel* plan_whole_model(const std::string& pool, int groups);
  void set_transfer_path(const std::string& path);
  KvPageManager& kv(const Flow& f) { return *pools_[size_t(f.pool)]->kv; }
  AdmissionCandidate candidate(const Flow& f) const;
  PoolRoom room_of(const Pool& p, int64_t free_now, int64_t promised) const {
    return {pages_total(p), p.reserved, p.kv->in_use(), free_now, promised};
  }
  Pool& prefill_pool() { return *pools_.front(); }  // P-B-D: the first prefill pool (all are alike)
  bool is_prefill(const Pool& p) const { return pbd_ && p.index < prefill_pools_; }
  // P-B-D: prompts in the prefill pools' steps under way (they enter the buffer when those end).
  int in_prefill_steps() const {
    int n = 0;
    for (int i = 0; i < prefill_pools_; ++i) n += pools_[size_t(i)]->stepping ? int(pools_[size_t(i)]->members.size()) : 0;
    return n;
  }
  Pool& decode_pool() { return *pools_.back(); }  // co-located: the one pool; P-B-D: the last decode pool (all are alike)
  WorkflowView view(const Flow& f) const { return {f.spec->id, f.spec->arrival_ns, f.remaining, f.reserved}; }
  std::vector<Flow*> ordered(bool admitted);
  int64_t pages_total(const Pool& p) const { return p.kv->pages_per_pe() * p.kv->pes(); }
  void admit(Flow& f, int pool);
  // LifecycleEvents
  void prefilled(Flow& f) override { to_buffer(f); }
  void done(Flow& f) override {
    pools_[size_t(f.pool)]->reserved -= f.held;
    --active_;
  }
  std::vector<Agent*> with_work(Flow& f);
  void add_part(Flow* f, std::vector<Agent*> in, StepBuild& b);
  StepBuild build_step(Pool& pool);
  void start_step(Pool& pool, StepBuild b);
  void complete_step(Pool& pool);
  // P-B-D
  int buffered() const { return int(buffer_.size()) + int(transfer_.size()); }
  void to_buffer(Flow& f);
  void pull(Pool& to);
  void finish_transfer();
  KvTransfer layer_migration(uint64_t bytes);
  // The time `bytes` take on the KV path at its bandwidth (0 when unbounded).
  double send_ns(uint64_t bytes) const { return pbd_->path_gbps > 0 ? double(bytes) / pbd_->path_gbps : 0.0; }
  // on_demand admission and preemption (docs/serving.md, "Admission on demand and preemption")
  int64_t pages_needed_now(const Flow& f) const;
  bool prefix_fits(const Flow& f, const Pool& pool) const;
  bool prompt_fits(const WorkflowSpec& s, const Pool& pool) const;
  std::vector<int64_t> free_for_new();
  bool make_room(Flow& f, const std::vector<Agent*>& in, const std::vector<Flow*>& order, size_t at);
  void preempt(Flow& f);
  void readmit(Flow& f);
  PreemptionSink sink(const Flow& f);
  void refork(Flow& f);
  void buffer_changed() { pbd_->buffer.emplace_back(now_, buffered()); }

  const Workload& w_;
  const HwConfig& hw_;
  ServeOptions opt_;
  std::vector<WorkflowSpec> specs_;
  SchedulerRegistry schedulers_ = builtin_schedulers();
  const SchedulerPolicy& policy_;
  std::shared_ptr<const AdmissionRule> admission_;
  std::shared_ptr<const PreemptionRule> preemption_;  // set when the admission rule grows on demand
  SimulatorPool own_sims_;
  // A whole model (model.config): one per pool, or one for every slice (PoolModel).
  std::vector<PoolModel*> models_;  // held by *plans_
  ModelPlans own_plans_;
  ModelPlans* plans_;
  std::vector<std::unique_ptr<Pool>> pools_;
  StepSampler* sampler_;  // sampled serving; null in exact mode
  StepTimer timer_{w_.scheduler.step_cache, w_.scenario.model.dtype, sampler_};
  std::vector<Flow> flows_;
  ServeResult res_;
  RequestLog log_;
  Lifecycle life_{log_, w_.scheduler.share_prefix, *this};
  double now_ = 0;
  int active_ = 0;
  size_t next_arrival_ = 0;  // flows_ are in arrival order
  // The flows a scan at an event boundary can find live: every flow before live_begin_ is done,
  // none from next_arrival_ on has arrived, and each scan's own condition skips both ends (a
  // done flow stays admitted). A production hour has 10^4 flows and 10^6 boundaries; a few
  // hundred are live at once.
  size_t live_begin_ = 0;
  template <class T>
  struct Span {
    T *b, *e;
    T* begin() const { return b; }
    T* end() const { return e; }
  };
  Span<Flow> live() { return {flows_.data() + live_begin_, flows_.data() + next_arrival_}; }
  Span<const Flow> live() const { return {flows_.data() + live_begin_, flows_.data() + next_arrival_}; }
  // P-B-D
  std::optional<PbdResult> pbd_;
  int prefill_pools_ = 0;        // DP_P: pools_[0, prefill_pools_) prefill, then the DP_D decode pools
  std::vector<Flow*> buffer_;    // prefilled, waiting for the decode pool, in buffer order
  std::vector<Flow*> transfer_;  // pulled, their KV on its way
  double transfer_end_ = 0;
  // When each replica's host link is free again: swaps (preemption = swap) of every pool of the
  // replica and P-B-D's KV transfers over the host use it one after another.
  std::vector<double> host_link_free_;
  int transfer_to_ = -1;         // the decode pool the transfer in flight goes to
  uint64_t kv_bytes_per_token_ = 0;  // K and V of every KV head and layer
  // on_demand admission
  std::optional<PreemptionResult> preempt_;
};

// The topology's pools, each a chip of its groups; a whole model planned on the groups of the
// first pool holding each copy, where that pool is laid out. P-B-D: the buffer and the KV path.
// Data parallelism: the layout once per replica, each on chips of its own (pools "replica<r>" or
// "replica<r>.<pool>"), every pool an entry (P-B-D is refused with dp > 1 by the workload). The
// replicas are alike, so they share each copy's plan (its timing; each holds its own weights).
void Engine::lay_out(const TopologyLayout& layout) {
  const int dp = w_.scenario.model.parallel.dp;
  check_split_fits_system(w_.scenario.model.parallel, hw_.system.chips, opt_.hw_file, w_.scenario_file);
  std::map<std::string, PoolModel*> copies;
  for (int r = 0; r < dp; ++r)
    for (const PoolPlan& p : layout.pools) {
      if (!copies.count(p.model)) copies[p.model] = plan_whole_model(p.model, p.groups);
      const std::string replica = "replica" + std::to_string(r);
      add_pool(dp == 1 ? p.name : p.name == "chip" ? replica : replica + "." + p.name, p.groups, copies[p.model]);
      pools_.back()->replica = r;
    }
  host_link_free_.assign(size_t(dp), 0.0);
  if (!layout.pipelined) return;
  const PbdSpec& p = *w_.scheduler.pbd;
  prefill_pools_ = layout.entry_pools;
  pbd_.emplace();
  pbd_->buffer_max = p.buffer_max;
  pbd_->micro_batch = p.micro_batch;
  pbd_->kv_path = p.kv_path;
  pbd_->kv_migration = p.kv_migration;
  set_transfer_path(p.kv_path);
  pbd_->buffer.emplace_back(0.0, 0);
}

void Engine::add_pool(const std::string& name, int groups, PoolModel* model) {
  auto p = std::make_unique<Pool>();
  p->name = name;
  p->index = int(pools_.size());
  p->hw = hw_;
  p->hw.groups = groups;
  p->model = model;
  const uint64_t slot = kv_slot_bytes(groups);
  const int64_t pages = int64_t((model ? model->weights.free_for_kv() : hw_.pe.hbm.capacity_bytes) / slot);
  p->capacity_note = opt_.hw_file + ": pe.hbm.capacity_bytes = " + std::to_string(hw_.pe.hbm.capacity_bytes) +
                     (model ? " less " + std::to_string(model->weights.weight_bytes_max_pe) +
                                  " bytes of model weights on the most loaded PE (summary memory_map)"
                            : std::string()) +
                     " holds " + std::to_string(pages) + " pages of " + std::to_string(slot) + " bytes (" +
                     w_.scenario_file + ": kv.page_tokens x model.head_dim x 2 (K, V) x storage bytes x " +
                     kv_page_layers_text(w_.scenario) + " x KV heads per group" + (name != "chip" ? " of the " + name + " pool's " + std::to_string(groups) +
                                                                      (groups == 1 ? " group" : " groups")
                                                                : std::string()) +
                     (kv_copies() > 1 ? " x " + std::to_string(kv_copies()) + " copies: scheduler.attention_policy = '" +
                                            w_.scheduler.attention_policy + "' keeps B3's copy of every page on every CUBE"
                                      : std::string()) + ")";
  if (pages < 1) throw InputError("KV capacity exceeded: " + p->capacity_note);
  p->kv = std::make_unique<KvPageManager>(p->hw.pes_per_group(), pages, w_.scenario.kv.page_tokens, p->capacity_note);
  StepSettings set;
  set.seed = w_.scenario.seed;
  set.policy = w_.scheduler.attention_policy;
  set.objective = parse_objective(w_.scheduler.objective, "scheduler.objective");
  set.launch = w_.scheduler.launch;
  set.attention_fused = w_.scenario.model.fusion.attention;
  set.sim.vcd = false;
  set.sim.hw_file = opt_.hw_file;
  set.sim.nocs = opt_.nocs;
  set.sims = opt_.sims ? opt_.sims : &own_sims_;
  p->runner.emplace(w_.scenario, p->hw, set);
  p->hw_key = to_json(p->hw).dump() + "|policy=" + set.policy + "|launch=" + set.launch;
  pools_.push_back(std::move(p));
}

// A whole model's weights and operators on `groups` groups (null for an attention-only model),
// for the pool (or every slice) named `pool`. A pool too small to hold the weights and one KV
// page, or whose PEs the operators' shards do not divide, is an input error naming the pool, its
// groups and what does not fit.
PoolModel* Engine::plan_whole_model(const std::string& pool, int groups) {
  const Scenario& sc = w_.scenario;
  if (!sc.model.full) return nullptr;
  // A plan an earlier run of the same serve made (sampled serving's replays) is taken as it is:
  // the same workload and hardware plan the same, and its operators' runs are already simulated.
  std::unique_ptr<PoolModel>& planned = plans_->by_copy[pool + "|" + std::to_string(groups)];
  if (planned) {
    models_.push_back(planned.get());
    return planned.get();
  }
  auto m = std::make_unique<PoolModel>();
  m->hw = hw_;
  m->hw.groups = groups;
  SimOptions so;
  so.vcd = false;
  so.hw_file = opt_.hw_file;
  so.nocs = opt_.nocs;
  try {  // the weights and one KV page fit each PE; the operators' shards fit the pool's PEs
    m->weights = plan_memory(*sc.model.full, sc.model.dtype, m->hw);
    check_per_chip(sc.model.parallel,
                   [&] { check_weights_fit(m->weights, kv_slot_bytes(groups), opt_.hw_file, w_.scenario_file); });
    SplitCollectives split;
    if (!sc.model.parallel.none()) {
      m->collectives.emplace(m->hw, opt_.hw_file, sc.model.parallel, opt_.system_networks);
      split = m->collectives->bind();
    }
    m->steps.emplace(*sc.model.full, sc.model.dtype, m->weights, m->hw, m->sims, so, /*every_layer=*/false, sc.seed,
                     opt_.gemm_mapping, sc.model.fusion, split, sc.model.layers);
    if (sampler_) {  // sampled serving: the operators' row counts on a grid (docs/serving.md)
      const SamplingSpec& s = sampler_->spec();
      m->steps->set_operator_grid({s.operator_grid, s.operator_exact_rows, s.operator_check});
    }
  } catch (const InputError& e) {
    if (pool == "chip") throw;
    const std::string field = pool == "slice" ? "scheduler.placement = 'prefix_affinity'" : "scheduler.pbd";
    const std::string who = pool == "slice" ? "each slice" : "the " + pool + " pool";
    throw InputError(w_.file + ": " + field + ": " + who + " (" + std::to_string(groups) +
                     (groups == 1 ? " group" : " groups") + ") holds its own copy of the model's weights, and " +
                     who + "'s " + e.what() + "; the groups are " +
                     (pool == "slice" ? "the model's num_key_value_heads" : "scheduler.pbd." + pool + "_groups"));
  }
  planned = std::move(m);
  models_.push_back(planned.get());
  return planned.get();
}

// The decode pool pulls a sequence's KV from the prefill pool's HBM slices into its own. `noc`:
// over the chip's NoC, CUBE to CUBE, as many transfers at once as the smaller pool has CUBEs, each
// at the NoC model's port bandwidth (its estimate, docs/noc.md), and no faster than the source
// slices read or the destination slices write (pe.hbm.bandwidth_gbps x PEs). `host`: out over the
// host link and back in (full duplex: both directions at once, the latency twice).
void Engine::set_transfer_path(const std::string& path) {
  kv_bytes_per_token_ = kv_page_bytes(w_.scenario, 1) / uint64_t(w_.scenario.kv.page_tokens);
  const Pool &from = prefill_pool(), &to = decode_pool();
  const double hbm = hw_.pe.hbm.bandwidth_gbps *
                     double(std::min(from.hw.groups, to.hw.groups) * hw_.pes_per_group());
  const std::string hbm_note = "pe.hbm.bandwidth_gbps x the smaller pool's PEs = " + Json(hbm).dump() + " GB/s";
  if (path == "host") {
    pbd_->path_latency_ns = 2 * hw_.host.latency_ns;
    pbd_->path_gbps = std::min(hw_.host.bandwidth_gbps, hbm);
    pbd_->path_note = "host link: host.bandwidth_gbps = " + Json(hw_.host.bandwidth_gbps).dump() + " (each direction), " +
                      hbm_note + "; latency 2 x host.latency_ns";
    return;
  }
  const NocEstimate noc = noc_estimate(hw_, opt_.nocs, opt_.hw_file);
  const int ports = std::min(from.hw.groups, to.hw.groups) * hw_.group.cubes;
  pbd_->path_latency_ns = noc.latency_ns;
  pbd_->path_gbps = noc.bandwidth_gbps > 0 ? std::min(noc.bandwidth_gbps * double(ports), hbm) : hbm;
  pbd_->path_note = "NoC (" + hw_.noc.model + "): " +
                    (noc.bandwidth_gbps > 0 ? Json(noc.bandwidth_gbps).dump() + " GB/s per port x " +
                                                  std::to_string(ports) + " CUBE ports"
                                            : std::string("unlimited port bandwidth")) +
                    ", " + hbm_note + "; latency the NoC estimate's";
}

std::vector<Flow*> Engine::ordered(bool admitted) {
  std::vector<Flow*> out;
  for (Flow& f : live())
    if (f.arrived && !f.done && f.admitted == admitted) out.push_back(&f);
  std::stable_sort(out.begin(), out.end(), [&](const Flow* a, const Flow* b) {
    const double ka = policy_.key(view(*a)), kb = policy_.key(view(*b));
    return ka != kb ? ka < kb : a->spec->id < b->spec->id;
  });
  return out;
}

void Engine::admit(Flow& f, int pool) {
  f.admitted = true;
  f.pool = pool;
  f.stage = pbd_ ? Stage::prefill : Stage::decode;
  // P-B-D: the prefill pool holds the prompt's pages until the decode pool has pulled them.
  f.held = pbd_ ? prompt_pages(*f.spec, kv(f).page_tokens()) : admission_->held(f.reserved);
  f.started = true;
  pools_[size_t(pool)]->reserved += f.held;
  ++pools_[size_t(pool)]->workflows;
  ++active_;
  log_.admitted(f.record, now_, pool);
  const int pages = int(ceil_div(uint64_t(f.spec->prompt_tokens), uint64_t(kv(f).page_tokens())));
  life_.start(f, kv(f), prefix_placer(w_.scenario.kv.prefix_placement, pages), now_, bool(pbd_));
}

// P-B-D: the prompt is prefilled; its KV waits on the prefill pool for the decode pool to pull it.
void Engine::to_buffer(Flow& f) {
  f.stage = Stage::buffered;
  f.buffered_at_ns = now_;
  buffer_.push_back(&f);
  ++pbd_->sequences;
  buffer_changed();
}

// P-B-D: at a step boundary of a decode pool, with no transfer in flight, it pulls up to
// micro_batch sequences from the buffer, in buffer order, while they fit its KV pool (reserve:
// their whole reservations; on_demand: their prompts' pages now) and their cached prefixes fit
// the PEs the prefix rule names; their KV moves in one transfer.
void Engine::pull(Pool& to) {
  uint64_t bytes = 0;
  size_t n = 0;
  PoolRoom room = room_of(to, admission_->grows_on_demand() ? free_for_new()[size_t(to.index)] : 0, 0);
  while (n < buffer_.size() && int(transfer_.size()) < pbd_->micro_batch) {
    Flow& f = *buffer_[n];
    const WorkflowSpec& s = *f.spec;
    // While what the rule needs of it fits (and its cached prefix's PEs have room).
    const int64_t need = admission_->pull_need(candidate(f));
    if (!admission_->fits(need, room) || !prompt_fits(s, to)) break;
    room.promised += need;
    to.reserved += admission_->held(f.reserved);
    room.reserved = to.reserved;
    // The prompt lands as a run's session places it: the cached part by the prefix rule, the
    // rest on the least-loaded PE (as the co-located prefill step appends it).
    f.prefill_seq = f.parent.sa.seq;
    f.parent.sa.seq = to.kv->create();
    // Its K/V arrive by the transfer (timed there), so no decode step is charged their writes.
    to.kv->append(f.parent.sa.seq, tensor_origin_prefix(), s.cached_tokens,
                  prefix_placer(w_.scenario.kv.prefix_placement, int(prompt_pages(s, to.kv->page_tokens()))),
                  /*cached=*/true);
    to.kv->append(f.parent.sa.seq, tensor_origin_prefix(), s.prompt_tokens - s.cached_tokens,
                  [&f](const KvPageManager& kv, SeqId q) { return f.placer(kv, q); }, /*cached=*/true);
    f.kv_since = to.kv->writes();
    f.parent.sa.length = to.kv->length(f.parent.sa.seq);
    bytes += uint64_t(s.prompt_tokens) * kv_bytes_per_token_;
    f.stage = Stage::transfer;
    transfer_.push_back(&f);
    ++n;
  }
  if (n == 0) return;
  buffer_.erase(buffer_.begin(), buffer_.begin() + std::ptrdiff_t(n));
  KvTransfer t =
      pbd_->kv_migration == "layer" ? layer_migration(bytes) : KvTransfer{now_, pbd_->path_latency_ns + send_ns(bytes)};
  if (pbd_->kv_path == "host" && pbd_->kv_migration == "whole") {  // the one host link (P-B-D has one replica): after any pool's swaps on it
    t.wait_ns = std::max(0.0, host_link_free_[0] - now_);
    t.start_ns += t.wait_ns;
  }
  if (pbd_->kv_path == "host") host_link_free_[0] = t.start_ns + t.ns;
  t.sequences = int(n);
  t.bytes = bytes;
  pbd_->transfers.push_back(t);
  transfer_end_ = t.start_ns + t.ns;
  transfer_to_ = to.index;
}

// kv_migration layer: the pulled sequences' KV (`bytes`, of transfer_) as one message per layer,
// message l carrying every sequence's layer-l KV. A sequence prefilled by a step that ended now
// has its layer l ready when the step's l-th layer ended (the layers taken as equal in time:
// prefill start + l x its compute time / layers), as if the decode pool had been chosen when the
// prefill began (Splitwise picks both instances at once); one that waited in the buffer has every
// layer ready now (its destination was not known before). The messages leave one after another
// once the path is free (the previous transfer's end; the host link after its swaps) and the
// last arrives the path's latency after it is sent: with every layer ready now, the time of one
// whole transfer.
KvTransfer Engine::layer_migration(uint64_t bytes) {
  const int layers = std::max(1, w_.scenario.model.layers_per_chip());
  std::vector<double> ready(size_t(layers), 0.0);
  for (const Flow* f : transfer_) {
    const bool fresh = f->buffered_at_ns == now_ && f->prefill_ns > 0;
    for (int l = 1; l <= layers; ++l) {
      const double at = !fresh || l == layers ? now_ : std::min(now_, f->prefill_start_ns + f->prefill_ns * l / layers);
      ready[size_t(l - 1)] = std::max(ready[size_t(l - 1)], at);
    }
  }
  double link_free = pbd_->kv_path == "host" ? host_link_free_[0] : transfer_end_;
  KvTransfer t;
  const double per_layer = send_ns(bytes) / layers;
  for (int l = 0; l < layers; ++l) {
    const double send = std::max(link_free, ready[size_t(l)]);
    if (l == 0) {
      t.start_ns = send;
      if (pbd_->kv_path == "host") t.wait_ns = send - ready[0];
    }
    link_free = send + per_layer;
  }
  t.ns = link_free + pbd_->path_latency_ns - t.start_ns;
  t.overlap_ns = std::max(0.0, now_ - t.start_ns);
  return t;
}

// P-B-D: the pulled KV has arrived: the prefill pool's pages and buffer slots are free, and the
// workflows go on in the decode pool (their rounds, fan-out prefills, joins and answer).
void Engine::finish_transfer() {
  for (Flow* f : transfer_) {
    Pool& from = *pools_[size_t(f->pool)];  // the prefill pool that prefilled it
    from.kv->release(f->prefill_seq);
    from.reserved -= f->held;
    f->prefill_seq = -1;
    f->pool = transfer_to_;
    f->held = admission_->held(f->reserved);
    f->stage = Stage::decode;
  }
  std::vector<Flow*> moved;
  moved.swap(transfer_);
  buffer_changed();
  for (Flow* f : moved) life_.advance(*f, kv(*f), now_);
}

// on_demand: the pages a waiting workflow needs now: a new one its prompt's, a preempted one what
// it restores (swap: every page it sent out; recompute: the sequence its next step prefills
// again) and its next token. Without the next token a restored sequence that fills its last page
// would be preempted again at its first decode, as long as the pool stays full.
int64_t Engine::pages_needed_now(const Flow& f) const {
  const int pt = pools_.front()->kv->page_tokens();
  if (f.started) {
    // The parent's tokens (restored, prefilled and decoded next; in a round it waits for the
    // join), then each running branch's own, its first page a copy of the parent's partly
    // filled last one (as readmit() and append() take them).
    const int restored = f.parent.prefill_left + f.parent.swapped_tokens;
    const int parent = restored + (!f.in_round && f.parent.decode_left > 0 ? 1 : 0);
    int64_t need = int64_t(ceil_div(uint64_t(parent), uint64_t(pt)));
    for (const Agent& b : f.branches) {
      const int own = b.swapped_tokens +
                      (b.state == AgentState::run ? b.prefill_left + (b.decode_left > 0 ? 1 : 0) : 0);
      if (own > 0) need += int64_t(ceil_div(uint64_t(restored % pt + own), uint64_t(pt)));
    }
    return need;
  }
  return prompt_pages(*f.spec, pt);
}

// What the admission rule sees of a waiting workflow.
AdmissionCandidate Engine::candidate(const Flow& f) const {
  const int64_t prompt = prompt_pages(*f.spec, w_.scenario.kv.page_tokens);
  return {f.reserved, prompt, admission_->grows_on_demand() ? pages_needed_now(f) : prompt, bool(pbd_)};
}

// A new workflow's cached prompt pages go where the prefix rule names at admission: each of
// those PEs must have room.
bool Engine::prefix_fits(const Flow& f, const Pool& pool) const { return f.started || prompt_fits(*f.spec, pool); }

// The cached prompt pages of `s` fit where the prefix rule puts them in `pool` (a new workflow's
// admission; P-B-D on demand: a pull into a decode pool).
bool Engine::prompt_fits(const WorkflowSpec& s, const Pool& pool) const {
  const KvPageManager& pages = *pool.kv;
  const int pt = pages.page_tokens();
  // On an empty pool it is admitted as by reservation: a prefix the rule cannot place is the page
  // manager's input error then, not a wait that never ends.
  if (pages.in_use() == 0) return true;
  std::vector<int64_t> on_pe(size_t(pages.pes()), 0);
  const int prompt = int(prompt_pages(s, pt));
  for (int i = 0; i < int(ceil_div(uint64_t(s.cached_tokens), uint64_t(pt))); ++i)
    ++on_pe[size_t(prefix_page_pe(w_.scenario.kv.prefix_placement, i, prompt, pages.pes()))];
  for (int pe = 0; pe < pages.pes(); ++pe)
    if (pages.in_use(pe) + on_pe[size_t(pe)] > pages.pages_per_pe()) return false;
  return true;
}

// on_demand: the pages of each pool free for new work at this boundary: its free pages less what
// its admitted workflows' next parts append (vLLM schedules the running before the waiting).
// P-B-D: a prompt in the buffer or in transfer has no part in the pool holding it.
std::vector<int64_t> Engine::free_for_new() {
  std::vector<int64_t> free(pools_.size());
  for (size_t i = 0; i < pools_.size(); ++i) free[i] = pages_total(*pools_[i]) - pools_[i]->kv->in_use();
  for (Flow& f : live())
    if (f.arrived && !f.done && f.admitted && f.stage != Stage::buffered && f.stage != Stage::transfer)
      for (const Agent* a : with_work(f))
        free[size_t(f.pool)] -= kv(f).pages_for_append(a->sa.seq, a->prefill_left > 0 ? a->prefill_left : 1);
  return free;
}

// vLLM's rule: when the part of `f` (order[at]) cannot get its pages, the workflows last in the
// policy's order after it are preempted, the last first, until it fits; with none left that
// holds pages, `f` itself is preempted (false: it leaves the step). Workflows before it in the
// order are never preempted for it, so no part already in the step is undone; nor are those of
// other pools (slices), whose pages would not make room in its own.
bool Engine::make_room(Flow& f, const std::vector<Agent*>& in, const std::vector<Flow*>& order, size_t at) {
  const KvPageManager& pages = kv(f);
  int64_t need = 0;
  for (const Agent* a : in) need += pages.pages_for_append(a->sa.seq, a->prefill_left > 0 ? a->prefill_left : 1);
  const int64_t total = pages.pages_per_pe() * pages.pes();
  size_t victim = order.size();
  while (need > total - pages.in_use()) {
    while (victim > at + 1 && (!order[victim - 1]->admitted || order[victim - 1]->pool != f.pool ||
                               pages_held(*order[victim - 1], pages, false) == 0))
      --victim;
    if (victim <= at + 1) {
      preempt(f);
      return false;
    }
    preempt(*order[--victim]);
  }
  return true;
}

// Preemption (at a step boundary, nothing of the workflow in flight): its pages go back to the
// pool and it waits for admission again, keeping its progress (rounds, branches, tokens out). The
// preemption rule keeps what it needs to restore (recompute: the tokens to prefill again; swap:
// the pages sent to host memory).
void Engine::preempt(Flow& f) {
  KvPageManager& pages = kv(f);
  PreemptionResult& p = *preempt_;
  WorkflowRecord& wr = log_.workflow(f.record);
  p.workflows_preempted += wr.preemptions == 0;
  ++wr.preemptions;
  ++p.preemptions;
  log_.preempted(f.parent.request);
  for (const Agent& b : f.branches)
    if (b.state != AgentState::done) log_.preempted(b.request);
  const int parent_tokens = pages.live(f.parent.sa.seq) ? pages.length(f.parent.sa.seq) : 0;
  PreemptionEvent e;
  e.at_ns = now_;
  e.workflow = f.spec->id;
  const int64_t in_use = pages.in_use();
  PreemptionSink out = sink(f);
  preemption_->preempt(f, pages, parent_tokens, out, e);
  if (pages.live(f.parent.sa.seq)) pages.release(f.parent.sa.seq);
  for (Agent& b : f.branches)
    if (pages.live(b.sa.seq)) pages.release(b.sa.seq);
  f.parent.sa.seq = -1;
  for (Agent& b : f.branches) b.sa.seq = -1;
  e.pages = in_use - pages.in_use();
  p.events.push_back(e);
  f.admitted = false;
  --active_;
}

// A preempted workflow is admitted again: its parent starts a new sequence, and the preemption
// rule restores the rest.
void Engine::readmit(Flow& f) {
  KvPageManager& pages = kv(f);
  f.admitted = true;
  ++active_;
  f.parent.sa.seq = pages.create();
  PreemptionEvent e;
  e.at_ns = now_;
  e.workflow = f.spec->id;
  e.restore = true;
  PreemptionSink out = sink(f);
  preemption_->readmit(f, pages, out, e);
  preempt_->events.push_back(e);
  f.parent.sa.length = pages.length(f.parent.sa.seq);
}

PreemptionSink Engine::sink(const Flow& f) {
  Pool& pool = *pools_[size_t(f.pool)];
  return {*preempt_, log_.workflow(f.record), pool.swap_pending_ns, pool.swap_pending_bytes, hw_.host};
}

// recompute: the parent's sequence is back; the round's branches fork it again (those still
// running prefill their own tokens again in their next step, in prefill_left).
void Engine::refork(Flow& f) {
  KvPageManager& pages = kv(f);
  f.fork_pending = false;
  for (Agent& b : f.branches) {
    b.sa.seq = pages.fork(f.parent.sa.seq);
    b.sa.length = pages.length(b.sa.seq);
  }
}

// The agents of `f` with work in its pool's next step: its branches that prefill or decode
// (one in a tool call or finished has left the batch), or its parent.
std::vector<Agent*> Engine::with_work(Flow& f) {
  std::vector<Agent*> in;
  if (f.in_round && !f.fork_pending) {
    for (Agent& b : f.branches)
      if (b.has_work()) in.push_back(&b);
  } else if (f.parent.has_work()) {
    in.push_back(&f.parent);
  }
  return in;
}

void Engine::add_part(Flow* f, std::vector<Agent*> in, StepBuild& b) {
  for (const Agent* a : in) b.tokens += a->prefill_left > 0 ? a->prefill_left : 1;
  b.agents += int(in.size());
  // The parent's part (in a round only while a recompute prefills its sequence again) or the branches'.
  const bool parent_part = in.size() == 1 && in[0] == &f->parent;
  Step part;
  part.phase = parent_part ? PhaseType::prefill : PhaseType::decode;
  KvPageManager& pages = kv(*f);
  part.kv_since = f->kv_since;
  for (Agent* a : in) {
    const bool prefill = a->prefill_left > 0;
    if (prefill && !parent_part) part.phase = PhaseType::fanout;
    if (!prefill && parent_part) part.phase = PhaseType::decode;
    pages.append(a->sa.seq, a->sa.origin, prefill ? a->prefill_left : 1,
                 [f](const KvPageManager& kv, SeqId s) { return f->placer(kv, s); });
    a->sa.length = pages.length(a->sa.seq);
    a->sa.new_tokens = prefill ? a->prefill_left : 1;
    part.agents.push_back(a->sa);
  }
  if (w_.scheduler.batch_branches) {
    b.parts.push_back(std::move(part));
  } else {  // the baseline: every agent a part of its own
    for (const StepAgent& sa : part.agents) {
      b.parts.push_back(Step{part.phase, 0, {sa}, ""});
      b.parts.back().kv_since = part.kv_since;
    }
  }
  f->kv_since = pages.writes();
  b.members.emplace_back(f, std::move(in));
}

// The pool's next step: one part per workflow with work, in the policy's order, up to the token
// budget (a part that alone exceeds it runs alone). P-B-D's prefill pool takes up to
// micro_batch prompts, each only while the buffer has a slot for it (back-pressure).
StepBuild Engine::build_step(Pool& pool) {
  StepBuild b;
  const int pool_index = pool.index;
  const bool prefill = is_prefill(pool);
  pool.blocked = false;
  const std::vector<Flow*> order = ordered(true);
  for (size_t at = 0; at < order.size(); ++at) {
    Flow* f = order[at];
    if (!f->admitted) continue;  // preempted for an earlier part of this step
    if (f->pool != pool_index || f->stage == Stage::buffered || f->stage == Stage::transfer) continue;
    if (prefill) {
      if (buffered() + in_prefill_steps() + int(b.members.size()) >= pbd_->buffer_max) {
        pool.blocked = b.members.empty();
        break;
      }
      if (f->parent.prefill_left == 0) {  // cached whole: nothing to prefill
        to_buffer(*f);
        continue;
      }
      if (int(b.members.size()) >= pbd_->micro_batch) break;
    }
    std::vector<Agent*> in = with_work(*f);
    if (in.empty()) continue;
    int t = 0;
    for (const Agent* a : in) t += a->prefill_left > 0 ? a->prefill_left : 1;
    if (!b.parts.empty() && b.tokens + t > w_.scheduler.max_batch_tokens) continue;
    if (preempt_ && !make_room(*f, in, order, at)) continue;
    add_part(f, std::move(in), b);
  }
  return b;
}

void Engine::start_step(Pool& pool, StepBuild b) {
  StepSample sample;
  sample.pool = pool.index;
  sample.start_ns = now_;
  sample.workflows = int(b.members.size());
  sample.agents = b.agents;
  sample.tokens = b.tokens;
  for (const auto& p : pools_) sample.kv_pages += p->kv->in_use();
  sample.active = active_;
  for (const Flow& f : live()) sample.waiting += f.arrived && !f.admitted;
  // A boundary's swaps run before the step's jobs (alone when no workflow has a part).
  const StepCost cost = b.parts.empty() ? StepCost{} : timer_.time(pool, b.parts, now_, sample.reused);
  sample.swap_ns = pool.swap_pending_ns;
  sample.swap_bytes = pool.swap_pending_bytes;
  pool.swap_pending_ns = 0;
  pool.swap_pending_bytes = 0;
  if (sample.swap_ns > 0) {  // the replica's host link: swaps wait for another pool's swaps or transfer
    double& link_free = host_link_free_[size_t(pool.replica)];
    sample.host_wait_ns = std::max(0.0, link_free - now_);
    link_free = now_ + sample.host_wait_ns + sample.swap_ns;
  }
  sample.ns = sample.host_wait_ns + sample.swap_ns + cost.ns;
  sample.hbm_bytes = cost.hbm_bytes;
  sample.predicted = cost.predicted;
  sample.energy_j = cost.energy_j;
  sample.static_j = cost.static_j;
  if (res_.static_w_per_group == 0 && cost.ns > 0)
    res_.static_w_per_group = cost.static_j / (cost.ns * 1e-9) / double(pool.hw.groups);
  res_.steps.push_back(sample);
  pool.stepping = true;
  pool.step_end = now_ + sample.ns;
  if (is_prefill(pool))  // P-B-D: the prompts' compute, after the boundary's swaps (per-layer migration)
    for (auto& [f, in] : b.members) {
      f->prefill_start_ns = now_ + sample.host_wait_ns + sample.swap_ns;
      f->prefill_ns = cost.ns;
    }
  pool.members = std::move(b.members);
  ++pool.steps;
  pool.busy_ns += sample.ns;
  // The step's energy is shared among its requests by the new tokens each brings to it.
  int64_t step_tokens = 0;
  for (auto& [f, in] : pool.members)
    for (const Agent* a : in)
      if (a->request >= 0) step_tokens += a->sa.new_tokens;
  for (auto& [f, in] : pool.members)
    for (Agent* a : in)
      if (a->request >= 0) {
        log_.scheduled(a->request, now_);
        if (step_tokens > 0) log_.add_energy(a->request, cost.energy_j * double(a->sa.new_tokens) / double(step_tokens));
      }
}

// The pool's step has ended (now_ is its end): its agents' tokens are out.
void Engine::complete_step(Pool& pool) {
  pool.stepping = false;
  for (auto& [f, in] : pool.members) {
    for (Agent* a : in) {
      if (a->prefill_left > 0) {
        f->remaining -= a->prefill_left;
        a->prefill_left = 0;
      } else {
        --a->decode_left;
        --f->remaining;
        log_.token(a->request, f->record, now_);
      }
    }
    // Agents that finished their work (the parent last: its next stage may fork new branches).
    const bool parent_in = in.size() == 1 && in[0] == &f->parent;
    if (parent_in) {
      if (f->fork_pending) refork(*f);
      else if (!f->parent.has_work()) life_.finish_agent(*f, f->parent, true, kv(*f), now_);
    } else {
      const int round = f->round;  // a join ends the round (and may start the next): stop there
      for (Agent* a : in) {
        if (f->round != round) break;
        if (!a->has_work() && a->state == AgentState::run) life_.finish_agent(*f, *a, false, kv(*f), now_);
      }
    }
  }
  pool.members.clear();
}

// The results' totals known before the first step: the scheduler, the pools' pages.
void Engine::start_results() {
  res_.scheduler = policy_.name;
  res_.kv_copies = kv_copies();
  res_.pes = prefill_pool().kv->pes();
  for (const auto& p : pools_) {
    res_.pages_per_pe = p->kv->pages_per_pe();  // co-located: the chip's; P-B-D: the decode pool's
    res_.pages_total += p->kv->pages_per_pe() * p->kv->pes();
  }
}

// Every workflow's state and record; one that cannot fit its pools even alone is an input error.
void Engine::start_flows() {
  // Every slice has the pages of decode_pool() (the last): a workflow that fits one fits each.
  const int64_t admit_total = pages_total(prefill_pool()), decode_total = pages_total(decode_pool());
  flows_.resize(specs_.size());
  for (size_t i = 0; i < specs_.size(); ++i) {
    Flow& f = flows_[i];
    f.spec = &specs_[i];
    f.record = int(i);
    f.reserved = reservation(specs_[i], w_.scenario.kv.page_tokens,
                             w_.scheduler.share_prefix && w_.scheduler.batch_branches);
    f.remaining = work_tokens(specs_[i]);
    const int64_t first = pbd_ ? prompt_pages(specs_[i], w_.scenario.kv.page_tokens) : f.reserved;
    for (const auto& [need, total, pool] : {std::tuple{first, admit_total, &prefill_pool()},
                                             std::tuple{f.reserved, decode_total, &decode_pool()}})
      if (need > total)
        throw InputError(w_.file + ": workflow " + std::to_string(i) + " (template " +
                         (specs_[i].tmpl >= 0 ? w_.templates[size_t(specs_[i].tmpl)].name : std::string("azure_csv")) +
                         ", prompt_tokens " + std::to_string(specs_[i].prompt_tokens) + ") needs up to " +
                         std::to_string(need) + " KV pages, more than the " + (pbd_ ? pool->name + " pool's " : "pool's ") +
                         std::to_string(total) + " (" + pool->capacity_note + ")");
    WorkflowRecord wr;
    wr.id = specs_[i].id;
    wr.tmpl = specs_[i].tmpl >= 0 ? w_.templates[size_t(specs_[i].tmpl)].name : "azure_csv";
    wr.arrival_ns = specs_[i].arrival_ns;
    wr.requested_tokens = specs_[i].requested_tokens();
    wr.reserved_pages = f.reserved;
    log_.add_workflow(wr);
  }
}

// Before any step: the host memory of the largest step a workflow takes (a run's estimate, one
// shape per distinct workflow), so a workflow too large for the machine is refused (InputError)
// instead of running out of memory mid-run.
void Engine::preflight() const {
  std::vector<PreflightStep> shapes;
  std::set<std::tuple<int, int, int, std::vector<int>>> seen;  // prompt, cached, join tokens, each round's new tokens
  for (const WorkflowSpec& s : specs_) {
    std::vector<int> rounds;
    for (const auto& round : s.rounds) {
      rounds.push_back(-1);  // round separator
      for (const BranchSpec& b : round) rounds.push_back(b.new_tokens);
    }
    if (!seen.insert({s.prompt_tokens, s.cached_tokens, s.join_tokens, rounds}).second) continue;
    add_step_shapes(w_, s, s.tmpl >= 0 ? "template " + w_.templates[size_t(s.tmpl)].name : std::string("azure_csv"),
                    shapes);
  }
  preflight_steps(shapes, hw_, opt_.hw_file);
}

// What happened by now: steps that ended (a pool runs its steps back to back; the pools run at
// once), arrivals, tool calls that returned (in pools at a step boundary), a KV transfer's end.
void Engine::take_events() {
  for (auto& p : pools_)
    if (p->stepping && p->step_end <= now_) complete_step(*p);
  while (next_arrival_ < flows_.size() && flows_[next_arrival_].spec->arrival_ns <= now_)
    flows_[next_arrival_++].arrived = true;
  while (live_begin_ < next_arrival_ && flows_[live_begin_].done) ++live_begin_;
  for (Flow& f : live()) {
    if (!f.admitted || f.done || !f.in_round || f.fork_pending || pools_[size_t(f.pool)]->stepping) continue;
    const int round = f.round;  // a join ends the round (and may start the next): stop there
    for (size_t b = 0; b < f.branches.size() && f.round == round; ++b)
      if (f.branches[b].state == AgentState::tool && f.branches[b].tool_until <= now_)
        life_.branch_done(f, f.branches[b], kv(f), f.branches[b].tool_until, now_);
  }
  if (!transfer_.empty() && transfer_end_ <= now_) finish_transfer();
}

// Admission in the policy's order, by the admission rule and under the workflow limit (P-B-D:
// into a prefill pool, for the prompt's pages; prefix_affinity: into the least-loaded slice it
// fits, where all its rounds and branches then run).
void Engine::admit_waiting() {
  const size_t entries = pbd_ ? size_t(prefill_pools_) : pools_.size();  // where a new workflow may enter
  // A rule that grows on demand: the admitted workflows' next parts come first (free_for_new),
  // then what the workflows admitted at this boundary need now is promised to them (a new one's
  // prompt and a recompute's prefill take their pages only in the step).
  std::vector<int64_t> promised(pools_.size(), 0),
      free_now = admission_->grows_on_demand() ? free_for_new() : std::vector<int64_t>(pools_.size(), 0);
  const auto room = [&](size_t i) { return room_of(*pools_[i], free_now[i], promised[i]); };
  for (Flow* f : ordered(false)) {
    if (w_.scheduler.max_workflows > 0 && active_ >= w_.scheduler.max_workflows) break;
    const int64_t need = admission_->need(candidate(*f));
    std::optional<size_t> to;
    // A new workflow enters a pool of [0, entries); a preempted one comes back to its own (its
    // slice; P-B-D: the pool it was preempted from).
    const size_t first = f->started ? size_t(f->pool) : 0, end = f->started ? first + 1 : entries;
    for (size_t i = first; i < end; ++i) {
      // Either way its cached prefix's pages, placed by the prefix rule on given PEs, must fit
      // those PEs now (the rest goes where there is room).
      const bool fits = admission_->fits(need, room(i)) && prefix_fits(*f, *pools_[i]);
      if (fits && (!to || admission_->load(room(i)) < admission_->load(room(*to)))) to = i;
    }
    if (!to) {
      if (policy_.head_of_line) break;
      continue;
    }
    promised[*to] += need;
    f->started ? readmit(*f) : admit(*f, int(*to));
  }
}

// P-B-D: an idle decode pool pulls (the lowest first; one transfer at a time).
void Engine::pull_idle() {
  for (size_t i = size_t(prefill_pools_); pbd_ && i < pools_.size() && transfer_.empty(); ++i)
    if (!pools_[i]->stepping) pull(*pools_[i]);
}

size_t Engine::finished() const {
  size_t n = live_begin_;  // every flow before it is done
  for (const Flow& f : live()) n += f.done;
  return n;
}

void Engine::start_steps() {
  for (auto& p : pools_)
    if (!p->stepping) {
      StepBuild b = build_step(*p);
      if (!b.parts.empty() || p->swap_pending_ns > 0) start_step(*p, std::move(b));
    }
}

// The next event: a step's end; for an idle pool, what could give it work (an arrival, a tool
// call's return, a transfer's end).
double Engine::next_event() const {
  double next = kNever;
  bool idle = false;
  for (const auto& p : pools_) {
    if (p->stepping) next = std::min(next, p->step_end);
    else idle = true;
  }
  // An arrival can give work to the pool it enters: an idle P-B-D prefill pool, or any idle slice.
  bool prefill_idle = false;
  for (const auto& p : pools_) prefill_idle = prefill_idle || (is_prefill(*p) && !p->stepping);
  if ((pbd_ ? prefill_idle : idle) && next_arrival_ < flows_.size())
    next = std::min(next, flows_[next_arrival_].spec->arrival_ns);
  for (const Flow& f : live())
    if (f.admitted && !f.done && !f.fork_pending && !pools_[size_t(f.pool)]->stepping)
      for (const Agent& b : f.branches)
        if (b.state == AgentState::tool) next = std::min(next, b.tool_until);
  if (idle && !transfer_.empty()) next = std::min(next, transfer_end_);
  return next;
}

// The clock moves to the next event; with none while workflows are unfinished, the engine has a bug.
void Engine::advance_clock() {
  const double next = next_event();
  if (!(next > now_) || next == kNever)
    throw std::logic_error("serve: no work, no arrival and no tool call pending with " +
                           std::to_string(flows_.size() - finished()) + " workflows unfinished");
  for (const auto& p : pools_)  // P-B-D: each prefill pool's time idle with prompts the bound stopped
    if (is_prefill(*p) && p->blocked && !p->stepping) pbd_->backpressure_ns += next - now_;
  now_ = next;
}

// The event loop: at every boundary take what happened, admit, start the idle pools' steps, and
// move the clock to the next event.
ServeResult Engine::run() {
  start_results();
  start_flows();
  preflight();
  while (true) {
    if (opt_.poll) opt_.poll();
    take_events();
    admit_waiting();
    pull_idle();
    const size_t done = finished();
    if (opt_.progress) opt_.progress({done, flows_.size(), log_.finished(), res_.steps.size(), now_});
    if (done == flows_.size()) break;
    if (opt_.stop_requested && opt_.stop_requested()) {
      res_.partial = res_.interrupted = true;
      res_.partial_reason = "stopped before every workflow finished (SIGINT)";
      break;
    }
    if (now_ >= opt_.stop_at_ns) {
      res_.partial = true;
      res_.partial_reason = "stopped at the first step boundary at or after " + report::time_text(opt_.stop_at_ns) +
                            " of simulated time (--stop-at-s)";
      break;
    }
    start_steps();
    // A prompt cached whole enters the buffer while its prefill pool builds a step, without one:
    // an idle decode pool pulls it now (no step's end would wake it).
    pull_idle();
    advance_clock();
  }
  return finish();
}

// A whole model: each copy's operators and memory map (the KV pool's peak per PE over the pools
// that hold the copy). Co-located and prefix_affinity: the summary's; P-B-D: each pool's.
void Engine::finish_models(std::vector<Json>& operators, std::vector<Json>& memory_maps) const {
  operators.resize(models_.size());
  memory_maps.resize(models_.size());
  for (size_t m = 0; m < models_.size(); ++m) {
    operators[m] = models_[m]->steps->json();
    operators[m].erase("by_step");  // a run's per-step breakdown; serve's steps are in requests.csv and the samples
    std::vector<int64_t> peak;
    int64_t pages_per_pe = 0;
    for (const auto& p : pools_) {
      if (p->model != models_[m]) continue;
      pages_per_pe = p->kv->pages_per_pe();
      peak.resize(size_t(p->kv->pes()), 0);
      for (int pe = 0; pe < p->kv->pes(); ++pe) peak[size_t(pe)] = std::max(peak[size_t(pe)], p->kv->peak(pe));
    }
    memory_maps[m] = memory_map_json(models_[m]->weights, w_.scenario.model.config_file,
                                     kv_slot_bytes(models_[m]->hw.groups), pages_per_pe, peak);
  }
}

// P-B-D: each stage (prefill, decode): its pools' totals (one pool: that pool), and each pool's
// own when it has several (DP > 1); a whole model's copy per stage.
void Engine::finish_pbd(std::vector<Json>& operators, std::vector<Json>& memory_maps) {
  const auto stage = [&](const std::string& name, size_t first, size_t end, PoolStats& sum,
                         std::vector<PoolStats>& each) {
    for (size_t i = first; i < end; ++i) {
      const Pool& p = *pools_[i];
      const PoolStats s{p.name, p.hw.groups, pages_total(p), p.kv->peak_total(), p.steps, p.busy_ns, 0, {}, {}};
      if (end - first > 1) each.push_back(s);
      sum.groups += s.groups;
      sum.pages_total += s.pages_total;
      sum.peak_pages += s.peak_pages;
      sum.steps += s.steps;
      sum.busy_ns += s.busy_ns;
    }
    sum.name = name;
  };
  stage("prefill", 0, size_t(prefill_pools_), pbd_->prefill, pbd_->prefill_pools);
  stage("decode", size_t(prefill_pools_), pools_.size(), pbd_->decode, pbd_->decode_pools);
  if (models_.size() == 2) {  // a whole model: the stages' copies (each stage's pools share one plan)
    pbd_->prefill.operators = std::move(operators[0]);
    pbd_->prefill.memory_map = std::move(memory_maps[0]);
    pbd_->decode.operators = std::move(operators[1]);
    pbd_->decode.memory_map = std::move(memory_maps[1]);
  }
  res_.pbd = std::move(pbd_);
}

ServeResult Engine::finish() {
  res_.end_ns = now_;
  log_.move_to(res_);
  res_.steps_simulated = timer_.simulated();
  res_.steps_reused = timer_.reused();
  res_.parts_by_policy = timer_.parts_by_policy();
  std::vector<Json> operators, memory_maps;
  finish_models(operators, memory_maps);
  if (models_.size() == 1) {
    res_.operators = std::move(operators[0]);
    res_.memory_map = std::move(memory_maps[0]);
  }
  for (auto& p : pools_) {
    res_.peak_pages += p->kv->peak_total();
    res_.in_use_end += p->kv->in_use();
    res_.allocations += p->kv->allocations();
    res_.frees += p->kv->frees();
    p->kv->check_invariants();
  }
  if (pbd_) finish_pbd(operators, memory_maps);
  res_.preemption = std::move(preempt_);
  res_.placement = w_.scheduler.placement;
  if (w_.scheduler.sliced())
    for (const auto& p : pools_)
      res_.slices.push_back({p->name, p->hw.groups, pages_total(*p), p->kv->peak_total(), p->steps, p->busy_ns,
                             p->workflows, {}, {}});
  finish_replicas();
  if (sampler_) {
    res_.sampling = sampling_result(*sampler_);
    std::vector<HeldBack> checks;
    for (const PoolModel* m : models_) {
      const ModelSteps::GridStats& g = m->steps->grid_stats();
      res_.sampling->operators.simulated += g.simulated;
      res_.sampling->operators.interpolated += g.interpolated;
      for (const auto& [interpolated, simulated] : g.checks) checks.push_back({interpolated, simulated, 0.0});
    }
    res_.sampling->operators.error = error_stats(checks);
  }
  return res_;
}

void Engine::finish_replicas() {
  const Parallelism& split = w_.scenario.model.parallel;
  if (split.dp == 1) return;
  res_.chips_per_replica = split.chips();
  res_.replicas.resize(size_t(split.dp));
  for (int r = 0; r < split.dp; ++r) res_.replicas[size_t(r)].name = "replica" + std::to_string(r);
  for (const auto& p : pools_) {
    PoolStats& r = res_.replicas[size_t(p->replica)];
    r.groups += p->hw.groups;
    r.pages_total += pages_total(*p);
    r.peak_pages += p->kv->peak_total();
    r.steps += p->steps;
    r.busy_ns += double(p->hw.groups) * p->busy_ns;  // groups x ns, divided below
    r.workflows += p->workflows;
  }
  for (PoolStats& r : res_.replicas) r.busy_ns /= double(r.groups);
}

}  // namespace

namespace {

// One timing field's bytes in a step key: padding-free element arrays in one append, the rest
// part by part (KvSegment has padding bytes), the agents by their count (timing_equal, job.h).
template <class T>
void put_key(KeyWriter& k, const T& v) {
  k.put(v);
}
void put_key(KeyWriter& k, const std::string& v) { k.str(v); }
void put_key(KeyWriter& k, const std::vector<std::string>& agents) { k.put(agents.size()); }
template <class T>
void put_key(KeyWriter& k, const std::vector<T>& v);
void put_key(KeyWriter& k, const QTile& t) {
  k.put(t.row_begin);
  k.put(t.row_end);
  put_key(k, t.pes);
}
void put_key(KeyWriter& k, const KvShard& s) {
  k.put(s.tokens);
  put_key(k, s.info);
}
void put_key(KeyWriter& k, const KvSegment& g) {
  k.put(g.src_pe);
  k.put(g.first);
  k.put(g.count);
  k.put(g.remote);
}
template <class T>
void put_key(KeyWriter& k, const std::vector<T>& v) {
  if constexpr (std::is_trivially_copyable_v<T> && std::has_unique_object_representations_v<T>) {
    k.vec(v);
  } else {
    k.put(v.size());
    for (const T& x : v) put_key(k, x);
  }
}

}  // namespace

std::string step_key(const std::vector<AttentionJob>& jobs, const std::string& prefix) {
  KeyWriter k{prefix};
  k.put(jobs.size());
  for (const AttentionJob& j : jobs) {
    k.put(j.values);
#define AHBM_KEY_TIMING_FIELD(field, kind) put_key(k, j.field);
    AHBM_JOB_TIMING_FIELDS(AHBM_KEY_TIMING_FIELD)
#undef AHBM_KEY_TIMING_FIELD
  }
  return k.s;
}

ServeResult run_engine(const Workload& w, const HwConfig& hw, const ServeOptions& opt, StepSampler* sampler,
                       ModelPlans* plans) {
  if (hw.power_cap_w > 0)
    throw InputError(opt.hw_file + ": power_cap_w (the chip's power cap) = " + Json(hw.power_cap_w).dump() +
                     " is not applied by serve (allowed: 0 = off; the cap applies to `ahbm-sim run`, docs/energy.md)");
  Engine e(w, hw, opt, sampler, plans);
  return e.run();
}

}  // namespace ahbm::serve
