// Weight GEMMs on the PEs (hw/common/contract/gemm_job.h, hw/pe/gemm_program.cpp): simulated per-PE time vs
// the closed forms of docs/model.md "Weight GEMMs" (compute-bound and bandwidth-bound, aligned
// and ragged shapes), the blocking formula under shrunk SRAM and Q buffer, double vs triple
// buffering with write-back, and values vs a float64 reference (K-split partial sums included)
// within the documented per-dtype bound.
#include <gtest/gtest.h>

#include <cmath>

#include "hw/chip/simulate.h"
#include "hw/common/model/engines.h"
#include "hw/common/base/error.h"
#include "runtime/model/layer_plan.h"
#include "test_gemm_support.h"

using namespace ahbm;
using ahbm::test::compute_bound_ns;
using ahbm::test::ns_of_bytes;
using ahbm::test::x_in_ns;
using ahbm::test::kTimeTolNs;
using ahbm::test::unit_roundoff;
using ahbm::test::worst_vs_bound;

namespace {

// A small chip: one group of `cubes` CUBEs with `pes` PEs each, 1 GHz (1 cycle = 1 ns).
HwConfig small_chip(int cubes = 1, int pes = 2) { return test::gemm_chip(cubes, pes); }

GemmJob job(int m, int k, int n, DType t = DType::fp16) { return test::gemm_of(m, k, n, t); }

// The per-PE time when the slice is the bottleneck: the DMA reads the W tiles back to back, each
// paying the first-byte latency; the last one's X read and engine tiles and the drain follow,
// then the Y write.
double bandwidth_bound_ns(const HwConfig& c, const GemmJob& j, const GemmPePlan& pl) {
  const uint64_t b = j.elem_bytes();
  double t = 0;
  uint64_t last_kb = 0;
  for (int k0 = 0; k0 < pl.shard.k_count; k0 += pl.blk.kb) {
    last_kb = uint64_t(std::min(pl.blk.kb, pl.shard.k_count - k0));
    t += c.pe.hbm.latency_ns + ns_of_bytes(last_kb * uint64_t(pl.shard.n_count) * b, c.pe.hbm.bandwidth_gbps);
  }
  t += double(ceil_div(uint64_t(j.m) * last_kb * b, uint64_t(c.cube.q_buffer.port_bytes_per_cycle)));
  t += double(gemm_tiles(c.pe.gemm, uint64_t(j.m), uint64_t(pl.shard.n_count), last_kb) * gemm_issue_interval(c.pe.gemm, j.dtype));
  t += c.pe.gemm.pipeline_latency;
  return t + ns_of_bytes(uint64_t(j.m) * uint64_t(pl.shard.n_count) * 4, c.pe.hbm.bandwidth_gbps);
}

}  // namespace

TEST(GemmPe, ComputeBoundTimeMatchesClosedFormAlignedAndRagged) {
  HwConfig c = small_chip();
  c.pe.gemm.issue_interval = 64;  // a slow engine: every W tile arrives before it is needed
  for (auto [m, k, n] : {std::array<int, 3>{16, 256, 64}, {5, 100, 26}, {1, 4096, 256}, {13, 333, 31}}) {
    SCOPED_TRACE("M=" + std::to_string(m) + " K=" + std::to_string(k) + " N=" + std::to_string(n));
    const GemmJob j = job(m, k, n);
    const auto plans = gemm_pe_plans(c, {j});
    const SimResult r = Simulator(c).run_gemms({j});
    ASSERT_EQ(r.gemms.size(), 1u);
    uint64_t macs = 0;
    for (int p = 0; p < 2; ++p) {
      const GemmPePlan& pl = plans[0][size_t(p)];
      ASSERT_EQ(pl.blk.mb, m);                     // one M-block
      ASSERT_EQ(pl.blk.nb, pl.shard.n_count);      // one N-block
      EXPECT_NEAR(r.gemms[0].pe_end_ns[size_t(p)], compute_bound_ns(c, j, pl), kTimeTolNs) << "PE " << p;
      macs += uint64_t(m) * uint64_t(pl.shard.n_count) * uint64_t(pl.shard.k_count);
    }
    // N = 26 over 2 PEs: 13 columns each; N = 31: 16 and 15.
    EXPECT_EQ(plans[0][0].shard.n_count + plans[0][1].shard.n_count, n);
    EXPECT_EQ(r.gemms[0].macs, macs);
    EXPECT_EQ(macs, uint64_t(m) * uint64_t(k) * uint64_t(n));
    EXPECT_DOUBLE_EQ(r.end_ns, std::max(r.gemms[0].pe_end_ns[0], r.gemms[0].pe_end_ns[1]));
  }
}

