#include "hw/hbm/dram_controller.h"

#include <algorithm>
#include <limits>

namespace ahbm::hbm {

const char* dram_cmd_name(DramCmd c) {
  switch (c) {
    case DramCmd::act: return "ACT";
    case DramCmd::pre: return "PRE";
    case DramCmd::rd: return "RD";
    case DramCmd::wr: return "WR";
    case DramCmd::ref_ab: return "REFab";
    case DramCmd::ref_pb: return "REFpb";
  }
  return "?";
}

DramController::DramController(const DramSpec& spec, bool log)
    : spec_(spec),
      keep_log_(log),
      banks_(size_t(spec.org.banks())),
      wanted_(size_t(spec.org.banks()), 0),
      group_act_(size_t(spec.org.stack_ids * spec.org.bank_groups), kNever),
      group_rd_(group_act_),
      group_wr_(group_act_),
      cas_floor_(group_act_.size() * 2, 0),
      cas_floor_at_(group_act_.size() * 2, kNever),
      act_window_(size_t(spec.act_scopes()), {kNever, kNever, kNever, kNever}),
      last_act_(size_t(spec.act_scopes()), kNever),
      ref_due_(spec.refresh == RefreshPolicy::per_bank ? std::max(1, spec.t.refi / spec.org.banks()) : spec.t.refi) {
  stats_.bank_bursts.assign(size_t(spec.org.banks()), 0);
}

void DramController::enqueue(const DramRequest& r) {
  const DramAddress a = spec_.decode(r.addr);
  queue_.push_back({r, a, spec_.bank_index(a)});
}

int64_t DramController::earliest_act(int b) const {
  const DramTiming& t = spec_.t;
  const Bank& k = banks_[size_t(b)];
  const size_t scope = size_t(spec_.act_scope_of(sid_of(b)));
  return std::max({k.pre + t.rp, k.act + t.rc, group_act_[size_t(group_of(b))] + t.rrd_l, last_act_[scope] + t.rrd_s,
                   act_window_[scope][0] + t.faw, k.ref_until});
}

int64_t DramController::earliest_pre(int b) const {
  const DramTiming& t = spec_.t;
  const Bank& k = banks_[size_t(b)];
  return std::max({k.act + t.ras, k.rd + t.rtp, k.wr + t.wl + t.burst + t.wr});
}

int64_t DramController::earliest_cas(int b, bool write) const {
  const DramTiming& t = spec_.t;
  const int g = group_of(b);
  // The bus rules depend on the bank's group only: computed once per group, command kind and
  // cycle (the column scan asks for every queued row hit).
  int64_t& floor = cas_floor_[size_t(g) * 2 + (write ? 1 : 0)];
  if (cas_floor_at_[size_t(g) * 2 + (write ? 1 : 0)] != now_) {
    floor = cas_bus_floor(g, write);
    cas_floor_at_[size_t(g) * 2 + (write ? 1 : 0)] = now_;
  }
  return std::max(floor, banks_[size_t(b)].act + (write ? t.rcd_wr : t.rcd_rd));
}

int64_t DramController::cas_bus_floor(int g, bool write) const {
  const DramTiming& t = spec_.t;
  const int groups_per_sid = spec_.org.bank_groups, sid = g / groups_per_sid;
  int64_t e = std::numeric_limits<int64_t>::min();
  for (int gi = 0; gi < int(group_act_.size()); ++gi) {
    // Same command kind: tCCD_L in the group, tCCD_S across groups, tCCD_R across stack IDs.
    const int ccd = gi == g ? t.ccd_l : gi / groups_per_sid == sid ? t.ccd_s : t.ccd_r;
    e = std::max(e, (write ? group_wr_ : group_rd_)[size_t(gi)] + ccd);
    // A read after a write waits for the write data plus tWTR.
    if (!write) e = std::max(e, group_wr_[size_t(gi)] + t.wl + t.burst + (gi == g ? t.wtr_l : t.wtr_s));
  }
  if (write) e = std::max(e, last_rd_ + t.rtw);
  return e;
}

int64_t DramController::earliest_ref(int b) const {
  const DramTiming& t = spec_.t;
  int64_t e = std::numeric_limits<int64_t>::min();
  for (int i = 0; i < int(banks_.size()); ++i) {
    if (b >= 0 && i != b) continue;
    const Bank& k = banks_[size_t(i)];
    e = std::max({e, k.pre + t.rp, k.act + t.rc, k.ref_until});
  }
  return e;
}

void DramController::mark_wanted_rows() {
  std::fill(wanted_.begin(), wanted_.end(), char(0));
  for (const Queued& q : queue_)
    if (q.r.arrival <= now_ && banks_[size_t(q.bank)].open_row == int64_t(q.a.row)) wanted_[size_t(q.bank)] = 1;
}

bool DramController::refresh_blocks(int b) const {
  return ref_pending_ && (spec_.refresh == RefreshPolicy::all_bank || b == ref_bank_);
}

void DramController::issue(DramCmd c, int b, uint64_t row) {
  if (keep_log_) log_.push_back({now_, c, b, row});
  ++issued_;
  if (c == DramCmd::rd || c == DramCmd::wr) std::fill(cas_floor_at_.begin(), cas_floor_at_.end(), kNever);
  switch (c) {
    case DramCmd::act: {
      Bank& k = banks_[size_t(b)];
      k.open_row = int64_t(row);
      k.act = now_;
      group_act_[size_t(group_of(b))] = now_;
      const size_t scope = size_t(spec_.act_scope_of(sid_of(b)));
      last_act_[scope] = now_;
      std::rotate(act_window_[scope].begin(), act_window_[scope].begin() + 1, act_window_[scope].end());
      act_window_[scope][3] = now_;
      ++stats_.acts;
      break;
    }
    case DramCmd::pre:
      banks_[size_t(b)].open_row = -1;
      banks_[size_t(b)].pre = now_;
      ++stats_.pres;
      break;
    case DramCmd::rd:
      banks_[size_t(b)].rd = now_;
      group_rd_[size_t(group_of(b))] = now_;
      last_rd_ = now_;
      ++stats_.reads;
      ++stats_.bank_bursts[size_t(b)];
      break;
    case DramCmd::wr:
      banks_[size_t(b)].wr = now_;
      group_wr_[size_t(group_of(b))] = now_;
      ++stats_.writes;
      ++stats_.bank_bursts[size_t(b)];
      break;
    case DramCmd::ref_ab:
      for (Bank& k : banks_) k.ref_until = now_ + spec_.t.rfc_ab;
      stats_.refresh_cycles += spec_.t.rfc_ab;
      ++stats_.refreshes;
      break;
    case DramCmd::ref_pb:
      banks_[size_t(b)].ref_until = now_ + spec_.t.rfc_pb;
      // One bank of banks() is out for tRFCpb: its share of the pseudo-channel's time.
      stats_.refresh_cycles += spec_.t.rfc_pb / spec_.org.banks();
      ++stats_.refreshes;
      break;
  }
}

void DramController::step(std::vector<DramCompletion>& done) {
  bool row_bus_used = false;
  // Refresh: due -> close the covered banks -> REF.
  if (spec_.refresh != RefreshPolicy::off && !ref_pending_ && now_ >= ref_due_) ref_pending_ = true;
  if (ref_pending_) {
    const bool all = spec_.refresh == RefreshPolicy::all_bank;
    bool open = false;
    for (int b = 0; b < int(banks_.size()) && !row_bus_used; ++b) {
      if (!all && b != ref_bank_) continue;
      if (banks_[size_t(b)].open_row < 0) continue;
      open = true;
      if (earliest_pre(b) <= now_) {
        issue(DramCmd::pre, b, 0);
        row_bus_used = true;
      }
    }
    if (!open && !row_bus_used && earliest_ref(all ? -1 : ref_bank_) <= now_) {
      issue(all ? DramCmd::ref_ab : DramCmd::ref_pb, all ? -1 : ref_bank_, 0);
      row_bus_used = true;
      ref_pending_ = false;
      ref_due_ += all ? spec_.t.refi : std::max(1, spec_.t.refi / spec_.org.banks());
      if (!all) ref_bank_ = (ref_bank_ + 1) % spec_.org.banks();
    }
  }
  // Column command: the oldest ready row hit.
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (it->r.arrival > now_) continue;
    const Bank& k = banks_[size_t(it->bank)];
    if (k.open_row != int64_t(it->a.row) || earliest_cas(it->bank, it->r.write) > now_) continue;
    issue(it->r.write ? DramCmd::wr : DramCmd::rd, it->bank, it->a.row);
    const DramTiming& t = spec_.t;
    done.push_back({it->r.id, now_ + (it->r.write ? t.wl : t.rl) + t.burst});
    queue_.erase(it);
    break;
  }
  if (row_bus_used) return;
  mark_wanted_rows();
  // Row command: the oldest request whose bank must open or close, when the rules allow it.
  for (const Queued& q : queue_) {
    if (q.r.arrival > now_ || refresh_blocks(q.bank)) continue;
    const Bank& k = banks_[size_t(q.bank)];
    if (k.open_row < 0) {
      if (earliest_act(q.bank) <= now_) {
        issue(DramCmd::act, q.bank, q.a.row);
        return;
      }
    } else if (k.open_row != int64_t(q.a.row) && !wanted_[size_t(q.bank)] && earliest_pre(q.bank) <= now_) {
      issue(DramCmd::pre, q.bank, 0);
      ++stats_.conflicts;
      return;
    }
  }
  if (spec_.page == PagePolicy::closed)
    for (int b = 0; b < int(banks_.size()); ++b)
      if (banks_[size_t(b)].open_row >= 0 && !wanted_[size_t(b)] && earliest_pre(b) <= now_) {
        issue(DramCmd::pre, b, 0);
        return;
      }
}

