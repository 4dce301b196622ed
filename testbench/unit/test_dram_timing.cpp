// The bank-level HBM pseudo-channel (hw/hbm): each JEDEC timing rule, isolated (every other
// parameter 1 tCK), spaces its two commands by exactly its value; the closed forms of isolated
// accesses hold on the HBM3-6400 preset; a 100k-request random trace (reads and writes, both
// page policies, both refresh modes) passes the independent rule checker; the checker catches a
// command log that breaks a rule; hbm-bench's figures behave as the mappings predict.
#include <gtest/gtest.h>

#include <random>

#include "hw/common/base/error.h"
#include "hw/hbm/dram_checker.h"
#include "hw/hbm/dram_controller.h"
#include "hw/bench/hbm_bench.h"

using namespace ahbm;
using namespace ahbm::hbm;

namespace {

// Every timing 1 tCK, refresh off, a row-interleaved mapping: a rule under test stands alone.
DramSpec quiet() {
  DramSpec s = hbm3_6400();
  DramTiming& t = s.t;
  t.burst = t.rcd_rd = t.rcd_wr = t.rp = t.ras = t.rc = t.ccd_l = t.ccd_s = t.ccd_r = t.rrd_l = t.rrd_s = t.faw = 1;
  t.rtp = t.wr = t.rtw = t.wtr_l = t.wtr_s = t.rl = t.wl = 1;
  s.refresh = RefreshPolicy::off;
  s.mapping = mapping_preset("row_interleaved", s.org);
  return s;
}

// The byte address of (sid, bank group, bank, row, column) under `s`'s mapping.
uint64_t at(const DramSpec& s, int sid, int bg, int bank, uint64_t row, int col = 0) {
  uint64_t addr = 0;
  int shift = 0;
  for (const auto& x : s.mapping.layout) {
    uint64_t v = 0;
    switch (x.field) {
      case AddressMapping::Field::byte: v = 0; break;
      case AddressMapping::Field::column: v = uint64_t(col); break;
      case AddressMapping::Field::bankgroup: v = uint64_t(bg); break;
      case AddressMapping::Field::bank: v = uint64_t(bank); break;
      case AddressMapping::Field::sid: v = uint64_t(sid); break;
      case AddressMapping::Field::row: v = row; break;
    }
    addr |= v << shift;
    shift += x.bits;
  }
  return addr;
}

struct Trace {
  std::vector<DramCommand> cmds;
  std::vector<DramCompletion> done;
  // Cycle of the n-th command of kind `c` (0-based).
  int64_t nth(DramCmd c, int n = 0) const {
    for (const DramCommand& x : cmds)
      if (x.cmd == c && n-- == 0) return x.cycle;
    ADD_FAILURE() << "no " << dram_cmd_name(c) << " #" << n;
    return -1;
  }
};

Trace run(const DramSpec& s, const std::vector<DramRequest>& reqs, int64_t until = 100000) {
  DramController c(s, true);
  for (const DramRequest& r : reqs) c.enqueue(r);
  Trace out;
  c.run_until(until, out.done);
  out.cmds = c.commands();
  EXPECT_TRUE(c.idle());
  const DramCheckResult chk = check_dram_commands(s, out.cmds);
  EXPECT_TRUE(chk.ok()) << (chk.first.empty() ? "" : chk.first[0]);
  return out;
}

DramRequest rd(uint64_t id, uint64_t addr, int64_t t = 0) { return {id, addr, false, t}; }
DramRequest wr(uint64_t id, uint64_t addr, int64_t t = 0) { return {id, addr, true, t}; }

}  // namespace

