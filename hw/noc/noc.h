#pragma once
// The network that carries Q tiles from the Q source to the CUBEs (multicast) and results back
// to the host. One abstract interface; concrete models live one per source file in this folder
// and are listed once in builtin_models.cpp. A user model is a subclass plus one
// NocRegistry::add() call (see docs/noc.md and tools/examples/).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <systemc>

#include "hw/common/base/json_reader.h"
#include "hw/common/base/registry.h"
#include "hw/common/config/hw_config_param.h"
#include "hw/common/observe/stats.h"
#include "hw/common/base/timing.h"

namespace ahbm {

class TraceSink;
class SpanRecorder;

struct NocPacket {
  uint64_t id = 0;        // assigned by Noc::send
  int src = 0;            // endpoint index
  std::vector<int> dsts;  // endpoint indices; more than one = multicast
  uint64_t bytes = 0;     // payload size; models split it into flits as they see fit
  std::shared_ptr<const void> payload;  // carried, never inspected, by the network
  int tag = 0;                          // meaning belongs to the sender (e.g. global tile index)
  sc_core::sc_time created;             // stamped by Noc::send
  // On a delivered copy: when its head left the source for the network (flit-level models: the
  // cycle it entered the injection channel, after any source queueing); Noc::send sets it to
  // `created`, which models without source queues keep. Tail arrival minus this is the network
  // latency, arrival minus `created` the total latency.
  sc_core::sc_time injected;
  int hops = -1;  // on a delivered copy: routers traversed to this endpoint (-1: model has no routers)
};

// Whoever sits at an endpoint. Called from the network's process; must not wait.
class NocClient {
 public:
  virtual ~NocClient() = default;
  virtual void noc_receive(int endpoint, const NocPacket& packet) = 0;
};

// One unidirectional channel of a model and the flits it has carried so far (each flit holds a
// channel for one cycle). Traffic generators read these to compute per-link utilisation.
struct NocLink {
  std::string name;  // e.g. "r(0,0)->r(1,0)", "qsrc->r1" (injection), "r2->g0.cube0" (ejection)
  std::string kind;  // "link" (router to router), "inject" or "eject"
  uint64_t flits = 0;
  std::vector<uint64_t> vc_flits;  // per virtual channel, on router-to-router links of models with VCs (else empty)
};

// Called by a model to add a span to the latency trace; the chip maps the packet's tag to the
// tile's phase and agent. `component` is e.g. "noc" or "noc.g0.cube1".
using NocSpanHook = std::function<void(const std::string& component, const char* activity, const NocPacket& packet,
                                       const sc_core::sc_time& start, const sc_core::sc_time& end)>;

// Counters every NoC model reports (Noc::report_stats); models add their own.
struct NocStats {
  static constexpr stats::Sum<uint64_t> packets_sent{"packets_sent", "packets", "packets injected"};
  static constexpr stats::Sum<uint64_t> deliveries{"deliveries", "deliveries", "packet deliveries, one per destination"};
  static constexpr stats::Sum<uint64_t> bytes_delivered{"bytes_delivered", "bytes", "payload bytes delivered, summed over destinations"};
  static constexpr stats::Sum<uint64_t> packets_in_flight{"packets_in_flight", "packets", "packets not yet delivered at the end of the run"};
  // What energy is read from (hw/chip/energy.h): flits through one router and out of its output
  // link (flit-level models: router-to-router and ejection traversals; models without routers:
  // one per delivered flit), and the routers the model has (their static power).
  static constexpr stats::Sum<uint64_t> flit_hops{"flit_hops", "flits", "flits through one router and out of its output link"};
  static constexpr stats::Label<int64_t> routers{"routers", "routers", "routers the model has (their static power)"};
  // Children "multicast_completion" and "unicast_completion": creation to last delivery.
  static constexpr const char* multicast = "multicast_completion";
  static constexpr const char* unicast = "unicast_completion";
  static constexpr stats::Sum<uint64_t> packets{"packets", "packets", "packets completed"};
  static constexpr stats::TimeMeanNs avg_ns{"avg_ns", "ns", "mean creation-to-last-delivery time"};
  static constexpr stats::Max<double> max_ns{"max_ns", "ns", "worst creation-to-last-delivery time"};
};

// What a model is given when it is built.
struct NocContext {
  Json params;                          // the model's own parameters (hw config noc.params)
  std::string params_field = "noc.params";
  std::string config_file = "hw config";
  std::vector<std::string> endpoints;   // endpoint names: "host", "qsrc", "g0.cube0", ...
  Clock clock{1.0};
  TraceSink* trace = nullptr;
  SpanRecorder* spans = nullptr;
  NocSpanHook span_hook;                // optional
};

// The network as an analytical model sees it (the policy cost model, runtime/policy/cost_model):
// a transfer of B bytes between two endpoints takes about latency_ns + B / bandwidth_gbps.
struct NocEstimate {
  double latency_ns = 10;      // zero-load latency of a typical endpoint-to-endpoint transfer, serialisation excluded
  double bandwidth_gbps = 0;   // bytes per ns one endpoint port can inject or eject (0 = unlimited)
  // For the energy estimate (NocStats::flit_hops): a packet of B bytes is ceil(B / flit_bytes)
  // flits, each counted `hops` times on its way to one destination (routers traversed; a model
  // without routers counts each delivered flit once).
  double flit_bytes = 64;
  double hops = 1;
  double time_ns(uint64_t bytes) const { return latency_ns + (bandwidth_gbps > 0 ? double(bytes) / bandwidth_gbps : 0.0); }
  double flit_hops(uint64_t bytes) const { return std::max(1.0, std::ceil(double(bytes) / flit_bytes)) * hops; }
};

// What a model's estimate is computed from: its parameters and the clock, without building it
// (the cost model runs before a chip is elaborated and knows no endpoints).
struct NocEstimateInput {
  Json params;                          // hw config noc.params
  double clock_ghz = 1.0;               // chip clock
  std::string params_field = "noc.params";
  std::string config_file = "hw config";
};

// The estimate of a model that does not provide one (docs/noc.md, "Adding a model"): the figures
// of the default flit-level mesh between two CUBEs, 2 routers x (4 router + 1 link) cycles of
// latency and one 64-byte flit per cycle per port. A model whose network differs should give its
// own (a static estimate(), see noc_model below).
NocEstimate default_noc_estimate(const NocEstimateInput& in);

class Noc : public sc_core::sc_module, public StatsProvider {
 public:
  Noc(sc_core::sc_module_name name, const NocContext& ctx);
  void attach(int endpoint, NocClient* client);
  int endpoint_count() const { return int(ctx_.endpoints.size()); }
  const std::string& endpoint_name(int e) const { return ctx_.endpoints.at(size_t(e)); }

