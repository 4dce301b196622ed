// The X-stationary weight GEMM (hw/common/contract/gemm_job.h, hw/chip/weight_streamer.h,
// GemmProgram::compute_xstat): rows split over the PEs that hold a shard, every W tile read once per
// pass by its holder and multicast over the NoC into the receivers' DMA slots. Simulated per-PE
// time vs the closed form of docs/models.md "X-stationary" (aligned and ragged shapes), values
// vs float64 (K-split summed on the receiver, several passes), the bytes each mapping moves and
// the crossover of docs/design/decoder-layer.md §4 measured by simulation, the mapping's names.
#include <gtest/gtest.h>

#include <set>

#include "hw/chip/chip_stats.h"
#include "hw/chip/simulate.h"
#include "hw/common/model/engines.h"
#include "hw/common/base/error.h"
#include "runtime/run/driver.h"
#include "runtime/model/layer_plan.h"
#include "runtime/scenario/scenario.h"
#include "test_gemm_support.h"
#include "test_runtime_support.h"
#include "test_support.h"

using namespace ahbm;
using ahbm::test::kTimeTolNs;
using ahbm::test::raw_values;
using ahbm::test::worst_vs_bound;

namespace {

// A chip of one group: `cubes` CUBEs of `pes` PEs (the W multicast crosses CUBEs on the NoC).
HwConfig chip(int cubes, int pes) { return test::gemm_chip(cubes, pes); }

GemmJob xjob(int m, int k, int n, DType t = DType::fp16) { return test::gemm_of(m, k, n, t, GemmMapping::x_stationary); }

// The per-PE end when the GEMM engine is the bottleneck and each receiver has one row block
// (docs/models.md "X-stationary", closed form): the receiver starts once its X rows are in from
// its slice (latency + bytes / bandwidth) and the first W tile has arrived (its holder's read,
// then the NoC's fixed latency); then every W tile of the stream costs its engine tiles, each Y
// block its drain, and the last Y block its write-back. At the run's start the X reads and the
// streamer's first tile reads book the same slices, in an order the slice arbitrates: `first`
// true when the X read went first on its slice, and `h0_first` the same on the first tile's
// holder. Any (first, h0_first) is a correct start; the test accepts the one that matches.
double xstat_end_ns(const HwConfig& c, const GemmJob& j, const std::vector<GemmPePlan>& plans,
                    const std::vector<GemmColumns>& cols, int p, bool first, bool h0_first) {
  const double bw = c.pe.hbm.bandwidth_gbps * c.pe.hbm.efficiency, lat = c.pe.hbm.latency_ns;
  const double noc = c.noc.params.value("latency_ns", 10.0);
  const GemmPePlan& pl = plans[size_t(p)];
  const uint64_t b = j.elem_bytes(), mb = uint64_t(pl.row_count);
  // The first B tiles of the stream (read at the start, one slot each), with their holders.
  std::vector<std::pair<int, uint64_t>> early;
  for (const GemmColumns& g : cols)
    for (int n0 = 0; n0 < g.n_count; n0 += pl.blk.nb)
      for (int h : g.holders)
        for (int k0 = 0; k0 < plans[size_t(h)].shard.k_count; k0 += pl.blk.kb)
          if (int(early.size()) < c.pe.dma.buffers)
            early.push_back({h, uint64_t(std::min(pl.blk.kb, plans[size_t(h)].shard.k_count - k0)) *
                                    uint64_t(std::min(pl.blk.nb, g.n_count - n0)) * b});
  auto early_on = [&](int pe) {
    uint64_t s = 0;
    for (const auto& [h, bytes] : early) s += h == pe ? bytes : 0;
    return s;
  };
  const int h0 = early[0].first;
  const uint64_t x = mb * uint64_t(j.k) * b, x0 = uint64_t(plans[size_t(h0)].row_count) * uint64_t(j.k) * b;
  const double x_in = lat + double(x + (first ? 0 : early_on(p))) / bw;
  const double tile0 = lat + double(early[0].second + (h0_first ? x0 : 0)) / bw + noc;
  double t = std::max(x_in, tile0);
  for (const GemmColumns& g : cols)
    for (int n0 = 0; n0 < g.n_count; n0 += pl.blk.nb) {
      const uint64_t nb = uint64_t(std::min(pl.blk.nb, g.n_count - n0));
      for (int h : g.holders)
        for (int k0 = 0; k0 < plans[size_t(h)].shard.k_count; k0 += pl.blk.kb) {
          const uint64_t kb = uint64_t(std::min(pl.blk.kb, plans[size_t(h)].shard.k_count - k0));
          t += double(gemm_tiles(c.pe.gemm, mb, nb, kb) * gemm_issue_interval(c.pe.gemm, j.dtype));
        }
      t += c.pe.gemm.pipeline_latency;
    }
  const GemmColumns& last = cols.back();
  const int last_nb = last.n_count - (last.n_count - 1) / pl.blk.nb * pl.blk.nb;
  return t + double(gemm_y_block_bytes(j.fused, pl.row_count, last_nb)) / bw;
}

}  // namespace