TEST(DramTiming, ColumnToColumnSpacings) {
  DramSpec s = quiet();
  s.t.ccd_l = 7, s.t.ccd_s = 5, s.t.ccd_r = 6;
  // Same bank group (one row): tCCD_L.
  Trace a = run(s, {rd(0, at(s, 0, 0, 0, 3, 0)), rd(1, at(s, 0, 0, 0, 3, 1))});
  EXPECT_EQ(a.nth(DramCmd::rd, 1) - a.nth(DramCmd::rd, 0), 7);
  // Other bank group, same stack ID: tCCD_S; other stack ID: tCCD_R.
  Trace b = run(s, {rd(0, at(s, 0, 0, 0, 3)), rd(1, at(s, 0, 1, 0, 3))});
  EXPECT_EQ(b.nth(DramCmd::rd, 1) - b.nth(DramCmd::rd, 0), 5);
  Trace c = run(s, {rd(0, at(s, 0, 0, 0, 3)), rd(1, at(s, 1, 0, 0, 3))});
  EXPECT_EQ(c.nth(DramCmd::rd, 1) - c.nth(DramCmd::rd, 0), 6);
  // Writes obey the same spacings.
  Trace w = run(s, {wr(0, at(s, 0, 2, 1, 3, 0)), wr(1, at(s, 0, 2, 1, 3, 1))});
  EXPECT_EQ(w.nth(DramCmd::wr, 1) - w.nth(DramCmd::wr, 0), 7);
}

TEST(DramTiming, ActivateSpacings) {
  DramSpec s = quiet();
  s.t.rrd_l = 6, s.t.rrd_s = 4;
  Trace l = run(s, {rd(0, at(s, 0, 0, 0, 1)), rd(1, at(s, 0, 0, 1, 1))});  // same group, other bank
  EXPECT_EQ(l.nth(DramCmd::act, 1) - l.nth(DramCmd::act, 0), 6);
  Trace g = run(s, {rd(0, at(s, 0, 0, 0, 1)), rd(1, at(s, 0, 1, 0, 1))});  // other group
  EXPECT_EQ(g.nth(DramCmd::act, 1) - g.nth(DramCmd::act, 0), 4);
  // tFAW: the fifth ACT waits for the window opened by the first.
  s.t.rrd_l = s.t.rrd_s = 1;
  s.t.faw = 20;
  std::vector<DramRequest> five;
  for (int i = 0; i < 5; ++i) five.push_back(rd(uint64_t(i), at(s, i / 4, i % 4, 0, 1)));
  Trace f = run(s, five);
  EXPECT_EQ(f.nth(DramCmd::act, 3) - f.nth(DramCmd::act, 0), 3);
  EXPECT_EQ(f.nth(DramCmd::act, 4) - f.nth(DramCmd::act, 0), 20);
}

TEST(DramTiming, BankCycleSpacings) {
  DramSpec s = quiet();
  s.t.rcd_rd = 8, s.t.ras = 11, s.t.rp = 9, s.t.rc = 1;
  // A row miss in one bank: ACT -tRCD- RD, ACT -tRAS- PRE -tRP- ACT.
  Trace m = run(s, {rd(0, at(s, 0, 0, 0, 1)), rd(1, at(s, 0, 0, 0, 2))});
  EXPECT_EQ(m.nth(DramCmd::rd) - m.nth(DramCmd::act), 8);
  EXPECT_EQ(m.nth(DramCmd::pre) - m.nth(DramCmd::act), 11);
  EXPECT_EQ(m.nth(DramCmd::act, 1) - m.nth(DramCmd::pre), 9);
  // tRC longer than tRAS + tRP sets the ACT-to-ACT spacing.
  s.t.rcd_rd = 1, s.t.ras = 2, s.t.rp = 2, s.t.rc = 30;
  Trace c = run(s, {rd(0, at(s, 0, 0, 0, 1)), rd(1, at(s, 0, 0, 0, 2))});
  EXPECT_EQ(c.nth(DramCmd::act, 1) - c.nth(DramCmd::act, 0), 30);
  // Writes: tRCD_WR.
  s = quiet();
  s.t.rcd_wr = 13;
  Trace w = run(s, {wr(0, at(s, 0, 0, 0, 1))});
  EXPECT_EQ(w.nth(DramCmd::wr) - w.nth(DramCmd::act), 13);
}

