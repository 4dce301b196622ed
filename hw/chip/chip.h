#pragma once
// The chip: host interface, Q source, NoC, the weight streamer, and the KV-head groups (hw/group: CUBEs,
// inter-CUBE reduction, KV mover) given as active. One Chip per simulation context, elaborated once and reused for
// every run whose jobs use the same groups (Simulator, simulate.h): begin_run() places a run's
// KV and starts it.
#include <memory>
#include <string>
#include <vector>

#include "hw/chip/chip_stats.h"
#include "hw/chip/host.h"
#include "hw/chip/q_source.h"
#include "hw/chip/weight_streamer.h"
#include "hw/group/group.h"
#include "hw/noc/noc.h"

namespace ahbm {

// The check a chip's elaboration makes of the NoC: builds cfg.noc.model with cfg.noc.params alone
// (in a context of its own, nothing simulated) for the endpoints of every group, so a parameter
// the model does not have, or a value it refuses, is the InputError run and serve give
// (`hw_file` names the config in it). `ahbm-sim hw-config` calls it: a config it prints builds.
void check_noc_config(const HwConfig& cfg, const NocRegistry& nocs, const std::string& hw_file);

class Chip : public sc_core::sc_module, public StatsProvider {
 public:
  Chip(sc_core::sc_module_name name, SimShared& sh, const NocRegistry& nocs, const std::string& hw_file,
       std::vector<int> group_ids);
  // The run's jobs are in SimShared (begin_run called, simulated time at the run's start): puts
  // every module back in its built state, places the jobs' KV in the HBM slices and starts them.
  void begin_run();
  // Whether begin_run() can start another run on this chip (its NoC model can restart).
  bool restartable() const { return noc->restartable(); }
  // The statistics tree of the run (layout: chip_stats.h), walked over the groups, their CUBEs,
  // links and KV movers, and the NoC.
  void report_stats(StatsNode& node) const override;
  // Groups with work in `jobs`, ascending: the chip's structure for them.
  static std::vector<int> groups_of(const HwConfig& cfg, const std::vector<AttentionJob>& jobs);
  // The NoC's endpoints for the active groups `group_ids`: "host", "qsrc", then "gG.cubeC".
  static std::vector<std::string> noc_endpoints(const HwConfig& cfg, const std::vector<int>& group_ids);

  std::unique_ptr<Noc> noc;
  std::unique_ptr<Host> host;
  std::unique_ptr<QSource> q_source;
  std::vector<std::unique_ptr<Group>> groups;  // per active group, ascending
  std::unique_ptr<WeightStreamer> w_streamer;  // X-stationary weight GEMMs' W multicast
  std::vector<int> active_groups;

 private:
  SimShared& sh_;
  TlmLinks links_;
};

}  // namespace ahbm