  // Accepts a packet at the current time. Non-blocking: stamps id and creation time, checks the
  // endpoints, then hands it to the model (inject), which queues it at the source.
  void send(NocPacket packet);
  // Model statistics (summary.json "noc"). The base reports packets, deliveries, bytes and the
  // creation-to-last-delivery time of multicast and unicast packets (NocStats); a model that
  // overrides this calls the base first and adds its own counters.
  void report_stats(StatsNode& node) const override;
  // Packets sent and not yet delivered to every destination.
  uint64_t packets_in_flight() const { return pending_.size(); }
  // Payload bytes one flit carries: traffic generators size packets with it. Models without
  // flits keep the default.
  virtual uint64_t flit_bytes() const { return 64; }
  // Flits that went through one router and its output link so far (NocStats::flit_hops); models
  // without routers: one per flit delivered to each destination (ceil(bytes / flit_bytes())).
  virtual uint64_t flit_hops() const { return delivered_flits_; }
  // Routers of the model (0: none, e.g. the ideal network).
  virtual int routers() const { return 0; }
  // Every channel with its flit count so far; empty for models without channels.
  virtual std::vector<NocLink> links() const { return {}; }

  // Reuse of one elaborated chip for several runs (hw/chip/simulate.h). A model that can go back
  // to the state it was built in says so here and does it in restart(); with the default (false)
  // the simulator elaborates a new chip, and a new model, for every run.
  virtual bool restartable() const { return false; }
  // Between two runs, with no packet in flight and the simulated time at the next run's start:
  // zeroes the base's counters and calls the model's restart().
  void begin_run();

 protected:
  // The model's part of send(): `packet` has its id and creation time set.
  virtual void inject(NocPacket packet) = 0;
  // Hands a packet to the client at `endpoint` now, counts it, checks that each destination
  // receives a packet exactly once (std::logic_error otherwise) and records a "noc_deliver" span
  // (creation to arrival) on component "noc.<endpoint>".
  void deliver(int endpoint, const NocPacket& packet);
  void record_span(const std::string& component, const char* activity, const NocPacket& packet,
                   const sc_core::sc_time& start, const sc_core::sc_time& end) const;
  const NocContext& context() const { return ctx_; }
  // The model's part of begin_run(): back to the state it was built in (counters, channels).
  // Only called when restartable() is true.
  virtual void restart() {}