TEST(DramTiming, PrechargeAfterAccessSpacings) {
  DramSpec s = quiet();
  s.t.rtp = 9;
  Trace r = run(s, {rd(0, at(s, 0, 0, 0, 1)), rd(1, at(s, 0, 0, 0, 2))});
  EXPECT_EQ(r.nth(DramCmd::pre) - r.nth(DramCmd::rd), 9);
  s = quiet();
  s.t.wl = 3, s.t.burst = 2, s.t.ccd_s = s.t.ccd_l = s.t.ccd_r = 2, s.t.wr = 10;
  Trace w = run(s, {wr(0, at(s, 0, 0, 0, 1)), rd(1, at(s, 0, 0, 0, 2))});
  EXPECT_EQ(w.nth(DramCmd::pre) - w.nth(DramCmd::wr), 3 + 2 + 10);  // WL + burst + tWR
}

TEST(DramTiming, TurnaroundSpacings) {
  DramSpec s = quiet();
  s.t.rtw = 12;
  Trace rw = run(s, {rd(0, at(s, 0, 0, 0, 1, 0)), wr(1, at(s, 0, 0, 0, 1, 1))});
  EXPECT_EQ(rw.nth(DramCmd::wr) - rw.nth(DramCmd::rd), 12);
  s = quiet();
  s.t.wl = 2, s.t.burst = 1, s.t.wtr_l = 8, s.t.wtr_s = 5;
  Trace wl = run(s, {wr(0, at(s, 0, 0, 0, 1, 0)), rd(1, at(s, 0, 0, 0, 1, 1))});  // same group
  EXPECT_EQ(wl.nth(DramCmd::rd) - wl.nth(DramCmd::wr), 2 + 1 + 8);
  Trace ws = run(s, {wr(0, at(s, 0, 0, 0, 1)), rd(1, at(s, 0, 1, 0, 1, 1))});  // other group
  EXPECT_EQ(ws.nth(DramCmd::rd) - ws.nth(DramCmd::wr), 2 + 1 + 5);
}

TEST(DramTiming, LatenciesAndRefresh) {
  DramSpec s = quiet();
  s.t.rl = 17, s.t.wl = 6, s.t.burst = 3, s.t.ccd_s = s.t.ccd_l = s.t.ccd_r = 3;
  Trace r = run(s, {rd(7, at(s, 0, 0, 0, 1))});
  ASSERT_EQ(r.done.size(), 1u);
  EXPECT_EQ(r.done[0].done - r.nth(DramCmd::rd), 17 + 3);  // RL + burst: last data out
  Trace w = run(s, {wr(7, at(s, 0, 0, 0, 1))});
  EXPECT_EQ(w.done[0].done - w.nth(DramCmd::wr), 6 + 3);
  // All-bank refresh: due at tREFI; a request arriving then activates tRFC after the REF.
  s = quiet();
  s.refresh = RefreshPolicy::all_bank;
  s.t.refi = 100, s.t.rfc_ab = 40;
  Trace ab = run(s, {rd(0, at(s, 0, 0, 0, 1), 100)}, 1000);
  EXPECT_EQ(ab.nth(DramCmd::ref_ab), 100);
  EXPECT_EQ(ab.nth(DramCmd::act) - ab.nth(DramCmd::ref_ab), 40);
  // Per-bank: bank 0 is refreshed at tREFI / banks; only it waits tRFCpb, another bank does not.
  s.refresh = RefreshPolicy::per_bank;
  s.t.refi = 32 * 10, s.t.rfc_pb = 25;
  Trace pb = run(s, {rd(0, at(s, 0, 0, 0, 1), 10), rd(1, at(s, 0, 1, 0, 1), 10)}, 60);
  EXPECT_EQ(pb.nth(DramCmd::ref_pb), 10);
  EXPECT_EQ(pb.nth(DramCmd::act, 0), 11);  // bank group 1 goes on at once (the REF held the row bus at 10)
  EXPECT_EQ(pb.nth(DramCmd::act, 1) - pb.nth(DramCmd::ref_pb), 25);  // bank 0 after tRFCpb
}

