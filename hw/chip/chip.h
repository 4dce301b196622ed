#pragma once
// The chip: host interface, Q source, NoC, and the KV-head groups (CUBEs + inter-CUBE
// reduction) that have work. Built for one set of jobs; one Chip per simulation context.
#include <memory>
#include <string>
#include <vector>

#include "hw/chip/host.h"
#include "hw/chip/q_source.h"
#include "hw/cube/cube.h"
#include "hw/link/reduction_network.h"
#include "hw/noc/noc.h"

namespace ahbm {

class Chip : public sc_core::sc_module {
 public:
  Chip(sc_core::sc_module_name name, SimShared& sh, const NocRegistry& nocs, const std::string& hw_file);
  Json stats() const;

  std::unique_ptr<Noc> noc;
  std::unique_ptr<Host> host;
  std::unique_ptr<QSource> q_source;
  std::vector<std::unique_ptr<ReductionNetwork>> networks;  // per active group
  std::vector<std::vector<std::unique_ptr<Cube>>> cubes;    // per active group
  std::vector<std::unique_ptr<GroupFabric>> fabrics;        // per active group
  std::vector<std::unique_ptr<KvMover>> movers;             // per active group
  std::vector<int> active_groups;

 private:
  SimShared& sh_;
};

}  // namespace ahbm