 private:
  struct Pending {
    sc_core::sc_time created;
    std::vector<int> waiting;  // destinations not yet delivered
    bool multicast;
  };
  struct Completion {
    uint64_t packets = 0;
    double sum_ns = 0, max_ns = 0;
    void report(StatsNode& node) const;
  };
  NocContext ctx_;
  std::vector<NocClient*> clients_;
  std::map<uint64_t, Pending> pending_;
  uint64_t next_id_ = 1;
  uint64_t packets_sent_ = 0;
  uint64_t deliveries_ = 0;
  uint64_t bytes_delivered_ = 0;
  uint64_t delivered_flits_ = 0;
  Completion multicast_, unicast_;
};

struct NocModelInfo {
  std::string name;
  std::string description;  // one line, shown by `ahbm-sim nocs`
  std::function<std::unique_ptr<Noc>(sc_core::sc_module_name, const NocContext&)> make;
  // The model's own estimate for the cost model; empty = default_noc_estimate. Bad parameters it
  // reads are InputErrors, as when the model is built.
  std::function<NocEstimate(const NocEstimateInput&)> estimate;
  NocEstimate estimate_for(const NocEstimateInput& in) const { return estimate ? estimate(in) : default_noc_estimate(in); }
  // The model's parameters (noc.params), declared as parameter-table rows (path = key): the
  // JSON Schema, the table in docs/noc.md and the fuzz dictionary are generated from them.
  // Empty = undeclared (the model still validates what it reads).
  std::vector<HwParam> params;
  static constexpr const char* kKind = "NoC model";  // in Registry's errors
};

// Models by name. An object, not a global: a program builds one (usually with_builtin_models())
// and may add its own models before handing it to the simulation.
class NocRegistry {
 public:
  // `kind` names the registry's models in its errors: "NoC model", or "system network model" for
  // the chip-to-chip networks (hw/system/system_network.h), which are Nocs too.
  explicit NocRegistry(const char* kind = NocModelInfo::kKind) : kind_(kind) {}
  static NocRegistry with_builtin_models();
  void add(NocModelInfo info) { models_.add_or_replace(std::move(info)); }  // replaces a model of the same name
  // Throws InputError naming `field` in `file` and the valid names when `name` is unknown.
  const NocModelInfo& get(const std::string& name, const std::string& file = "hw config",
                          const std::string& field = "noc.model") const {
    return models_.get(name, file + ": " + field, kind_);
  }
  std::vector<std::string> names() const { return models_.names(); }
  const std::vector<NocModelInfo>& models() const { return models_.entries(); }
  // Every model's declared parameters, in registry order (the schema and docs generators).
  std::vector<PluginParams> params() const {
    std::vector<PluginParams> out;
    for (const NocModelInfo& m : models()) out.push_back({m.name, m.params});
    return out;
  }

 private:
  const char* kind_;
  Registry<NocModelInfo> models_;
};

namespace detail {
template <class Model, class = void>
struct HasNocParams : std::false_type {};
template <class Model>
struct HasNocParams<Model, std::void_t<decltype(std::vector<HwParam>{Model::params()})>> : std::true_type {};
template <class Model, class = void>
struct HasNocEstimate : std::false_type {};
template <class Model>
struct HasNocEstimate<Model, std::void_t<decltype(NocEstimate{Model::estimate(std::declval<const NocEstimateInput&>())})>>
    : std::true_type {};
}  // namespace detail

// Registry entry for a model class constructible as Model(name, ctx). When the class has
// `static NocEstimate estimate(const NocEstimateInput&)`, the cost model asks it; otherwise the
// entry has no estimate and default_noc_estimate applies. When it has
// `static std::vector<HwParam> params()` (its parameter table's rows), the entry declares them.
template <class Model>
NocModelInfo noc_model(const std::string& name, const std::string& description) {
  NocModelInfo info{name, description,
                    [](sc_core::sc_module_name n, const NocContext& c) -> std::unique_ptr<Noc> {
                      return std::make_unique<Model>(n, c);
                    },
                    {}, {}};
  if constexpr (detail::HasNocEstimate<Model>::value) info.estimate = &Model::estimate;
  if constexpr (detail::HasNocParams<Model>::value) info.params = Model::params();
  return info;
}

// The one list of models shipped with ahbm-sim (builtin_models.cpp).
void register_builtin_noc_models(NocRegistry& registry);

}  // namespace ahbm