TEST(GemmXStationary, RowsSplitOverTheHoldersAndXRowsAreHeldWhole) {
  const HwConfig c = chip(2, 2);
  GemmJob j = xjob(7, 300, 45);
  const auto plans = gemm_pe_plans(c, {j});
  // 7 rows over 4 PEs: 2, 2, 2, 1, in chip order; every PE holds a column shard too.
  const int rows[] = {2, 2, 2, 1}, begin[] = {0, 2, 4, 6};
  for (int p = 0; p < 4; ++p) {
    EXPECT_EQ(plans[0][size_t(p)].row_count, rows[p]) << p;
    EXPECT_EQ(plans[0][size_t(p)].row_begin, begin[p]) << p;
    EXPECT_TRUE(plans[0][size_t(p)].active());
  }
  // One blocking for the job: Mb from the most rows, Nb and Kb from the largest shard (12 × 300);
  // X rows whole in SRAM, nothing in the Q buffer.
  const GemmBlocking& b = plans[0][0].blk;
  EXPECT_EQ(b.mb, 2);
  EXPECT_EQ(b.nb, 12);
  EXPECT_EQ(b.kb, 300);
  EXPECT_EQ(b.q_bytes, 0u);
  EXPECT_EQ(b.sram_bytes, uint64_t(c.pe.dma.buffers) * 300 * 12 * 2 + 2 * 12 * 4 + 2 * 300 * 2);
  // Shrunk SRAM: the X rows bound Mb (Mb·K·b plus the slots and accumulators ≤ S).
  HwConfig small = c;
  small.pe.sram_bytes = 16384;
  j.m = 200;  // 50 rows per PE
  const GemmBlocking s = gemm_pe_plans(small, {j})[0][0].blk;
  EXPECT_LE(s.sram_bytes, small.pe.sram_bytes);
  EXPECT_LT(s.mb, 50);
  EXPECT_GT(gemm_block_bytes(small, s.mb + 16, 16, 16, DType::fp16, true, j.k).sram_bytes, small.pe.sram_bytes);
}

