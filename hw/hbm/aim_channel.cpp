#include "hw/hbm/aim_channel.h"

#include <algorithm>

#include "hw/common/base/error.h"

namespace ahbm::hbm {

const char* aim_cmd_name(AimCmd c) {
  switch (c) {
    case AimCmd::act16: return "ACT16";
    case AimCmd::prea: return "PREA";
    case AimCmd::act: return "ACT";
    case AimCmd::pre: return "PRE";
    case AimCmd::mac16: return "MAC16";
    case AimCmd::wrgb: return "WRGB";
    case AimCmd::wrmac16: return "WRMAC16";
    case AimCmd::rdmac16: return "RDMAC16";
    case AimCmd::af16: return "AF16";
    case AimCmd::rdaf16: return "RDAF16";
    case AimCmd::ewmul16: return "EWMUL16";
    case AimCmd::rdcp: return "RDCP";
    case AimCmd::wrcp: return "WRCP";
    case AimCmd::wra16: return "WRA16";
    case AimCmd::tmod: return "TMOD";
    case AimCmd::ref: return "REFab";
    case AimCmd::host_rd: return "RD";
    case AimCmd::host_wr: return "WR";
    case AimCmd::count: break;
  }
  return "?";
}

AimChannel::AimChannel(const DramSpec& spec, const AimTiming& aim) : spec_(spec), aim_(aim), ref_due_(spec.t.refi) {
  if (spec_.org.banks() != kBanks)
    throw InputError("AiM channel: " + std::to_string(spec_.org.banks()) + " banks (allowed: 16, the GDDR6-AiM channel)");
  if (spec_.refresh == RefreshPolicy::per_bank)
    throw InputError("AiM channel: refresh \"per-bank\" (allowed: all, off; AiM refreshes all banks at once)");
}

int64_t AimChannel::slot(int64_t ready) const { return std::max({ready, now_ + 1, decode_, tmod_ + aim_.modch}); }

bool AimChannel::refresh_before(int64_t t) {
  if (spec_.refresh == RefreshPolicy::off || t < ref_due_) return false;
  refresh();
  return true;
}

void AimChannel::refresh() {
  // The refresh manager's REFab blocks every other command once due; open rows are closed first.
  const DramTiming& t = spec_.t;
  int64_t at = std::max({ref_due_, now_ + 1, tmod_ + aim_.modch});
  if (any_open()) {
    at = std::max(at, prea_ready());
    issue(AimCmd::prea, at);
    prea_ = at;
    for (Bank& b : banks_) b.row = -1;
    at += t.rp;
  }
  for (const Bank& b : banks_) at = std::max({at, b.pre + t.rp, b.act + t.rc});
  at = std::max({at, prea_ + t.rp, wra16_ + t.wl + t.burst + t.wr + t.rp});
  issue(AimCmd::ref, at);
  ref_end_ = at + t.rfc_ab;
  ref_due_ += t.refi;
}

int64_t AimChannel::issue(AimCmd c, int64_t t) {
  now_ = t;
  ++stats_.commands[size_t(c)];
  return t;
}

void AimChannel::mode(bool reg, int64_t ready) {
  if (reg == reg_) return;
  // The controller issues TMOD in place of a command that is ready but needs the other mode.
  for (;;) {
    const int64_t t = slot(ready);
    if (refresh_before(t)) continue;
    tmod_ = issue(AimCmd::tmod, t);
    reg_ = reg;
    return;
  }
}

bool AimChannel::all_open(int64_t row) const {
  return std::all_of(banks_.begin(), banks_.end(), [&](const Bank& b) { return b.row == row; });
}

bool AimChannel::any_open() const {
  return std::any_of(banks_.begin(), banks_.end(), [](const Bank& b) { return b.row >= 0 || b.row == -2; });
}

int64_t AimChannel::prea_ready() const {
  const DramTiming& t = spec_.t;
  int64_t r = std::max({prea_ + t.rp, mac_ + t.rtp, af_ + t.rtp, ewmul_ + t.wl + t.wr, host_wr_ + t.wl + t.burst + t.wr,
                        host_rd_ + t.rtp});
  for (const Bank& b : banks_) r = std::max({r, b.act + t.ras, b.pre + t.rp, b.rd + t.rtp, b.wr + t.wl + t.burst + t.wr});
  return r;
}

int64_t AimChannel::act_ready() const {
  const DramTiming& t = spec_.t;
  int64_t r = std::max({prea_ + t.rp, ref_end_, act_any_ + t.rrd_l, wra16_ + t.wl + t.burst + t.wr + t.rp});
  for (const Bank& b : banks_) r = std::max(r, b.pre + t.rp);
  return r;
}

void AimChannel::open_all(int64_t row, bool reg) {
  while (!all_open(row)) {
    if (any_open()) {
      const int64_t ready = prea_ready();
      mode(reg, ready);
      const int64_t t = slot(ready);
      if (refresh_before(t)) continue;
      prea_ = issue(AimCmd::prea, t);
      for (Bank& b : banks_) b.row = -1;
    } else {
      const int64_t ready = act_ready();
      mode(reg, ready);
      const int64_t t = slot(ready);
      if (refresh_before(t)) continue;
      act_any_ = issue(AimCmd::act16, t);
      for (Bank& b : banks_) b.row = row, b.act = t;
    }
  }
}

void AimChannel::open_bank(int bi, int64_t row, bool reg) {
  const DramTiming& t = spec_.t;
  Bank& b = banks_[size_t(bi)];
  while (b.row != row) {
    if (b.row != -1) {
      const int64_t ready = std::max({b.act + t.ras, b.rd + t.rtp, b.wr + t.wl + t.burst + t.wr, mac_ + t.rtp, af_ + t.rtp,
                                      ewmul_ + t.wl + t.wr, prea_ + t.rp});
      mode(reg, ready);
      const int64_t at = slot(ready);
      if (refresh_before(at)) continue;
      b.pre = issue(AimCmd::pre, at);
      b.row = -1;
    } else {
      const int64_t ready = std::max({b.pre + t.rp, prea_ + t.rp, ref_end_, act_any_ + t.rrd_s,
                                      wra16_ + t.wl + t.burst + t.wr + t.rp});
      mode(reg, ready);
      const int64_t at = slot(ready);
      if (refresh_before(at)) continue;
      act_any_ = b.act = issue(AimCmd::act, at);
      b.row = row;
    }
  }
}

void AimChannel::all_bank_column(AimCmd c, int64_t row, int64_t n, bool reg, int rcd) {
  const DramTiming& t = spec_.t;
  for (int64_t i = 0; i < n;) {
    if (!all_open(row)) {
      open_all(row, reg);
      continue;
    }
    int64_t ready = std::max({act_any_ + rcd, mac_ + t.ccd_l, ewmul_ + t.ccd_l, rdreg_ + t.ccd_l, rdcp_ + t.ccd_l});
    if (c == AimCmd::ewmul16) ready = std::max({ready, wrcp_ + t.ccd_l, wrmac_ + t.ccd_l});
    if (c == AimCmd::af16) ready = act_any_ + rcd;
    mode(reg, ready);
    const int64_t at = slot(ready);
    if (refresh_before(at)) continue;
    issue(c, at);
    if (c == AimCmd::mac16) mac_ = at;
    else if (c == AimCmd::ewmul16) ewmul_ = at;
    else af_ = at;
    complete(at + 1);
    ++i;
  }
}

void AimChannel::host_accesses(int64_t n, bool write) {
  // The AiM DMA decodes one single-bank host request a cycle, spread over the banks of every
  // channel of the block; the channel's AiM queue must be empty first and its R/W buffer empty
  // before the next ISR is accepted. The last request may find its bank open at another row.
  const DramTiming& t = spec_.t;
  const int64_t start = std::max(decode_, now_ + 1);
  int64_t last = start + n - 1 + t.rp + (write ? t.rcd_wr : t.rcd_rd);
  while (spec_.refresh != RefreshPolicy::off && ref_due_ <= last) {
    last += t.rp + t.rfc_ab;
    ref_due_ += t.refi;
    ++stats_.commands[size_t(AimCmd::ref)];
  }
  stats_.commands[size_t(write ? AimCmd::host_wr : AimCmd::host_rd)] += uint64_t(n);
  now_ = last;
  (write ? host_wr_ : host_rd_) = last;
  for (Bank& b : banks_) b.row = -2, b.act = std::max(b.act, last - (write ? t.rcd_wr : t.rcd_rd));
  complete(last + (write ? t.wl : t.rl) + t.burst);
  decode_ = last + 1;
}

void AimChannel::run(const AimRequest& r) {
  const DramTiming& t = spec_.t;
  if (r.size < 1) throw InputError("AiM request: size " + std::to_string(r.size) + " (allowed: >= 1)");
  if (r.bank < 0 || r.bank >= kBanks) throw InputError("AiM request: bank " + std::to_string(r.bank) + " (allowed: 0..15)");
  decode_ = std::max(decode_ + r.decode_gap, hold_);
  auto place = [&](AimCmd c, auto ready_fn, bool reg) {
    for (;;) {
      const int64_t ready = ready_fn();
      mode(reg, ready);
      const int64_t at = slot(ready);
      if (refresh_before(at)) continue;
      return issue(c, at);
    }
  };
  switch (r.isr) {
    case AimIsr::wr_gb:
      for (int64_t i = 0; i < r.size; ++i) {
        wrgb_ = place(AimCmd::wrgb, [&] {
          return std::max({wrgb_ + t.burst, wrmac_ + t.burst, rdreg_ + aim_.cl_reg + t.burst + 3 - aim_.cwl_gb + aim_.wpre,
                           host_rd_ + t.rl + t.burst + 3 - aim_.cwl_gb + aim_.wpre, host_wr_ + t.burst});
        }, true);
        complete(wrgb_ + aim_.cwl_gb + t.burst);
      }
      break;
    case AimIsr::wr_bias:
      wrmac_ = place(AimCmd::wrmac16, [&] {
        return std::max({wrgb_ + t.burst, wrmac_ + t.ccd_l, wrcp_ + t.ccd_l, ewmul_ + t.ccd_l,
                         rdreg_ + aim_.cl_reg + t.burst + 3 - aim_.cwl_reg + aim_.wpre,
                         host_rd_ + t.rl + t.burst + 3 - aim_.cwl_reg + aim_.wpre, host_wr_ + t.ccd_l});
      }, true);
      complete(wrmac_ + aim_.cwl_reg + t.burst);
      break;
    case AimIsr::rd_mac:
    case AimIsr::rd_af: {
      rdreg_ = place(r.isr == AimIsr::rd_mac ? AimCmd::rdmac16 : AimCmd::rdaf16, [&] {
        return std::max({rdreg_ + t.burst, mac_ + t.ccd_l, ewmul_ + t.ccd_l, rdcp_ + t.ccd_l,
                         wrmac_ + aim_.cwl_reg + t.burst + t.wtr_l, wrgb_ + aim_.cwl_gb + t.burst + t.wtr_s,
                         host_wr_ + t.wl + t.burst + t.wtr_l, host_rd_ + t.ccd_l});
      }, true);
      const int64_t data = rdreg_ + aim_.cl_reg + t.burst;
      complete(data);
      hold_ = data + 1;  // the host waits for the registers before it decodes the next ISR
      break;
    }
    case AimIsr::mac_abk: all_bank_column(AimCmd::mac16, r.row, r.size, false, aim_.rcd_mac); break;
    case AimIsr::af: all_bank_column(AimCmd::af16, kAfRow, 1, false, aim_.rcd_af); break;
    case AimIsr::ewmul: all_bank_column(AimCmd::ewmul16, r.row, r.size, false, aim_.rcd_ewmul); break;
    case AimIsr::copy_bkgb:
    case AimIsr::copy_gbbk: {
      const bool rd = r.isr == AimIsr::copy_bkgb;
      Bank& b = banks_[size_t(r.bank)];
      for (int64_t i = 0; i < r.size;) {
        if (b.row != r.row) {
          open_bank(r.bank, r.row, false);
          continue;
        }
        const int64_t ready = rd ? std::max({b.act + aim_.rcd_rdcp, rdcp_ + t.ccd_l, mac_ + t.ccd_l, rdreg_ + t.ccd_l})
                                 : std::max({b.act + aim_.rcd_wrcp, wrcp_ + t.ccd_l, wrmac_ + t.ccd_l, ewmul_ + t.ccd_l});
        mode(false, ready);
        const int64_t at = slot(ready);
        if (refresh_before(at)) continue;
        issue(rd ? AimCmd::rdcp : AimCmd::wrcp, at);
        (rd ? rdcp_ : wrcp_) = at;
        (rd ? b.rd : b.wr) = at;
        complete(at + 1);
        ++i;
      }
      break;
    }
    case AimIsr::wr_abk: {
      for (;;) {
        if (!all_open(r.row)) open_all(r.row, false);
        const int64_t ready = std::max({act_any_ + t.rcd_wr, wrgb_ + t.burst, wrmac_ + t.ccd_l, wrcp_ + t.ccd_l,
                                        rdreg_ + aim_.cl_reg + t.burst + 3 - t.wl + aim_.wpre});
        mode(false, ready);
        const int64_t at = slot(ready);
        if (refresh_before(at)) continue;
        wra16_ = issue(AimCmd::wra16, at);
        for (Bank& b : banks_) b.row = -1;
        complete(at + t.wl + t.burst + t.rp);
        break;
      }
      break;
    }
    case AimIsr::host_write:
    case AimIsr::host_read: host_accesses(r.size, r.isr == AimIsr::host_write); break;
    case AimIsr::sync: hold_ = finish() + 1; break;
  }
}

}  // namespace ahbm::hbm
