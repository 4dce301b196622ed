// Energy as a reading of the activity records (hw/chip/energy.h, docs/energy.md): an isolated
// weight GEMM and one attention step (its KV DMA, its MACs, the Q multicast, the inter-CUBE
// link transfer, the host link) against the documented formulas with closed-form counts;
// conservation (classes, components, steps and phases each sum to the total); the same energy
// with and without values; the merged statistics of a run read as the sum of its steps.
#include <gtest/gtest.h>

#include <cmath>

#include "hw/chip/energy.h"
#include "hw/chip/simulate.h"
#include "hw/common/model/attn_state.h"
#include "test_runtime_support.h"

using namespace ahbm;

namespace {

constexpr double kPj = 1e-12;

double class_j(const EnergyReading& e, EnergyClass c) { return e.by_class[size_t(c)]; }
double class_j(const Json& energy, EnergyClass c) { return energy["by_class"][energy_class_name(c)].get<double>(); }

// Relative agreement: the readings are sums of a few hundred doubles.
void expect_rel(double got, double want, const char* what) {
  EXPECT_NEAR(got, want, 1e-9 * std::max(1e-30, std::abs(want))) << what;
}

double hbm_pj_per_bit(const EnergyConfig& e) {
  return e.hbm_activate_pj_per_bit + e.hbm_access_pj_per_bit + e.hbm_bank_group_pj_per_bit;
}

}  // namespace

TEST(Energy, WeightGemmEqualsTheDocumentedFormula) {
  // One CUBE of 2 PEs; Y (16 × 64) = X (16 × 64) · W (64 × 64) in fp16, written back: each PE holds
  // 32 columns and all of K, one block each (the blocking fits), so per PE: W 64·32·2 B read, X
  // 16·64·2 B out of the Q buffer, Y 16·32·4 B written, 16·64·32 MACs.
  HwConfig c;
  c.group.cubes = 1;
  c.cube.pes = 2;
  GemmJob j;
  j.op = "proj";
  j.m = 16;
  j.k = 64;
  j.n = 64;
  j.dtype = DType::fp16;
  const SimResult r = Simulator(c).run_gemms({j});
  const EnergyReading e = read_energy(r.stats, c, DType::fp16, r.end_ns);
  const EnergyConfig& k = c.energy;
  const double w = 64.0 * 64 * 2, x = 2 * 16.0 * 64 * 2, y = 16.0 * 64 * 4, macs = 16.0 * 64 * 64;
  expect_rel(class_j(e, EnergyClass::hbm), (w + y) * 8 * hbm_pj_per_bit(k) * kPj, "HBM: W read + Y written");
  expect_rel(class_j(e, EnergyClass::gemm), macs * k.mac_fp16_pj * kPj, "MACs");
  expect_rel(class_j(e, EnergyClass::pe_sram), (w + x + y) * 2 * k.sram_pj_per_byte * kPj, "PE SRAM: W, X, Y staged");
  // X came over the host link and was written once into the CUBE's Q buffer (model.md "Weight
  // GEMMs": the Q path), then read by both PEs.
  const double x_in = 16.0 * 64 * 2;
  expect_rel(class_j(e, EnergyClass::q_buffer), (x_in + x) * k.sram_pj_per_byte * kPj, "Q buffer: X written and read");
  expect_rel(class_j(e, EnergyClass::host_link), x_in * 8 * k.host_link_pj_per_bit * kPj, "host link: X in");
  EXPECT_EQ(class_j(e, EnergyClass::vector), 0.0);
  EXPECT_EQ(class_j(e, EnergyClass::link), 0.0);
  // Static: 2 PEs and 1 CUBE over the run (the ideal NoC has no routers).
  expect_rel(e.static_j(), (2 * k.pe_static_w + k.cube_static_w) * r.end_ns * 1e-9, "static");
  // The operator's own counters (what a whole model's per-operator energy reads) give the same,
  // without X's path into the Q buffer (docs/energy.md "Not counted").
  const ClassJoules op = dynamic_energy(gemm_activity(r.gemms.at(0)), k, DType::fp16);
  for (EnergyClass cl : {EnergyClass::hbm, EnergyClass::gemm, EnergyClass::pe_sram})
    expect_rel(op[size_t(cl)], class_j(e, cl), energy_class_name(cl));
  expect_rel(op[size_t(EnergyClass::q_buffer)], x * k.sram_pj_per_byte * kPj, "operator: X read");
}