TEST(DramTiming, Hbm3ClosedFormsOfIsolatedAccesses) {
  const DramSpec s = hbm3_6400();
  const DramTiming& t = s.t;
  EXPECT_NEAR(s.peak_gbps(), 25.6, 1e-9);
  // One read from idle: tRCD + RL + burst.
  Trace one = run(s, {rd(0, at(s, 0, 0, 0, 5))});
  EXPECT_EQ(one.done[0].done, t.rcd_rd + t.rl + t.burst);
  // A row miss adds the precharge: the second ACT waits for tRAS + tRP (= tRC here) after the first.
  Trace miss = run(s, {rd(0, at(s, 0, 0, 0, 5)), rd(1, at(s, 0, 0, 0, 6))});
  EXPECT_EQ(miss.done[1].done, std::max(t.ras + t.rp, t.rc) + t.rcd_rd + t.rl + t.burst);
  // Back-to-back reads of open rows: tCCD_L apart in one bank group, tCCD_S across groups.
  std::vector<DramRequest> same, across;
  for (int i = 0; i < 8; ++i) {
    same.push_back(rd(uint64_t(i), at(s, 0, 0, 0, 5, i)));
    across.push_back(rd(uint64_t(i), at(s, 0, i % 4, 0, 5, i / 4)));
  }
  Trace a = run(s, same), b = run(s, across);
  EXPECT_EQ(a.nth(DramCmd::rd, 7) - a.nth(DramCmd::rd, 0), 7 * t.ccd_l);
  EXPECT_EQ(b.nth(DramCmd::rd, 7) - b.nth(DramCmd::rd, 4), 3 * t.ccd_s);
}

TEST(DramTiming, RandomTraceOf100kRequestsKeepsEveryRule) {
  for (int variant = 0; variant < 2; ++variant) {
    DramSpec s = hbm3_6400();
    s.page = variant == 0 ? PagePolicy::open : PagePolicy::closed;
    s.refresh = variant == 0 ? RefreshPolicy::all_bank : RefreshPolicy::per_bank;
    s.queue_depth = 16;
    DramController c(s, true);
    std::mt19937_64 rng(42 + variant);
    // Addresses from a few hot rows per bank (hits and misses both), 25% writes.
    std::uniform_int_distribution<uint64_t> row(0, 3), col(0, 31), bank(0, 31), kind(0, 3), gap(0, 6);
    std::vector<DramCompletion> done;
    int64_t t = 0;
    for (uint64_t i = 0; i < 50000; ++i) {
      const uint64_t b = bank(rng);
      const uint64_t addr = at(s, int(b / 16), int(b / 4 % 4), int(b % 4), row(rng), int(col(rng)));
      t += int64_t(gap(rng));
      while (c.full()) c.run_until(c.now() + 1, done);
      c.enqueue({i, addr, kind(rng) == 0, std::max(t, c.now())});
    }
    c.run_until(c.now() + 10000000, done);
    ASSERT_TRUE(c.idle());
    EXPECT_EQ(done.size(), 50000u);
    EXPECT_GT(c.stats().refreshes, 0u);
    EXPECT_GT(c.stats().row_hit_rate(), 0.05);
    EXPECT_LT(c.stats().row_hit_rate(), 0.95);
    const DramCheckResult chk = check_dram_commands(s, c.commands());
    EXPECT_TRUE(chk.ok()) << chk.violations << " violations, first: " << (chk.first.empty() ? "" : chk.first[0]);
  }
}

TEST(DramChecker, CatchesABrokenLog) {
  const DramSpec s = hbm3_6400();
  Trace ok = run(s, {rd(0, at(s, 0, 0, 0, 5)), rd(1, at(s, 0, 0, 0, 6))});
  // Move the second ACT one cycle earlier: tRP (and tRC) broken.
  std::vector<DramCommand> early = ok.cmds;
  for (DramCommand& x : early)
    if (x.cmd == DramCmd::act && x.cycle > 0) x.cycle -= 1;
  DramCheckResult r = check_dram_commands(s, early);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.first.at(0).find("tRP"), std::string::npos) << r.first.at(0);
  // A read of a row that is not open.
  std::vector<DramCommand> wrong = ok.cmds;
  for (DramCommand& x : wrong)
    if (x.cmd == DramCmd::rd) x.row += 1;
  EXPECT_FALSE(check_dram_commands(s, wrong).ok());
  // Two reads one cycle apart in one bank group: tCCD_L, and their data overlaps on the bus.
  std::vector<DramCommand> tight = {{0, DramCmd::act, 0, 5}, {30, DramCmd::rd, 0, 5}, {31, DramCmd::rd, 0, 5}};
  r = check_dram_commands(s, tight);
  EXPECT_EQ(r.violations, 2u);
}