TEST(GemmPe, EngineCyclesOfOneBlockAreTheEngineClosedForm) {
  // K blocks that are whole engine tiles: the engine's busy time per PE is exactly
  // gemm_cycles(M, N_p, K_p) (hw/common/model/engines.h), the q_proj numbers of the design note.
  HwConfig c = small_chip();
  const GemmJob j = job(1, 4096, 256);  // N_p = 128 per PE, K = 4096: LLaMA-3-8B q_proj per PE
  const SimResult r = Simulator(c).run_gemms({j});
  const uint64_t cycles = gemm_cycles(c.pe.gemm, 1, 128, 4096, DType::fp16);
  EXPECT_EQ(cycles, 32800u);
  EXPECT_NEAR(r.gemms[0].gemm_busy_ns, 2.0 * double(cycles), 1e-6);
  EXPECT_EQ(r.gemms[0].w_bytes_read, 4096u * 256u * 2u);        // each W byte once (one M-block)
  EXPECT_EQ(r.gemms[0].y_bytes_written, 256u * 4u);             // Y in fp32
  EXPECT_EQ(r.gemms[0].x_bytes_read, 2u * 4096u * 2u);          // X once per PE
}

TEST(GemmPe, BandwidthBoundTimeMatchesClosedForm) {
  HwConfig c = small_chip();
  c.pe.gemm.issue_interval = 1;
  c.pe.hbm.bandwidth_gbps = 2.0;  // a slow slice: the engine waits for every W tile
  c.host.latency_ns = 0;
  for (auto [m, k, n] : {std::array<int, 3>{4, 512, 64}, {3, 301, 22}}) {
    SCOPED_TRACE("M=" + std::to_string(m) + " K=" + std::to_string(k) + " N=" + std::to_string(n));
    c.pe.sram_bytes = 8 * 1024;  // several K blocks per PE, the last one ragged
    const GemmJob j = job(m, k, n);
    const auto plans = gemm_pe_plans(c, {j});
    ASSERT_GT(plans[0][0].k_blocks(), 1);
    const SimResult r = Simulator(c).run_gemms({j});
    for (int p = 0; p < 2; ++p) {
      const GemmPePlan& pl = plans[0][size_t(p)];
      // X is in before the first W tile.
      ASSERT_LT(x_in_ns(c, j),
                c.pe.hbm.latency_ns + ns_of_bytes(uint64_t(pl.blk.kb) * uint64_t(pl.shard.n_count) * 2, c.pe.hbm.bandwidth_gbps));
      EXPECT_NEAR(r.gemms[0].pe_end_ns[size_t(p)], bandwidth_bound_ns(c, j, pl), kTimeTolNs) << "PE " << p;
    }
  }
}

