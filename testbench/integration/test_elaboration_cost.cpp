// The closed-form count of SystemC processes a chip elaborates (hw/chip/elaboration_cost.h),
// which the preflight checks against vm.max_map_count before elaborating, against the processes
// of real chips: never fewer (the guard would let a chip through that does not fit), and over by
// at most the NoC's allowance.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <systemc>

#include "hw/chip/chip.h"
#include "hw/chip/elaboration_cost.h"
#include "hw/common/config/hw_config_override.h"
#include "hw/common/sim/sim_context.h"
#include "hw/common/sim/sim_shared.h"

using namespace ahbm;

namespace {

uint64_t count_threads(const std::vector<sc_core::sc_object*>& objects) {
  uint64_t n = 0;
  for (sc_core::sc_object* o : objects)
    n += (std::string(o->kind()) == "sc_thread_process" ? 1 : 0) + count_threads(o->get_child_objects());
  return n;
}

uint64_t threads_of_chip(const HwConfig& cfg, std::vector<int> groups) {
  SimContext context;
  SimContext::Scope use(context);
  TraceSink trace(false);
  SpanRecorder spans;
  SimShared shared(cfg, trace, spans);
  const NocRegistry nocs = NocRegistry::with_builtin_models();
  Chip chip("chip", shared, nocs, "test", std::move(groups));
  return count_threads(sc_core::sc_get_top_level_objects());
}

}  // namespace

TEST(ElaborationCost, CountsEveryProcessOfTheChip) {
  struct Case {
    std::vector<std::string> set;
    std::vector<int> groups;
  };
  const std::vector<Case> cases = {
      {{}, {0}},
      {{"group.cubes=2", "cube.pes=3"}, {0}},
      {{"groups=3", "group.cubes=5", "cube.pes=4", "noc.model=mesh"}, {0, 1, 2}},
      {{"groups=4", "cube.pes=16", "noc.model=ring"}, {1, 3}},
      {{"group.cubes=8", "cube.pes=2", "noc.model=crossbar"}, {0}},
  };
  for (const Case& c : cases) {
    const HwConfig cfg = load_hw_config("", c.set);
    const uint64_t actual = threads_of_chip(cfg, c.groups);
    const ElaborationCost est = elaboration_cost(cfg, int(c.groups.size()));
    EXPECT_GE(est.threads, actual) << ::testing::PrintToString(c.set);
    EXPECT_LE(est.threads, actual + 2) << ::testing::PrintToString(c.set);  // the NoC's allowance
    EXPECT_EQ(est.mappings, 2 * est.threads);
    EXPECT_EQ(est.stack_bytes, est.threads * (uint64_t(sc_core::SC_DEFAULT_STACK_SIZE) + 4096));
  }
}
