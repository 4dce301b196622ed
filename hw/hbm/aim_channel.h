#pragma once
// One GDDR6-AiM channel (SK hynix Accelerator-in-Memory) executing AiM instructions in order, at the
// command level: the all-bank activate (ACT16), the MAC of every bank's row against the global buffer
// (MAC16, one 32 B column per command), global-buffer and MAC-register writes (WRGB, WRMAC16), the
// MAC-register readout (RDMAC16), activation functions (AF16, RDAF16), element-wise multiplies
// (EWMUL16), bank <-> global-buffer copies (RDCP, WRCP), the all-bank write (WRA16), precharges,
// the register-access mode switch (TMOD) and all-bank refresh.
//
// Why not DramController: AiM commands act on all 16 banks at once and a channel serves its AiM
// queue strictly in order (CENT's DRAM simulator, arkhadem/aim_simulator, AiM_dram_controller.cpp:
// only the head of the AiM buffer is scheduled), so FR-FCFS reordering over single-bank requests does
// not apply. The timing rules are the DramSpec preset's (gddr6_aim()) plus AimTiming, applied as the
// simulator's GDDR6.cpp constraint table applies them at channel level; docs/validation.md lists them.
//
// Every channel of a CENT block runs the same instruction stream (the host broadcasts each ISR to a
// channel mask), so one AimChannel's time is the block's. Host accesses of single banks (the
// CXL controller moving vectors in and out) are decoded one per cycle by the AiM DMA and are timed
// at that rate (AimIsr::host_write / host_read).
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "hw/hbm/dram_spec.h"

namespace ahbm::hbm {

// The AiM-only timings of GDDR6_AiM_timing (tCK), beyond DramTiming's.
struct AimTiming {
  int rcd_mac = 56;    // nRCDRDMAC: ACT -> MAC16
  int rcd_ewmul = 25;  // nRCDEWMUL: ACT -> EWMUL16
  int rcd_af = 86;     // nRCDRDAF: ACT -> AF16
  int rcd_rdcp = 66;   // nRCDRDCP: ACT -> RDCP (bank -> global buffer)
  int rcd_wrcp = 48;   // nRCDWRCP: ACT -> WRCP (global buffer -> bank)
  int cl_reg = 0;      // nCLREG: RDMAC16 / RDAF16 -> data
  int cwl_reg = 1;     // nCWLREG: WRMAC16 -> data
  int cwl_gb = 1;      // nCWLGB: WRGB -> data
  int wpre = 1;        // nWPRE: write preamble on a read -> write turnaround
  int modch = 32;      // nMODCH: TMOD -> any command
};

// AiM instructions (ISR_* of the simulator's trace) and the host's single-bank accesses.
enum class AimIsr : uint8_t {
  wr_gb,      // `size` WRGB: the input vector into the global buffer
  wr_bias,    // one WRMAC16: every bank's MAC register
  mac_abk,    // `size` MAC16 over row `row` of every bank (ACT16 first unless open)
  rd_mac,     // one RDMAC16; the host waits for the data (blocking)
  af,         // one AF16 (the activation-function row must be open)
  rd_af,      // one RDAF16, blocking
  ewmul,      // `size` EWMUL16 on row `row`
  copy_bkgb,  // `size` RDCP from bank `bank`, row `row`, into the global buffer
  copy_gbbk,  // `size` WRCP from the global buffer into bank `bank`, row `row`
  wr_abk,     // one WRA16 to row `row` of every bank (write then auto-precharge)
  host_write, // `size` single-burst host writes, one decoded per cycle
  host_read,  // `size` single-burst host reads, one decoded per cycle
  sync,       // the host waits until every issued command has completed
};

struct AimRequest {
  AimIsr isr;
  int64_t size = 1;
  int64_t row = 0;
  int bank = 0;
  // Cycles between this ISR's decode and the previous one's (the AiM DMA decodes one host request a
  // cycle; an ISR addressed to one channel among n reaches it every n cycles).
  int64_t decode_gap = 1;
};

enum class AimCmd : uint8_t { act16, prea, act, pre, mac16, wrgb, wrmac16, rdmac16, af16, rdaf16, ewmul16, rdcp, wrcp, wra16, tmod, ref, host_rd, host_wr, count };
const char* aim_cmd_name(AimCmd c);

struct AimStats {
  std::array<uint64_t, size_t(AimCmd::count)> commands{};
  uint64_t operator[](AimCmd c) const { return commands[size_t(c)]; }
};

class AimChannel {
 public:
  AimChannel(const DramSpec& spec, const AimTiming& aim);
  void run(const AimRequest& r);
  // The cycle at which every command issued so far has completed (the trace's end of compute).
  int64_t finish() const { return std::max(done_, now_ + 1); }
  const AimStats& stats() const { return stats_; }

  // The row AF16 needs open: the simulator addresses the activation-function table at row 2^29.
  static constexpr int64_t kAfRow = int64_t(1) << 29;

 private:
  static constexpr int64_t kNever = -(int64_t(1) << 40);
  static constexpr int kBanks = 16;
  struct Bank {
    int64_t row = -1;  // open row; -1 closed, -2 open at a row no ISR names (after host accesses)
    int64_t act = kNever, pre = kNever, rd = kNever, wr = kNever;
  };

  // The earliest cycle a command ready at `ready` may issue: one command a cycle, after the ISR's
  // decode and nMODCH after a TMOD.
  int64_t slot(int64_t ready) const;
  // Runs the refreshes due at or before `t` (PREA, REFab; the banks come back closed).
  bool refresh_before(int64_t t);
  void refresh();
  int64_t issue(AimCmd c, int64_t ready);  // slot + refresh check done by the caller
  // The register-access mode the next command needs: a TMOD first when it differs.
  void mode(bool reg, int64_t ready);
  bool all_open(int64_t row) const;
  bool any_open() const;
  int64_t prea_ready() const;
  int64_t act_ready() const;
  // Opens `row` in every bank (PREA if another row is open, then ACT16), refreshes as they fall due.
  void open_all(int64_t row, bool reg);
  // Opens `row` in bank `b` (PRE, ACT).
  void open_bank(int b, int64_t row, bool reg);
  void all_bank_column(AimCmd c, int64_t row, int64_t n, bool reg, int rcd);
  void host_accesses(int64_t n, bool write);
  void complete(int64_t t) { done_ = std::max(done_, t); }

  DramSpec spec_;
  AimTiming aim_;
  int64_t now_ = -1;     // last command's cycle
  int64_t decode_ = -1;  // the current ISR's decode cycle (the first ISR decodes at cycle 0)
  int64_t hold_ = 0;     // earliest decode of the next ISR (after a blocking one)
  int64_t done_ = 0;     // last completion
  bool reg_ = false;     // register-access mode
  int64_t tmod_ = kNever, prea_ = kNever, ref_end_ = kNever, ref_due_;
  int64_t act_any_ = kNever;  // last ACT / ACT16
  int64_t mac_ = kNever, wrgb_ = kNever, wrmac_ = kNever, rdreg_ = kNever, ewmul_ = kNever, wra16_ = kNever;
  int64_t rdcp_ = kNever, wrcp_ = kNever, host_wr_ = kNever, host_rd_ = kNever, af_ = kNever;
  std::array<Bank, kBanks> banks_;
  AimStats stats_;
};

}  // namespace ahbm::hbm