TEST(HbmBench, MappingsRankAsTheirLocalityPredicts) {
  HbmBenchOptions o;
  o.bytes = 512 * 1024;
  o.check = true;
  auto eff = [&](const char* mapping) {
    o.spec.mapping = mapping_preset(mapping, o.spec.org);
    const HbmBenchResult r = run_hbm_bench(o);
    EXPECT_EQ(r.rule_violations, 0) << mapping;
    EXPECT_LE(r.efficiency, 1.0);
    EXPECT_NEAR(r.first_access_ns, (o.spec.t.rcd_rd + o.spec.t.rl + o.spec.t.burst) * o.spec.t.tck_ns, 1e-9);
    return r.efficiency;
  };
  const double bg = eff("bg_interleaved"), row = eff("row_interleaved"), bank = eff("bank_above_row");
  // Bank-group interleaving loses only refresh (tRFC / tREFI = 9%) and a little at row switches.
  EXPECT_GT(bg, 0.85);
  EXPECT_LT(bg, 1.0 - 0.08);
  // One row at a time in one group: tCCD_L = 2 bursts, partly hidden by FR-FCFS serving the
  // next row (another group) from the queue at the same time.
  EXPECT_GT(bg, row + 0.05);
  // Bank above row: every page boundary is a row miss in the same bank (tRTP + tRP + tRCD), and
  // every burst tCCD_L after the previous one.
  EXPECT_GT(row, bank + 0.2);
  EXPECT_LT(bank, 0.45);
}

TEST(HbmBench, RefreshShareAndBadOptions) {
  HbmBenchOptions o;
  o.bytes = 1 << 20;
  o.spec.refresh = RefreshPolicy::off;
  const HbmBenchResult off = run_hbm_bench(o);
  EXPECT_EQ(off.refreshes, 0u);
  EXPECT_EQ(off.refresh_share, 0.0);
  o.spec.refresh = RefreshPolicy::all_bank;
  const HbmBenchResult on = run_hbm_bench(o);
  EXPECT_GT(on.refreshes, 0u);
  // tRFC / tREFI of the time goes to refresh (within one refresh of rounding).
  EXPECT_NEAR(on.refresh_share, double(o.spec.t.rfc_ab) / o.spec.t.refi, 0.03);
  EXPECT_LT(on.efficiency, off.efficiency);
  o.chunk_bytes = 100;
  EXPECT_THROW(run_hbm_bench(o), InputError);
}

TEST(HbmBench, PseudoChannelsSideBySideScaleThePeakAndKeepTheRules) {
  HbmBenchOptions o;
  o.bytes = 1 << 20;
  o.inflight = 1;
  o.check = true;
  const HbmBenchResult one = run_hbm_bench(o);
  o.pseudo_channels = 12;  // a PE's slice
  const HbmBenchResult twelve = run_hbm_bench(o);
  EXPECT_EQ(twelve.rule_violations, 0);
  EXPECT_NEAR(twelve.peak_gbps, 12 * 25.6, 1e-9);
  EXPECT_LE(twelve.efficiency, 1.0);
  // A 32 KiB chunk spread over 12 controllers is over 8x faster, but its fixed first access
  // weighs more: the efficiency drops.
  EXPECT_LT(twelve.chunk_ns_mean * 8, one.chunk_ns_mean);
  EXPECT_LT(twelve.efficiency, one.efficiency);
  // Inflight 1: a chunk never starts before the previous one's data has moved.
  EXPECT_GE(twelve.total_ns + 1e-9, twelve.chunk_ns_mean * double(twelve.chunks));
}