TEST(GemmPe, BlockingFollowsTheCapacityFormula) {
  HwConfig c;  // the default chip: 512 KiB SRAM, 256 KiB Q buffer, 2 slots
  // q_proj at M = 1 per PE (K_p = 4096, N_p = 128, fp16): Nb = N_p; SRAM bounds Kb:
  // 2·Kb·128·2 + 1·128·4 + Kb·2 ≤ 524288 → Kb ≤ 1018.9 → 1008 (multiple of 16).
  GemmBlocking b = gemm_blocking(c, 1, 4096, 128, DType::fp16, true, "q_proj");
  EXPECT_EQ(b.mb, 1);
  EXPECT_EQ(b.nb, 128);
  EXPECT_EQ(b.kb, 1008);
  // Half the SRAM: Kb ≤ (262144 − 512) / 514 = 509.0 → 496.
  HwConfig half = c;
  half.pe.sram_bytes = 256 * 1024;
  EXPECT_EQ(gemm_blocking(half, 1, 4096, 128, DType::fp16, true, "q_proj").kb, 496);
  // M = 160: the Q buffer bounds Kb (2·160·Kb·2 ≤ 262144 → Kb ≤ 409.6 → 400); half the Q
  // buffer: Kb ≤ 204.8 → 192.
  EXPECT_EQ(gemm_blocking(c, 160, 4096, 128, DType::fp16, true, "q_proj").kb, 400);
  HwConfig small_q = c;
  small_q.cube.q_buffer.bytes = 128 * 1024;
  EXPECT_EQ(gemm_blocking(small_q, 160, 4096, 128, DType::fp16, true, "q_proj").kb, 192);
  // M = 4096 (prefill): the accumulators and the Y slots bound Mb:
  // 2·max(16·128·2, Mb·512) + Mb·512 + Mb·16·2 ≤ 524288 → Mb ≤ 334.4 → 320 (multiple of 16);
  // then Kb: 2·163840 + 163840 + 320·Kb·2 ≤ 524288 → Kb ≤ 51.2 → 48.
  b = gemm_blocking(c, 4096, 4096, 128, DType::fp16, true, "q_proj");
  EXPECT_EQ(b.mb, 320);
  EXPECT_EQ(b.kb, 48);
  // Without write-back the slots hold W tiles only: 2·16·256 + Mb·512 + Mb·16·2 ≤ 524288 →
  // Mb ≤ 948.7 → 944 (Kb = 16).
  EXPECT_EQ(gemm_blocking(c, 4096, 4096, 128, DType::fp16, false, "q_proj").mb, 944);
  // Every chosen blocking fits, and the next larger Mb (same Nb) does not fit with any Kb.
  for (int m : {1, 7, 160, 1000, 4096})
    for (int sram : {64 * 1024, 512 * 1024, 2 * 1024 * 1024}) {
      HwConfig h = c;
      h.pe.sram_bytes = uint64_t(sram);
      const GemmBlocking g = gemm_blocking(h, m, 4096, 128, DType::fp16, true, "op");
      EXPECT_LE(g.sram_bytes, h.pe.sram_bytes);
      EXPECT_LE(g.q_bytes, h.cube.q_buffer.bytes);
      if (g.mb < m) {
        const int bigger = std::min(m, (g.mb / 16 + 1) * 16);
        const GemmBlocking least = gemm_block_bytes(h, bigger, 16, g.nb, DType::fp16, true);
        EXPECT_TRUE(least.sram_bytes > h.pe.sram_bytes || least.q_bytes > h.cube.q_buffer.bytes) << m << " " << sram;
      }
    }
}

TEST(GemmPe, NoBlockingFitsIsAnInputErrorNamingTheCapacities) {
  HwConfig c = small_chip();
  c.pe.sram_bytes = 2048;
  c.pe.dma.buffers = 3;
  try {
    Simulator(c).run_gemms({job(64, 4096, 4096)});
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("pe.sram_bytes = 2048"), std::string::npos) << what;
    EXPECT_NE(what.find("pe.dma.buffers = 3"), std::string::npos) << what;
    EXPECT_NE(what.find("proj"), std::string::npos) << what;
    EXPECT_NE(what.find("Mb = 16, Kb = 16, Nb = 16"), std::string::npos) << what;
  }
}

