// TLM-2.0 base protocol on every socket of the chip: the default scenario, a B1 (remap copies),
// a B2 (remote reads) and a B5 (broadcast) step, with and without values, run with a checker
// (hw/common/observe/tlm_checker.h) on every initiator/target link, give no violation, identical results
// with and without the checkers, and DMI granted once per stored extent (the checker itself is
// tested in unit/test_tlm_checker.cpp).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "hw/chip/chip.h"
#include "hw/chip/simulate.h"
#include "hw/common/sim/sim_context.h"
#include "hw/common/observe/tlm_checker.h"
#include "runtime/plan/planner.h"
#include "runtime/scenario/scenario.h"
#include "test_support.h"
#include "test_text.h"

using namespace ahbm;

namespace {

using test::joined;

// `dmi`: whether PE DMA bursts read stored values (values, and not a B5 job, whose KV the mover
// broadcasts): the PEs then hold DMI grants.
void expect_clean_and_identical(const HwConfig& hw, const std::vector<AttentionJob>& jobs, const std::string& what,
                                bool dmi) {
  SimOptions checked;
  checked.check_tlm = true;
  const SimResult c = simulate(hw, jobs, checked);
  const SimResult plain = simulate(hw, jobs);
  EXPECT_TRUE(c.tlm_checks.violations.empty()) << what << ":\n" << joined(c.tlm_checks.violations);
  // host->Q source, and per PE: its DMA, its CUBE's server, the group's KV mover and the chip's
  // weight streamer (built on every chip; an attention run sends it nothing).
  const uint64_t pes = uint64_t(hw.pes_per_group()) * Chip::groups_of(hw, jobs).size();
  EXPECT_EQ(c.tlm_checks.links, 1 + 4 * pes) << what;
  EXPECT_GT(c.tlm_checks.transactions, 0u) << what;
  if (dmi) EXPECT_GT(c.tlm_checks.dmi_grants, 0u) << what;  // and none asked twice (a violation)
  else EXPECT_EQ(c.tlm_checks.dmi_grants, 0u) << what;
  EXPECT_EQ(c.end_ns, plain.end_ns) << what;
  EXPECT_EQ(c.tile_done_ns, plain.tile_done_ns) << what;
  ASSERT_EQ(c.outputs.size(), plain.outputs.size());
  for (size_t i = 0; i < c.outputs.size(); ++i) EXPECT_TRUE(c.outputs[i] == plain.outputs[i]) << what << " job " << i;
}

}  // namespace

TEST(TlmProtocol, DefaultScenarioKeepsTheBaseProtocolOnEverySocket) {
  const Scenario sc = load_scenario(test::source_path("traces/fanout_8x20.json"));
  const HwConfig hw;
  for (bool values : {true, false}) {
    const Plan plan = plan_fanout(sc, hw, sc.seed, values);
    expect_clean_and_identical(hw, plan.jobs, std::string("default scenario") + (values ? "" : " timing-only"), values);
  }
}

TEST(TlmProtocol, RemoteReadsRemapAndBroadcastKeepTheBaseProtocol) {
  const HwConfig hw;
  for (bool values : {true, false}) {
    AttentionJob a = test::random_job(hw, 64, 64 * hw.pes_per_group(), 32, 5);
    if (!values) a = timing_copy(a);
    for (Policy p : {Policy::B1, Policy::B2, Policy::B5})
      expect_clean_and_identical(hw, {policy_job(a, hw, p)}, std::string(policy_name(p)) + (values ? "" : " timing-only"),
                                 values && p != Policy::B5);
  }
}

TEST(TlmProtocol, Fp16QWritesCarryTheStoredBytes) {
  // The host writes Q in the storage type: the data length is the buffer's, and O still matches.
  const HwConfig hw;
  AttentionJob a = test::random_job(hw, 32, 16 * hw.pes_per_group(), 32, 9);
  a.dtype = DType::fp16;
  for (float& x : a.q) x = round_to(DType::fp16, x);
  for (KvShard& s : a.shards) {
    for (float& x : s.k) x = round_to(DType::fp16, x);
    for (float& x : s.v) x = round_to(DType::fp16, x);
  }
  expect_clean_and_identical(hw, {a}, "fp16", true);
}

