#pragma once
// SystemC side of the system networks: a Noc whose endpoints are chips ("chip0" ..), timed by
// the PacketNetwork engine (packet_network.h). One thread advances the engine to the current
// time whenever a message is sent or the next event is due, and delivers what has arrived. A
// model subclass reads its parameters, builds its topology (topologies.h) and calls build().
#include <map>
#include <memory>
#include <vector>

#include "hw/noc/noc.h"
#include "hw/system/packet_network.h"

namespace ahbm {

// Counters of the packet-level models (PacketNoc::report_stats), besides the Noc's own.
struct PacketNocStats {
  static constexpr stats::Label<std::string> topology{"topology", "", "the network's chips and switches"};
  static constexpr stats::Label<int64_t> packet_bytes{"packet_bytes", "bytes", "packet size"};
  static constexpr stats::Sum<uint64_t> link_packets{"link_packets", "packets", "packet traversals, summed over links"};
  static constexpr stats::Sum<uint64_t> link_bytes{"link_bytes", "bytes", "bytes carried, summed over links"};
  static constexpr stats::Sum<double> energy_pj{"energy_pj", "pJ", "link energy: bytes over links x energy_pj_per_byte"};
  // Children of the list "links", one per directed link.
  static constexpr const char* links = "links";
  static constexpr stats::Label<std::string> link_name{"name", "", "from->to"};
  static constexpr stats::Label<double> gbps{"gbps", "GB/s", "link bandwidth"};
  static constexpr stats::Sum<uint64_t> bytes{"bytes", "bytes", "bytes the link carried"};
  static constexpr stats::Sum<uint64_t> packets{"packets", "packets", "packets the link carried"};
  static constexpr stats::BusyNs busy_ns{"busy_ns", "ns", "time the link was carrying a packet"};
  static constexpr stats::Max<double> utilisation{"utilisation", "", "busy_ns over the time since the run began"};
};

class PacketNoc : public Noc {
 public:
  void report_stats(StatsNode& node) const override;
  uint64_t flit_bytes() const override { return params_.packet_bytes; }
  uint64_t flit_hops() const override { return net_->link_traversals(); }
  int routers() const override { return int(topo_.switch_names.size()); }
  // Every directed link; `flits` counts its packets.
  std::vector<NocLink> links() const override;
  bool restartable() const override { return true; }
  const SystemTopology& topology() const { return topo_; }
  const PacketNetworkParams& network_params() const { return params_; }
  const PacketNetwork& network() const { return *net_; }

 protected:
  PacketNoc(sc_core::sc_module_name name, const NocContext& ctx);
  void build(SystemTopology topo, const PacketNetworkParams& params);
  void inject(NocPacket packet) override;
  void restart() override;

 private:
  void run();

  SystemTopology topo_;
  PacketNetworkParams params_;
  std::unique_ptr<PacketNetwork> net_;
  struct InFlight {
    NocPacket packet;
    size_t waiting;  // destinations not yet delivered
  };
  std::map<uint64_t, InFlight> flight_;
  sc_core::sc_event wake_;
  sc_core::sc_time origin_;  // the run's start (utilisation)
};

}  // namespace ahbm
