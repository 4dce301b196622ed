#pragma once
// SystemC side of the flit-level models (mesh, ring, crossbar): one thread that steps the
// FlitNetwork engine only at the cycles in which something can happen, turns tail-flit arrivals
// into deliveries and records the multicast spans. A model subclass reads its parameters,
// builds its topology and calls build(); everything else is shared.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hw/noc/flit_network.h"
#include "hw/noc/noc.h"

namespace ahbm {

// Reads the flow-control and router parameters all flit-level models share (the table in
// flit_params.h) and checks their relations; `defaults` carries the model's own defaults, on
// which the preset named by "router" is laid. Does not finish `r`: the model reads its own keys.
FlitParams read_flit_params(JsonReader& r, const FlitParams& defaults);
// The values of a router preset (classic: `model_defaults` unchanged; booksim-iq).
FlitParams router_preset(FlitRouterPreset preset, const FlitParams& model_defaults);

// Reads the optional "placement" object (endpoint name -> node) and returns the node of every
// endpoint. Endpoints it does not name keep the default: `defaults` if given, else endpoint i on
// node i mod `nodes`. `node_of` turns one value into a node index, or returns an error text for it.
using NodeParser = std::function<int(const Json& value, std::string& error)>;
std::vector<int> read_placement(JsonReader& r, const std::vector<std::string>& endpoints, int nodes,
                                const std::vector<int>& defaults, const NodeParser& node_of);
inline std::vector<int> read_placement(JsonReader& r, const std::vector<std::string>& endpoints, int nodes,
                                       const NodeParser& node_of) {
  return read_placement(r, endpoints, nodes, {}, node_of);
}

// The cost model's view of a flit-level network whose typical transfer crosses `routers` routers:
// latency = the zero-load latency of a 1-flit packet (FlitParams::zero_load_cycles; classic:
// routers x (router_cycles + link_cycles)), one flit per cycle per endpoint port. Reads the
// shared parameters with the model's `defaults` (no other key is checked here: the model checks
// them all when it is built).
NocEstimate flit_estimate(const NocEstimateInput& in, const FlitParams& defaults, int routers);

// Channel counters of the flit-level models (FlitNoc::report_stats).
struct FlitNocStats {
  static constexpr stats::Sum<uint64_t> flits_injected{"flits_injected", "flits", "flits injected"};
  static constexpr stats::Sum<uint64_t> link_flits{"link_flits", "flits", "router-to-router link traversals"};
  static constexpr stats::Sum<uint64_t> eject_flits{"eject_flits", "flits", "flits ejected to endpoints"};
  static constexpr stats::Sum<uint64_t> link_cycles_busy{"link_cycles_busy", "cycles", "link cycles carrying a flit, summed over links"};
  static constexpr stats::Sum<uint64_t> multicast_channel_flits{"multicast_channel_flits", "flits", "flits sent on multicast channels"};
  // The parameters, echoed as summed statistics so summary.json stays as it was (a multi-step run
  // shows steps x flit_bytes); stats::Label would keep them constant.
  static constexpr stats::Sum<int64_t> flit_bytes{"flit_bytes", "bytes", "flit size (summed over steps)"};
  static constexpr stats::Sum<int64_t> router_cycles{"router_cycles", "cycles", "router pipeline delay parameter (summed over steps)"};
  static constexpr stats::Sum<int64_t> link_cycles{"link_cycles", "cycles", "link traversal delay parameter (summed over steps)"};
  static constexpr stats::Sum<int64_t> buffer_flits{"buffer_flits", "flits", "input buffer depth per VC (summed over steps)"};
  static constexpr stats::Sum<int64_t> vcs{"vcs", "VCs", "virtual channels per port (summed over steps)"};
  static constexpr stats::Label<std::string> multicast{"multicast", "", "multicast scheme: tree or source"};
};

// The router's configuration, reported as labels of the "router" child (FlitNoc::report_stats).
struct FlitRouterStats {
  static constexpr stats::Label<std::string> preset{"preset", "", "router preset"};
  static constexpr stats::Label<std::string> pipeline{"pipeline", "", "router pipeline: staged or lumped"};
  static constexpr stats::Label<int64_t> head_cycles{"head_cycles", "cycles", "router cycles of a head flit"};
  static constexpr stats::Label<int64_t> body_cycles{"body_cycles", "cycles", "router cycles of a body flit"};
  static constexpr stats::Label<int64_t> inject_cycles{"inject_cycles", "cycles", "injection delay"};
  static constexpr stats::Label<int64_t> eject_cycles{"eject_cycles", "cycles", "ejection delay"};
  static constexpr stats::Label<int64_t> credit_delay{"credit_delay", "cycles", "credit return delay"};
  static constexpr stats::Label<std::string> vc_select{"vc_select", "", "VC selection: lowest or round-robin"};
  static constexpr stats::Label<std::string> sw_allocator{"sw_allocator", "", "switch allocator"};
  static constexpr stats::Label<int64_t> alloc_iters{"alloc_iters", "iterations", "separable allocator iterations"};
  static constexpr stats::Label<int64_t> input_speedup{"input_speedup", "", "input speedup of the crossbar"};
  static constexpr stats::Label<std::string> vc_allocator{"vc_allocator", "", "VC allocator"};
  static constexpr stats::Label<int64_t> routing_delay{"routing_delay", "cycles", "route computation stage"};
  static constexpr stats::Label<int64_t> vc_alloc_delay{"vc_alloc_delay", "cycles", "VC allocation stage"};
  static constexpr stats::Label<int64_t> sw_alloc_delay{"sw_alloc_delay", "cycles", "switch allocation stage"};
  static constexpr stats::Label<int64_t> st_delay{"st_delay", "cycles", "switch traversal stage"};
  static constexpr stats::Label<int64_t> speculative{"speculative", "", "1 when switch allocation is speculative"};
  static constexpr stats::Label<std::string> vc_release{"vc_release", "", "when a packet frees its VCs: traversal or switch-allocation"};
};

class FlitNoc : public Noc {
 public:
  void report_stats(StatsNode& node) const override;
  uint64_t flit_bytes() const override { return uint64_t(params_.flit_bytes); }
  uint64_t flit_hops() const override;
  int routers() const override;
  std::vector<NocLink> links() const override;
  bool restartable() const override { return true; }

 protected:
  FlitNoc(sc_core::sc_module_name name, const NocContext& ctx);
  // `topology` (size, placement) goes into report_stats() as the child "topology".
  void build(FlitTopology topo, const FlitParams& params, StatsNode topology);
  void inject(NocPacket packet) override;
  // A new network engine, as built, whose cycle 0 is now.
  void restart() override;

 private:
  struct InFlight {
    NocPacket packet;
    sc_core::sc_time first_injected;
    size_t waiting;
  };
  void run();
  sc_core::sc_time at_cycle(int64_t c) const { return sc_core::sc_time::from_value(origin_ + uint64_t(c) * period_); }

  FlitParams params_;
  StatsNode topology_;
  FlitTopology topo_;  // kept to rebuild the engine in restart()
  std::unique_ptr<FlitNetwork> net_;
  std::map<uint64_t, InFlight> flight_;
  sc_core::sc_event wake_;
  uint64_t period_;  // clock period in SystemC time resolution units
  uint64_t origin_ = 0;  // simulated time of the engine's cycle 0 (the run's start), same units
  int sig_in_flight_ = -1;
};

}  // namespace ahbm