int64_t DramController::next_event() const {
  int64_t e = std::numeric_limits<int64_t>::max();
  for (const Queued& q : queue_) {
    if (q.r.arrival <= now_) return now_;  // nothing is earlier than now
    e = std::min(e, q.r.arrival);
  }
  if (spec_.refresh != RefreshPolicy::off) e = std::min(e, ref_pending_ ? now_ : std::max(now_, ref_due_));
  // With the closed-page policy an idle open bank still has a PRE to issue.
  if (spec_.page == PagePolicy::closed)
    for (const Bank& k : banks_)
      if (k.open_row >= 0) e = now_;
  return e;
}

void DramController::run_until(int64_t until, std::vector<DramCompletion>& done) {
  while (now_ < until) advance(until, done);
}

void DramController::drain(std::vector<DramCompletion>& done, bool until_space) {
  while (until_space ? full() : !idle()) advance(std::numeric_limits<int64_t>::max(), done);
}

void DramController::advance(int64_t until, std::vector<DramCompletion>& done) {
  const int64_t next = next_event();
  if (next > now_) {  // nothing to do before `next`
    now_ = std::min(until, next);
    return;
  }
  const uint64_t issued = issued_;
  const bool pending = ref_pending_;
  step(done);
  // A cycle that changed nothing: the state stays as it is until the first cycle at which a
  // command may issue, so the cycles before it are skipped (they would issue nothing).
  const int64_t quiet = issued == issued_ && pending == ref_pending_ ? quiet_until() : now_ + 1;
  now_ = quiet == std::numeric_limits<int64_t>::max() ? now_ + 1 : std::max(now_ + 1, std::min(until, quiet));
}