TEST(GemmPe, TripleBufferingHidesTheWriteBack) {
  // Many Y blocks, one W tile each (K = one engine tile deep), so every slot cycles through
  // load, compute and write-back. Per block: L = W load (latency + 2 KiB), C = X read + engine
  // + drain, Wr = Y write (4 KiB). With B slots the steady-state period is
  // max(L, C, Wr, (L + C + Wr) / B): block i's W needs the slot block i − B frees after its
  // write-back. Here L = C = 500 ns, Wr = 256 ns: B = 2 runs at 628 ns per block, B = 3 at 500.
  // (The slice moves 384 ns of bytes per block, under either period.)
  HwConfig c = small_chip(1, 1);
  c.pe.hbm.latency_ns = 372;
  c.pe.hbm.bandwidth_gbps = 16;
  c.pe.gemm.issue_interval = 115;
  c.host.latency_ns = 0;
  c.pe.sram_bytes = 20000;  // Mb = 16 with 2 and with 3 slots: 32 Y blocks
  const int m = 512, k = 16, n = 64;
  GemmJob j = job(m, k, n);
  auto run = [&](int buffers) {
    HwConfig h = c;
    h.pe.dma.buffers = buffers;
    const GemmPePlan pl = gemm_pe_plans(h, {j})[0][0];
    EXPECT_EQ(pl.blk.mb, 16);
    EXPECT_EQ(pl.k_blocks(), 1);
    EXPECT_EQ(pl.n_blocks(), 1);
    return Simulator(h).run_gemms({j}).end_ns;
  };
  const int blocks = m / 16;
  const double L = c.pe.hbm.latency_ns + ns_of_bytes(uint64_t(k) * uint64_t(n) * 2, c.pe.hbm.bandwidth_gbps);
  const double C = double(ceil_div(16 * uint64_t(k) * 2, 64) + gemm_cycles(c.pe.gemm, 16, uint64_t(n), uint64_t(k), DType::fp16));
  const double Wr = ns_of_bytes(16 * uint64_t(n) * 4, c.pe.hbm.bandwidth_gbps);
  ASSERT_DOUBLE_EQ(L, 500.0);
  ASSERT_DOUBLE_EQ(C, 500.0);
  const double period2 = std::max({L, C, Wr, (L + C + Wr) / 2}), period3 = std::max({L, C, Wr, (L + C + Wr) / 3});
  const double t2 = run(2), t3 = run(3);
  // The gain is the period difference on every block but the pipeline's fill (the first B
  // blocks find free slots): (blocks − 2) · (period2 − period3), within one period for where
  // the slice's W and Y bursts queue behind each other.
  const double predicted = double(blocks - 2) * (period2 - period3);
  EXPECT_NEAR(t2 - t3, predicted, period2) << "t2 " << t2 << " t3 " << t3;
  // Without write-back Y never holds a slot: 2 and 3 slots run the same.
  j.write_back = false;
  c.pe.sram_bytes = 1 << 20;
  EXPECT_DOUBLE_EQ(Simulator(c).run_gemms({j}).end_ns, [&] {
    HwConfig h = c;
    h.pe.dma.buffers = 3;
    return Simulator(h).run_gemms({j}).end_ns;
  }());
}

TEST(GemmPe, ValuesMatchFloat64WithinTheDtypeBoundAndKSplitSums) {
  for (DType t : {DType::fp32, DType::fp16, DType::bf16}) {
    for (int k_split : {1, 2}) {
      SCOPED_TRACE(std::string(dtype_name(t)) + " k_split " + std::to_string(k_split));
      HwConfig c = small_chip(1, 4);
      c.pe.sram_bytes = 24 * 1024;  // several K blocks and M blocks per PE
      GemmJob j = job(37, 300, 45, t);
      j.k_split = k_split;
      fill_gemm_values(j, /*seed=*/11, /*op=*/3);
      std::vector<float> x_raw, w_raw;
      ahbm::test::raw_values(j, 11, 3, x_raw, w_raw);
      const auto plans = gemm_pe_plans(c, {j});
      if (k_split == 2) {
        EXPECT_EQ(plans[0][0].shard.k_count + plans[0][1].shard.k_count, 300);  // PEs 0 and 1 split K
        EXPECT_EQ(plans[0][0].shard.n_begin, plans[0][1].shard.n_begin);
      }
      const SimResult r = Simulator(c).run_gemms({j});
      ASSERT_EQ(r.gemm_outputs.size(), 1u);
      const double worst = worst_vs_bound(r.gemm_outputs[0], x_raw, w_raw, j.m, j.k, j.n, t);
      EXPECT_LE(worst, 1.0);
      EXPECT_GT(worst, 0.0);  // the check compares real numbers
      // Timing-only runs take the same time.
      GemmJob timing = j;
      timing.x.clear();
      timing.w.clear();
      EXPECT_DOUBLE_EQ(Simulator(c).run_gemms({timing}).end_ns, r.end_ns);
    }
  }
}

TEST(GemmPe, ChipRunsAttentionAndGemmsOneAfterAnother) {
  // A Simulator keeps its chip: a GEMM run and then the same GEMM again give the same times
  // (every module back in its built state), and spans name the operator.
  HwConfig c = small_chip(2, 2);
  Simulator sim(c);
  const GemmJob j = job(16, 512, 96);
  const SimResult a = sim.run_gemms({j});
  const SimResult b = sim.run_gemms({j});
  EXPECT_EQ(sim.elaborations(), 1);
  EXPECT_DOUBLE_EQ(a.end_ns, b.end_ns);
  EXPECT_EQ(a.gemms[0].pe_end_ns, b.gemms[0].pe_end_ns);
  int op_spans = 0, w_in = 0, y_out = 0;
  for (const Span& s : a.spans->spans()) {
    op_spans += a.spans->name(s.activity) == "proj";
    w_in += a.spans->name(s.activity) == "w_in" && a.spans->name(s.agent) == "proj";
    y_out += a.spans->name(s.activity) == "y_out";
  }
  EXPECT_GT(op_spans, 0);
  EXPECT_GT(w_in, 0);
  EXPECT_EQ(y_out, 4);  // one Y block per PE
}

