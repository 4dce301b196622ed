#include "hw/hbm/dram_checker.h"

#include <algorithm>
#include <deque>
#include <map>

namespace ahbm::hbm {

namespace {

constexpr int64_t kLongAgo = -(int64_t(1) << 40);

struct BankHistory {
  bool open = false;
  uint64_t row = 0;
  int64_t act = kLongAgo, pre = kLongAgo, rd = kLongAgo, wr = kLongAgo, ref_end = kLongAgo;
};

}  // namespace

DramCheckResult check_dram_commands(const DramSpec& spec, const std::vector<DramCommand>& log) {
  const DramTiming& t = spec.t;
  const int banks = spec.org.banks(), per_group = spec.org.banks_per_group, groups_per_sid = spec.org.bank_groups;
  const int groups = banks / per_group;
  std::vector<BankHistory> bank(static_cast<size_t>(banks), BankHistory{});
  std::vector<int64_t> grp_act(size_t(groups), kLongAgo), grp_rd(size_t(groups), kLongAgo), grp_wr(size_t(groups), kLongAgo);
  std::vector<std::deque<int64_t>> acts(size_t(spec.act_scopes()));  // the last four ACTs of each ACT scope
  int64_t any_rd = kLongAgo;
  std::map<int64_t, int> row_cmds, col_cmds;  // per cycle
  std::vector<std::pair<int64_t, int64_t>> bursts;  // data on the bus [start, end)
  DramCheckResult r;
  auto fail = [&](const DramCommand& c, const std::string& why) {
    ++r.violations;
    if (r.first.size() < 10)
      r.first.push_back(std::string(dram_cmd_name(c.cmd)) + " bank " + std::to_string(c.bank) + " at tCK " +
                        std::to_string(c.cycle) + ": " + why);
  };
  auto spacing = [&](const DramCommand& c, int64_t since, int need, const char* rule) {
    if (c.cycle - since < need)
      fail(c, std::string(rule) + " needs " + std::to_string(need) + " tCK, got " + std::to_string(c.cycle - since));
  };
  for (const DramCommand& c : log) {
    const bool column = c.cmd == DramCmd::rd || c.cmd == DramCmd::wr;
    if (++(column ? col_cmds : row_cmds)[c.cycle] > 1) fail(c, "second command on the same command bus in one cycle");
    if (c.cmd == DramCmd::ref_ab) {
      for (int b = 0; b < banks; ++b) {
        BankHistory& k = bank[size_t(b)];
        if (k.open) fail(c, "bank " + std::to_string(b) + " still open");
        spacing(c, k.pre, t.rp, "tRP (PRE->REF)");
        spacing(c, k.act, t.rc, "tRC (ACT->REF)");
        if (c.cycle < k.ref_end) fail(c, "during a refresh");
        k.ref_end = c.cycle + t.rfc_ab;
      }
      continue;
    }
    BankHistory& k = bank[size_t(c.bank)];
    const int g = c.bank / per_group, sid = g / groups_per_sid;
    switch (c.cmd) {
      case DramCmd::act:
        if (k.open) fail(c, "bank already open");
        if (c.cycle < k.ref_end) fail(c, "tRFC: bank still refreshing");
        spacing(c, k.pre, t.rp, "tRP");
        spacing(c, k.act, t.rc, "tRC");
        for (int gi = 0; gi < groups; ++gi)
          if (gi == g || spec.act_scope_of(gi / groups_per_sid) == spec.act_scope_of(sid))
            spacing(c, grp_act[size_t(gi)], gi == g ? t.rrd_l : t.rrd_s, gi == g ? "tRRD_L" : "tRRD_S");
        {
          std::deque<int64_t>& window = acts[size_t(spec.act_scope_of(sid))];
          if (window.size() == 4) spacing(c, window.front(), t.faw, "tFAW");
          window.push_back(c.cycle);
          if (window.size() > 4) window.pop_front();
        }
        k.open = true;
        k.row = c.row;
        k.act = grp_act[size_t(g)] = c.cycle;
        break;
      case DramCmd::pre:
        if (!k.open) fail(c, "bank not open");
        spacing(c, k.act, t.ras, "tRAS");
        spacing(c, k.rd, t.rtp, "tRTP");
        spacing(c, k.wr, t.wl + t.burst + t.wr, "WL + burst + tWR");
        k.open = false;
        k.pre = c.cycle;
        break;
      case DramCmd::rd:
      case DramCmd::wr: {
        const bool w = c.cmd == DramCmd::wr;
        if (!k.open || k.row != c.row) fail(c, "row " + std::to_string(c.row) + " not open");
        spacing(c, k.act, w ? t.rcd_wr : t.rcd_rd, w ? "tRCD_WR" : "tRCD_RD");
        for (int gi = 0; gi < groups; ++gi) {
          const bool same_sid = gi / groups_per_sid == sid;
          spacing(c, (w ? grp_wr : grp_rd)[size_t(gi)], gi == g ? t.ccd_l : same_sid ? t.ccd_s : t.ccd_r,
                  gi == g ? "tCCD_L" : same_sid ? "tCCD_S" : "tCCD_R");
          if (!w) spacing(c, grp_wr[size_t(gi)], t.wl + t.burst + (gi == g ? t.wtr_l : t.wtr_s), gi == g ? "WL + burst + tWTR_L" : "WL + burst + tWTR_S");
        }
        if (w) spacing(c, any_rd, t.rtw, "tRTW");
        const int64_t start = c.cycle + (w ? t.wl : t.rl);
        bursts.emplace_back(start, start + t.burst);
        (w ? k.wr : k.rd) = c.cycle;
        (w ? grp_wr : grp_rd)[size_t(g)] = c.cycle;
        if (!w) any_rd = c.cycle;
        break;
      }
      case DramCmd::ref_pb:
        if (k.open) fail(c, "bank still open");
        spacing(c, k.pre, t.rp, "tRP (PRE->REF)");
        spacing(c, k.act, t.rc, "tRC (ACT->REF)");
        if (c.cycle < k.ref_end) fail(c, "during a refresh");
        k.ref_end = c.cycle + t.rfc_pb;
        break;
      case DramCmd::ref_ab:
        break;
    }
  }
  std::sort(bursts.begin(), bursts.end());
  for (size_t i = 1; i < bursts.size(); ++i)
    if (bursts[i].first < bursts[i - 1].second) {
      ++r.violations;
      if (r.first.size() < 10) r.first.push_back("data bursts overlap on the bus at tCK " + std::to_string(bursts[i].first));
    }
  return r;
}

}  // namespace ahbm::hbm