TEST(GemmXStationary, ComputeBoundTimeMatchesClosedFormAlignedAndRagged) {
  HwConfig c = chip(2, 2);
  c.pe.gemm.issue_interval = 64;  // a slow engine: the W stream stays ahead of every receiver
  for (auto [m, k, n] : {std::array<int, 3>{8, 256, 128}, {7, 300, 45}, {3, 333, 31}, {16, 512, 64}}) {
    SCOPED_TRACE("M=" + std::to_string(m) + " K=" + std::to_string(k) + " N=" + std::to_string(n));
    const GemmJob j = xjob(m, k, n);
    const auto plans = gemm_pe_plans(c, {j});
    const auto cols = gemm_column_groups(gemm_shards_of(j, 4));
    const SimResult r = Simulator(c).run_gemms({j});
    const GemmOpStats& st = r.gemms.at(0);
    for (int p = 0; p < 4; ++p) {
      const GemmPePlan& pl = plans[0][size_t(p)];
      if (!pl.receives()) {
        EXPECT_EQ(st.pe_end_ns[size_t(p)], 0.0) << "PE " << p;
        continue;
      }
      ASSERT_EQ(pl.row_blocks(), 1);
      bool matched = false;
      std::string tried;
      for (bool first : {true, false})
        for (bool h0_first : {true, false}) {
          const double want = xstat_end_ns(c, j, plans[0], cols, p, first, h0_first);
          matched = matched || std::abs(st.pe_end_ns[size_t(p)] - want) <= kTimeTolNs;
          tried += " " + std::to_string(want);
        }
      EXPECT_TRUE(matched) << "PE " << p << " ended at " << st.pe_end_ns[size_t(p)] << ", closed forms" << tried;
    }
    // Every W byte read once (one pass) and multicast once; every MAC done once.
    EXPECT_EQ(st.w_bytes_read, uint64_t(k) * uint64_t(n) * 2);
    EXPECT_EQ(st.w_multicast_bytes, uint64_t(k) * uint64_t(n) * 2);
    EXPECT_EQ(st.macs, uint64_t(m) * uint64_t(k) * uint64_t(n));
    EXPECT_EQ(st.x_hbm_bytes_read, uint64_t(m) * uint64_t(k) * 2);
    EXPECT_EQ(st.x_link_bytes + st.y_gather_bytes, 0u);
    EXPECT_EQ(st.y_bytes_written, uint64_t(m) * uint64_t(n) * 4);
    // The NoC carried one packet per W tile, delivered to both CUBEs when both have receivers.
    const uint64_t packets = r.stats.at(ChipStats::noc).get(NocStats::packets_sent);
    uint64_t tiles = 0;
    for (const GemmColumns& g : cols)
      for (int h : g.holders)
        tiles += uint64_t((g.n_count + plans[0][0].blk.nb - 1) / plans[0][0].blk.nb) *
                 uint64_t((plans[0][size_t(h)].shard.k_count + plans[0][0].blk.kb - 1) / plans[0][0].blk.kb);
    EXPECT_EQ(packets, tiles);
    // The streamer sent those tiles and, ahead of a slow engine, waited on the receivers' slots.
    EXPECT_EQ(st.w_tiles_streamed, tiles);
    if (tiles > uint64_t(c.pe.dma.buffers)) {
      EXPECT_GT(st.w_slot_wait_ns, 0.0);
    }
  }
}

TEST(GemmXStationary, StreamerWaitsOnTheReceiversSlotsUntilEveryTileHasOne) {
  // A slow engine frees each DMA slot late, so once the stream has filled every receiver's
  // slots the streamer waits (no less with fewer slots); with as many slots as the pass has tiles
  // it never does.
  const GemmJob j = xjob(8, 512, 256);
  HwConfig c = chip(2, 2);
  c.pe.gemm.issue_interval = 64;
  const GemmOpStats three = Simulator(c).run_gemms({j}).gemms.at(0);
  c.pe.dma.buffers = 2;
  const GemmOpStats two = Simulator(c).run_gemms({j}).gemms.at(0);
  c.pe.dma.buffers = int(three.w_tiles_streamed);
  const GemmOpStats all = Simulator(c).run_gemms({j}).gemms.at(0);
  ASSERT_GT(three.w_tiles_streamed, 3u);
  EXPECT_EQ(two.w_tiles_streamed, three.w_tiles_streamed);
  EXPECT_GT(three.w_slot_wait_ns, 0.0);
  EXPECT_GE(two.w_slot_wait_ns, three.w_slot_wait_ns);
  EXPECT_EQ(all.w_slot_wait_ns, 0.0);
}