TEST(Energy, AttentionStepDmaMacsMulticastAndLinkEqualClosedForms) {
  // One fan-out step on 2 CUBEs of 2 PEs: 1 agent, 4 new tokens over a 256-token prefix, one Q
  // tile of 4 rows, d = 16, fp16. KV = 260 tokens, each PE's shard streamed once.
  Scenario sc = test::inline_scenario(R"({
    "name": "e", "model": {"head_dim": 16, "num_q_heads": 1, "num_kv_heads": 1, "dtype": "fp16"},
    "shared_prefix_tokens": 256, "agents": [{"name": "a", "new_tokens": 4}]
  })", "e");
  HwConfig c;
  c.group.cubes = 2;
  c.cube.pes = 2;
  const RunOutput run = test::timing_only_run(sc, c);
  const Json e = report::to_json(run.summary.energy);
  const EnergyConfig& k = c.energy;
  const double d = 16, rows = 4, n = 260, b = 2;
  const double q = rows * d * b, o = rows * d * 4;  // a Q tile in, its O tile back (fp32)
  // The DMA: K and V of every token read once, and of the 4 new tokens written first
  // (pe.dma.kv_writes = timed; the 256-token prefix fills whole pages, so nothing is copied).
  expect_rel(class_j(e, EnergyClass::hbm), 2 * (n + rows) * d * b * 8 * hbm_pj_per_bit(k) * kPj, "KV DMA");
  // Q K^T and P V.
  expect_rel(class_j(e, EnergyClass::gemm), 2 * rows * n * d * k.mac_fp16_pj * kPj, "attention MACs");
  // The multicast of Q to both CUBEs and O to the host port (ideal NoC: one hop per 64-byte
  // flit delivered), each delivery crossing a stack's I/O.
  const double flits = 2 * std::ceil(q / 64) + std::ceil(o / 64);
  expect_rel(class_j(e, EnergyClass::noc), (flits * k.noc_flit_hop_pj + (2 * q + o) * 8 * k.stack_io_pj_per_bit) * kPj,
             "NoC: Q multicast + O");
  // Q written into both Q buffers and read by each of the 4 PEs.
  expect_rel(class_j(e, EnergyClass::q_buffer), (2 * q + 4 * q) * k.sram_pj_per_byte * kPj, "Q buffers");
  // The link: CUBE 1's state to CUBE 0.
  expect_rel(class_j(e, EnergyClass::link), double(AttnState::wire_bytes(4, 16)) * 8 * k.link_pj_per_bit * kPj,
             "link transfer");
  expect_rel(class_j(e, EnergyClass::host_link), (q + o) * 8 * k.host_link_pj_per_bit * kPj, "host link");
  // Static power over the run: 4 PEs and 2 CUBEs.
  expect_rel(e["static_j"].get<double>(), (4 * k.pe_static_w + 2 * k.cube_static_w) * run.sim.end_ns * 1e-9, "static");
  expect_rel(e["edp_j_s"].get<double>(), e["total_j"].get<double>() * run.sim.end_ns * 1e-9, "EDP");
}

TEST(Energy, ComponentsClassesStepsAndPhasesSumToTheTotal) {
  const RunOutput run = test::timing_only_run(test::decode_scenario());
  const Json s = to_json(run.summary);
  const Json& e = s["energy"];
  const double total = e["total_j"].get<double>();
  ASSERT_GT(total, 0.0);
  double classes = 0, components = 0, steps = 0, phases = 0;
  for (const auto& [name, j] : e["by_class"].items()) classes += j.get<double>();
  for (const auto& [name, j] : e["by_component"].items()) components += j.get<double>();
  for (const Json& st : s["steps"]) steps += st["energy_j"].get<double>();
  for (const auto& [name, p] : e["by_phase"].items()) phases += p["total_j"].get<double>();
  expect_rel(classes, total, "classes");
  expect_rel(components, total, "components");
  expect_rel(steps, total, "steps");
  expect_rel(phases, total, "phases");
  expect_rel(e["dynamic_j"].get<double>() + e["static_j"].get<double>(), total, "dynamic + static");
  EXPECT_TRUE(e["by_phase"].contains("fanout") && e["by_phase"].contains("decode") && e["by_phase"].contains("join"));
  EXPECT_GT(e["j_per_decode_token"].get<double>(), 0.0);
  // Every PE of the group is a component; the NoC and the host link too.
  EXPECT_TRUE(e["by_component"].contains("noc") && e["by_component"].contains("host"));
}

TEST(Energy, MergedStatisticsOfARunReadAsTheSumOfItsSteps) {
  // Counters merge by summing (steps back to back), so the reading of the merged tree over the
  // run's time equals the summed step readings: energy is linear in the activity.
  HwConfig hw;
  const Scenario sc = test::decode_scenario();
  const RunOutput run = test::timing_only_run(sc, hw);
  const EnergyReading merged = read_energy(run.sim.stats, hw, sc.model.dtype, run.sim.end_ns);
  expect_rel(merged.total_j(), run.summary.energy.run.total_j(), "merged tree vs steps");
  expect_rel(merged.dynamic_j(), run.summary.energy.run.dynamic_j(), "dynamic");
}

TEST(Energy, IdenticalWithAndWithoutValues) {
  const Scenario sc = test::decode_scenario();
  RunOptions opt = test::in_memory_options();
  const RunOutput with_values = execute(sc, HwConfig{}, opt);
  const RunOutput timing_only = test::timing_only_run(sc);
  EXPECT_EQ(report::to_json(with_values.summary.energy), report::to_json(timing_only.summary.energy));
}

TEST(Energy, CostsScaleTheirClassAndNothingElse) {
  // Doubling one activity's cost doubles its class and leaves time and the other classes alone.
  const Scenario sc = test::decode_scenario();
  HwConfig a, b;
  b.energy.mac_fp32_pj = 2 * a.energy.mac_fp32_pj;
  const RunOutput ra = test::timing_only_run(sc, a), rb = test::timing_only_run(sc, b);
  EXPECT_EQ(ra.sim.end_ns, rb.sim.end_ns);
  const Json ea = report::to_json(ra.summary.energy);
  const Json eb = report::to_json(rb.summary.energy);
  for (size_t c = 0; c < kEnergyClasses; ++c) {
    const EnergyClass cl = EnergyClass(c);
    expect_rel(class_j(eb, cl), (cl == EnergyClass::gemm ? 2 : 1) * class_j(ea, cl), energy_class_name(cl));
  }
}