int64_t DramController::quiet_until() const {
  int64_t e = std::numeric_limits<int64_t>::max();
  if (spec_.refresh != RefreshPolicy::off) {
    if (!ref_pending_) {
      e = ref_due_;
    } else {  // closing the covered banks, then REF
      const bool all = spec_.refresh == RefreshPolicy::all_bank;
      bool open = false;
      for (int b = 0; b < int(banks_.size()); ++b)
        if ((all || b == ref_bank_) && banks_[size_t(b)].open_row >= 0) {
          open = true;
          e = std::min(e, earliest_pre(b));
        }
      if (!open) e = std::min(e, earliest_ref(all ? -1 : ref_bank_));
    }
  }
  // step() has just marked the wanted rows (it reached the row command, having issued nothing).
  for (const Queued& q : queue_) {
    if (q.r.arrival > now_) {
      e = std::min(e, q.r.arrival);
      continue;
    }
    const Bank& k = banks_[size_t(q.bank)];
    if (k.open_row == int64_t(q.a.row)) e = std::min(e, earliest_cas(q.bank, q.r.write));
    else if (refresh_blocks(q.bank)) continue;  // until the REF (above)
    else if (k.open_row < 0) e = std::min(e, earliest_act(q.bank));
    else if (!wanted_[size_t(q.bank)]) e = std::min(e, earliest_pre(q.bank));
    // else: it waits for the row hits of the open row (their RD/WR are above)
  }
  if (spec_.page == PagePolicy::closed)
    for (int b = 0; b < int(banks_.size()); ++b)
      if (banks_[size_t(b)].open_row >= 0 && !wanted_[size_t(b)]) e = std::min(e, earliest_pre(b));
  return e;
}

}  // namespace ahbm::hbm