TEST(GemmXStationary, ValuesMatchFloat64WithinTheDtypeBoundOverPassesAndKSplit) {
  for (DType t : {DType::fp32, DType::fp16, DType::bf16})
    for (int k_split : {1, 2}) {
      SCOPED_TRACE(std::string(dtype_name(t)) + " k_split " + std::to_string(k_split));
      HwConfig c = chip(2, 2);
      // 125 rows: 32 or 31 per PE; the SRAM holds 16 rows of X and small W tiles, not 32 rows:
      // two row blocks (passes) and several K-blocks per holder.
      c.pe.sram_bytes = 20 * 300 * dtype_bytes(t) + 4096;
      GemmJob j = xjob(125, 300, 45, t);
      j.k_split = k_split;
      fill_gemm_values(j, /*seed=*/11, /*op=*/3);
      std::vector<float> x_raw, w_raw;
      raw_values(j, 11, 3, x_raw, w_raw);
      const auto plans = gemm_pe_plans(c, {j});
      ASSERT_GT(plans[0][0].row_blocks(), 1);
      ASSERT_GT((plans[0][0].shard.k_count + plans[0][0].blk.kb - 1) / plans[0][0].blk.kb, 1);
      const SimResult r = Simulator(c).run_gemms({j});
      const double worst = worst_vs_bound(r.gemm_outputs.at(0), x_raw, w_raw, j.m, j.k, j.n, t);
      EXPECT_LE(worst, 1.0);
      EXPECT_GT(worst, 0.0);  // real numbers compared
      // W is streamed once per pass.
      int passes = 0;
      for (const GemmPePlan& pl : plans[0]) passes = std::max(passes, pl.row_blocks());
      EXPECT_EQ(r.gemms[0].w_multicast_bytes, uint64_t(passes) * 300 * 45 * dtype_bytes(t));
      // The same Y as the weight-stationary mapping, within the same bound; and timing-only
      // runs take the same time.
      GemmJob w = j;
      w.mapping = GemmMapping::w_stationary;
      EXPECT_LE(worst_vs_bound(Simulator(c).run_gemms({w}).gemm_outputs.at(0), x_raw, w_raw, j.m, j.k, j.n, t), 1.0);
      GemmJob timing = j;
      timing.x.clear();
      timing.w.clear();
      EXPECT_DOUBLE_EQ(Simulator(c).run_gemms({timing}).end_ns, r.end_ns);
    }
}

TEST(GemmXStationary, FusedLayerOperatorsMatchTheWeightStationaryValues) {
  // A dense layer's fused operators (RMSNorm prologue, RoPE, gated activation, residual) with
  // values: X-stationary computes the same Y (its receivers norm whole rows once; the epilogues
  // run on each Y block).
  const ModelConfig m = load_model_config(test::source_path("traces/models/llama-3.2-1b.json"));
  HwConfig hw = chip(2, 4);
  const MemoryMap map = plan_memory(m, DType::fp32, hw);
  std::vector<int64_t> pos;
  for (int r = 0; r < 5; ++r) pos.push_back(100 + r);
  const std::vector<GemmJob> ops = layer_gemms(m, DType::fp32, map, pos, "prefill");
  int op = 0;
  for (GemmJob j : ops) {
    SCOPED_TRACE(j.op);
    fill_gemm_values(j, 5, op++);
    if (j.fused.rms_norm) j.fused.norm_weight.assign(size_t(j.k), 1.25f);
    if (j.fused.residual) j.fused.residual_values.assign(size_t(j.m) * size_t(j.n), 0.5f);
    const MatrixRM y_w = Simulator(hw).run_gemms({j}).gemm_outputs.at(0);
    j.mapping = GemmMapping::x_stationary;
    const MatrixRM y_x = Simulator(hw).run_gemms({j}).gemm_outputs.at(0);
    ASSERT_EQ(y_x.rows(), y_w.rows());
    ASSERT_EQ(y_x.cols(), y_w.cols());
    const double scale = std::max(1.0, double(y_w.cwiseAbs().maxCoeff()));
    EXPECT_LE(double((y_x - y_w).cwiseAbs().maxCoeff()), 1e-4 * scale);
    EXPECT_GT(double(y_w.cwiseAbs().maxCoeff()), 0.0);
  }
}