namespace {

// The layer's fusions (docs/model.md "Vector operators"): qkv_proj (RMSNorm + RoPE), gate_up
// (RMSNorm + activation), o_proj/down (residual add).
enum class Fuse { norm_rope, norm_act, residual };

void fuse(GemmJob& j, Fuse kind, int head_dim) {
  GemmFusion& f = j.fused;
  if (kind != Fuse::residual) {
    f.rms_norm = true;
    f.rms_eps = 1e-5;
  }
  if (kind == Fuse::norm_rope) {
    f.head_dim = head_dim;
    f.rope_theta = 10000.0;
    // The last head_dim columns are not rotated (V); the others are, dimension c mod head_dim.
    for (int c = 0; c < j.n; ++c) f.rope_col.push_back(c + head_dim < j.n ? c % head_dim : -1);
    for (int r = 0; r < j.m; ++r) f.positions.push_back(3 * r + 1);
  }
  if (kind == Fuse::norm_act) {
    f.gated_act = true;
    f.act = HiddenAct::silu;
  }
  f.residual = kind == Fuse::residual;
}

// The fused job's Y in float64: rows of (X ⊙ g) W scaled by rsqrt(mean(x²) + eps), then RoPE,
// the activation (gate column keeps act(g)·u, up column 0) and the residual, on the job's own
// (stored) X and W.
Eigen::MatrixXd fused_reference(const GemmJob& j) {
  const GemmFusion& f = j.fused;
  Eigen::MatrixXd y = Eigen::MatrixXd::Zero(j.m, j.n);
  for (int r = 0; r < j.m; ++r) {
    double ss = 0;
    for (int i = 0; i < j.k; ++i) ss += double(j.x[size_t(r * j.k + i)]) * j.x[size_t(r * j.k + i)];
    const double s = f.rms_norm ? 1.0 / std::sqrt(ss / j.k + f.rms_eps) : 1.0;
    for (int c = 0; c < j.n; ++c) {
      double acc = 0;
      for (int i = 0; i < j.k; ++i)
        acc += double(j.x[size_t(r * j.k + i)]) * (f.rms_norm ? double(f.norm_weight[size_t(i)]) : 1.0) *
               j.w[size_t(i * j.n + c)];
      y(r, c) = s * acc;
    }
    if (f.rope())
      for (int c = 0; c + 1 < j.n; ++c)
        if (f.rope_col[size_t(c)] >= 0 && f.rope_col[size_t(c)] % 2 == 0) {
          const double a = rope_angle(f.positions[size_t(r)], f.rope_col[size_t(c)] / 2, f.head_dim, f.rope_theta);
          const double u = y(r, c), w = y(r, c + 1);
          y(r, c) = u * std::cos(a) - w * std::sin(a);
          y(r, c + 1) = u * std::sin(a) + w * std::cos(a);
          ++c;
        }
    if (f.gated_act)
      for (int c = 0; c + 1 < j.n; c += 2) {
        y(r, c) = hidden_act_ref(f.act, y(r, c)) * y(r, c + 1);
        y(r, c + 1) = 0;
      }
    if (f.residual)
      for (int c = 0; c < j.n; ++c) y(r, c) += f.residual_values[size_t(r * j.n + c)];
  }
  return y;
}

}  // namespace