TEST(GemmXStationary, CrossoverWStationaryWinsSmallMXStationaryMovesFewerBytesAtLargeM) {
  // docs/design/decoder-layer.md §4: w_stationary moves X in and Y out (M·K·b + M·N·4),
  // x_stationary the weights once per pass (K·N·b); X-stationary moves less once
  // M > K·N·b / (K·b + 4·N). K = N = 1024 fp16 on the default chip (32 PEs): M* = 341.3.
  const HwConfig hw;
  const int k = 1024, n = 1024;
  const double m_star = double(k) * n * 2 / (double(k) * 2 + 4.0 * n);
  ASSERT_NEAR(m_star, 341.33, 0.01);
  auto run = [&](int m, GemmMapping mapping) {
    return Simulator(hw).run_gemms({test::gemm_of(m, k, n, DType::fp16, mapping)}).gemms.at(0);
  };
  for (int m : {1, 16, 256, 512, 2048}) {
    SCOPED_TRACE("M=" + std::to_string(m));
    const GemmOpStats w = run(m, GemmMapping::w_stationary), x = run(m, GemmMapping::x_stationary);
    // What each moves is what the simulation counted: the closed forms above (one pass here).
    EXPECT_EQ(w.moved_bytes(), uint64_t(m) * k * 2 + uint64_t(m) * n * 4);
    EXPECT_EQ(x.moved_bytes(), uint64_t(k) * n * 2);
    std::cout << "M=" << m << " w_stationary " << w.end_ns << " ns, " << w.moved_bytes() << " B moved, "
              << w.w_bytes_read << " B of W read; x_stationary " << x.end_ns << " ns, " << x.moved_bytes()
              << " B moved, " << x.w_bytes_read << " B of W read\n";
    if (m <= 16) {
      // Decode: the rows fit one engine tile, so w_stationary uses all 32 PEs on them while
      // x_stationary gives all of W to the few PEs that have rows.
      EXPECT_LT(w.end_ns, x.end_ns);
      EXPECT_LT(w.moved_bytes(), x.moved_bytes());
    }
    if (m < m_star) {
      EXPECT_LT(w.moved_bytes(), x.moved_bytes());
    } else {
      EXPECT_LT(x.moved_bytes(), w.moved_bytes());
    }
  }
}

TEST(GemmXStationary, MappingNamesAndRefusals) {
  EXPECT_EQ(gemm_mapping_from_name("x_stationary", "f"), GemmMapping::x_stationary);
  EXPECT_EQ(choice_name(GemmMapping::w_stationary), "w_stationary");
  try {
    gemm_mapping_from_name("output_stationary", "--gemm-mapping");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--gemm-mapping"), std::string::npos) << what;
    EXPECT_NE(what.find("output_stationary"), std::string::npos) << what;
    EXPECT_NE(what.find("w_stationary, x_stationary"), std::string::npos) << what;
  }
  // One mapping per run.
  GemmJob a = xjob(4, 64, 64), b = xjob(4, 64, 64);
  b.mapping = GemmMapping::w_stationary;
  EXPECT_THROW(Simulator(chip(1, 2)).run_gemms({a, b}), InputError);
}