TEST(GemmPe, FusedVectorOperatorsAddTheirClosedFormsAlignedAndRagged) {
  HwConfig c = small_chip();
  c.pe.gemm.issue_interval = 64;  // compute-bound: every W tile is in before it is needed
  for (Fuse kind : {Fuse::norm_rope, Fuse::norm_act, Fuse::residual})
    for (auto [m, k, n] : {std::array<int, 3>{16, 256, 64}, {5, 100, 28}, {13, 333, 36}}) {
      SCOPED_TRACE("fusion " + std::to_string(int(kind)) + " M=" + std::to_string(m) + " K=" + std::to_string(k) +
                   " N=" + std::to_string(n));
      GemmJob j = job(m, k, n);
      fuse(j, kind, 8);
      const auto plans = gemm_pe_plans(c, {j});
      const SimResult r = Simulator(c).run_gemms({j});
      GemmJob plain = job(m, k, n);
      const SimResult base = Simulator(c).run_gemms({plain});
      for (int p = 0; p < 2; ++p) {
        const GemmPePlan& pl = plans[0][size_t(p)];
        ASSERT_EQ(pl.blk.mb, m);
        ASSERT_EQ(pl.blk.nb, pl.shard.n_count);
        EXPECT_NEAR(r.gemms[0].pe_end_ns[size_t(p)], compute_bound_ns(c, j, pl), kTimeTolNs) << "PE " << p;
        EXPECT_GT(r.gemms[0].pe_end_ns[size_t(p)], base.gemms[0].pe_end_ns[size_t(p)]);  // the fusion costs time
      }
      const GemmOpStats& st = r.gemms[0];
      EXPECT_GT(st.vector_busy_ns(), 0.0);
      EXPECT_GT(st.vector_ops, 0u);
      EXPECT_EQ(st.residual_bytes_read, kind == Fuse::residual ? uint64_t(m) * uint64_t(n) * 4 : 0u);
      EXPECT_EQ(st.y_bytes_written, uint64_t(m) * uint64_t(kind == Fuse::norm_act ? n / 2 : n) * 4);
      EXPECT_EQ(st.macs, base.gemms[0].macs);
    }
}

TEST(GemmPe, FusedVectorOperatorValuesMatchFloat64) {
  // On the job's stored X and W: fp32 accumulation and the fp32 vector unit against float64.
  // Per element the GEMM errs by at most K·u32·Σ|x||w| (the row scale, RoPE, SiLU and the add each
  // add a few u32 relative): 1e-4 relative to the row's largest |Y| is far above that (K = 300:
  // 2e-5) and far below any wrong formula (a missing norm or a wrong angle errs by O(1)).
  for (Fuse kind : {Fuse::norm_rope, Fuse::norm_act, Fuse::residual}) {
    SCOPED_TRACE("fusion " + std::to_string(int(kind)));
    HwConfig c = small_chip(1, 4);
    c.pe.sram_bytes = 24 * 1024;  // several K and M blocks per PE
    GemmJob j = job(37, 300, 48, DType::fp16);
    fuse(j, kind, 8);
    fill_gemm_values(j, 5, 1);
    if (j.fused.rms_norm)
      for (int i = 0; i < j.k; ++i) j.fused.norm_weight.push_back(1.0f + 0.01f * float(i % 7));
    if (j.fused.residual)
      for (int i = 0; i < j.m * j.n; ++i) j.fused.residual_values.push_back(float(i % 11) - 5.0f);
    ASSERT_GT(gemm_pe_plans(c, {j})[0][0].k_blocks(), 1);
    const SimResult r = Simulator(c).run_gemms({j});
    const Eigen::MatrixXd ref = fused_reference(j);
    const double scale = ref.cwiseAbs().maxCoeff();
    const double err = (r.gemm_outputs[0].cast<double>() - ref).cwiseAbs().maxCoeff();
    EXPECT_LE(err, 1e-4 * scale) << "max |Y| " << scale;
    EXPECT_GT(err, 0.0);
  }
}

TEST(GemmPe, FusionsThatCannotRunAreInputErrors) {
  HwConfig c = small_chip();
  GemmJob j = job(4, 64, 30);  // 15 columns per PE: a gated activation needs whole pairs
  fuse(j, Fuse::norm_act, 8);
  EXPECT_THROW(Simulator(c).run_gemms({j}), InputError);
  GemmJob split = job(4, 64, 32);
  split.k_split = 2;
  fuse(split, Fuse::residual, 8);
  EXPECT_THROW(Simulator(c).run_gemms({split}), InputError);
  GemmJob rope = job(4, 64, 34);  // 17 columns per PE: PE 0's block ends inside a pair
  fuse(rope, Fuse::norm_rope, 8);
  try {
    Simulator(c).run_gemms({rope});
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("splits a RoPE pair"), std::string::npos) << e.what();
  }
}