TEST(GemmXStationary, WholeModelRunReportsTheMapping) {
  const Scenario sc = load_scenario(test::source_path("traces/llama3_8b.json"));
  RunOptions opt = test::in_memory_options();
  opt.values = false;
  const RunOutput w = execute(sc, HwConfig{}, opt);
  opt.gemm_mapping = GemmMapping::x_stationary;
  const RunOutput x = execute(sc, HwConfig{}, opt);
  EXPECT_EQ(w.summary.operators->totals["mapping"], "w_stationary");
  EXPECT_EQ(x.summary.operators->totals["mapping"], "x_stationary");
  // What stands behind the numbers says where each mapping's X comes from (issue 41 item 5).
  for (const RunOutput* r : {&w, &x})
    for (const char* key : {"simulated", "closed_forms", "not_modelled"})
      EXPECT_TRUE(r->summary.operators->totals["modelled"].contains(key)) << key;
  EXPECT_NE(w.summary.operators->totals["modelled"]["not_modelled"].get<std::string>().find("uploaded from the host"),
            std::string::npos);
  EXPECT_NE(x.summary.operators->totals["modelled"]["not_modelled"].get<std::string>().find("read from the slices"),
            std::string::npos);
  EXPECT_FALSE(w.summary.operators->totals["by_operator"][0].contains("moved_bytes"));
  const Json& q = x.summary.operators->totals["by_operator"][0];
  EXPECT_EQ(q["name"], "qkv_proj");
  EXPECT_EQ(q["moved_bytes"]["x_link"], 0);
  EXPECT_GT(q["moved_bytes"]["w_multicast"].get<uint64_t>(), 0u);
  EXPECT_GT(q["w_stream"]["tiles"].get<uint64_t>(), 0u);
  EXPECT_FALSE(w.summary.operators->totals["by_operator"][0].contains("w_stream"));
  // Same MACs, a different dataflow and time.
  EXPECT_EQ(q["macs"], w.summary.operators->totals["by_operator"][0]["macs"]);
  EXPECT_NE(x.summary.total_ns, w.summary.total_ns);
}

TEST(GemmXStationary, LlamaQProjBothMappingsOnTheDefaultChip) {
  // docs/models.md "X-stationary": LLaMA-3-8B q_proj (K = N = 4096, fp16, the memory map's
  // shards: 128 columns on each of the 32 PEs) at M = 1, 16, 160, 4096, both mappings.
  const HwConfig hw;
  const ModelConfig m = load_model_config(test::source_path("traces/models/llama-3-8b.json"));
  const MemoryMap map = plan_memory(m, DType::fp16, hw);
  const LayerOperator q{"q_proj", {"self_attn.q_proj"}};
  for (int rows : {1, 16, 160, 4096}) {
    GemmJob j = operator_gemm(m, DType::fp16, map, q, rows, "prefill");
    const GemmOpStats w = Simulator(hw).run_gemms({j}).gemms.at(0);
    j.mapping = GemmMapping::x_stationary;
    const auto plans = gemm_pe_plans(hw, {j});
    const GemmOpStats x = Simulator(hw).run_gemms({j}).gemms.at(0);
    int passes = 0;
    for (const GemmPePlan& pl : plans[0]) passes = std::max(passes, pl.row_blocks());
    std::cout << "q_proj M=" << rows << ": w_stationary " << w.end_ns << " ns, HBM "
              << w.w_bytes_read + w.y_bytes_written << " B, moved " << w.moved_bytes() << " B | x_stationary "
              << x.end_ns << " ns, HBM " << x.w_bytes_read + x.x_hbm_bytes_read + x.y_bytes_written << " B, moved "
              << x.moved_bytes() << " B (Mb " << plans[0][0].blk.mb << ", " << passes << " passes)\n";
    EXPECT_EQ(x.macs, w.macs);
    EXPECT_EQ(x.w_multicast_bytes, uint64_t(passes) * 4096 * 4096 * 2);
    EXPECT_EQ(w.moved_bytes(), uint64_t(rows) * 4096 * 2 + uint64_t(rows) * 4096 * 4);
    if (rows <= 16) {
      EXPECT_LT(w.end_ns, x.end_ns);
    }
  }
}
