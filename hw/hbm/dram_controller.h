#pragma once
// One HBM pseudo-channel at bank level, cycle by cycle (tCK): per-bank state machines (closed,
// open at a row, refreshing) driven by an FR-FCFS controller with a bounded request queue, an
// open- or closed-page policy and all-bank or per-bank refresh. Every command it issues keeps
// the timing rules of DramTiming; DramRuleChecker (dram_checker.h) verifies that independently
// from the command log.
//
// Each cycle the controller may issue one row command (ACT, PRE, REF) and one column command
// (RD, WR), as HBM's separate row and column command buses allow:
//   - refresh first: when a refresh is due, no new ACT goes to the banks it covers, their open
//     rows are closed, and REF is issued as soon as the rules allow (refresh is never postponed);
//   - column: the oldest queued request whose row is open and whose RD/WR may issue now (first
//     ready: row hits bypass older misses);
//   - row: the oldest queued request that needs its bank opened (ACT) or closed (PRE, only when
//     no queued request still hits the open row) and may issue now; with the closed-page policy,
//     otherwise an open row no queued request hits is closed.
// A read completes when its last data beat is out (RD + RL + burst), a write when its data is in
// (WR + WL + burst).
#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <vector>

#include "hw/hbm/dram_spec.h"

namespace ahbm::hbm {

enum class DramCmd : uint8_t { act, pre, rd, wr, ref_ab, ref_pb };
const char* dram_cmd_name(DramCmd c);

struct DramCommand {
  int64_t cycle;
  DramCmd cmd;
  int bank;      // flat index (DramSpec::bank_index); -1 for REF_AB
  uint64_t row;  // ACT, RD, WR
};

struct DramRequest {
  uint64_t id = 0;
  uint64_t addr = 0;  // byte address in the pseudo-channel (one burst)
  bool write = false;
  int64_t arrival = 0;  // tCK
};

struct DramCompletion {
  uint64_t id;
  int64_t done;  // tCK
};

struct DramStats {
  uint64_t reads = 0, writes = 0, acts = 0, pres = 0, refreshes = 0;
  uint64_t conflicts = 0;               // PREs closing a row because a queued request needs another row of that bank
  int64_t refresh_cycles = 0;           // tCK banks spent refreshing, summed per bank / banks
  std::vector<uint64_t> bank_bursts;    // RD + WR per bank
  double row_hit_rate() const {
    const uint64_t cas = reads + writes;
    return cas ? double(cas - std::min(cas, acts)) / double(cas) : 0.0;
  }
};

class DramController {
 public:
  // `log`: keep every command issued (tests, the rule checker).
  explicit DramController(const DramSpec& spec, bool log = false);

  bool full() const { return int(queue_.size()) >= spec_.queue_depth; }
  bool idle() const { return queue_.empty(); }
  // Adds a request (not full(); arrival >= now()).
  void enqueue(const DramRequest& r);
  // Simulates cycles [now(), until), appending the requests that completed.
  void run_until(int64_t until, std::vector<DramCompletion>& done);
  // Simulates until no request is queued (`until_space`: until one more request fits).
  void drain(std::vector<DramCompletion>& done, bool until_space = false);
  // The first cycle at or after now() at which something can happen (a queued request or a
  // refresh; INT64_MAX when nothing is queued and refresh is off).
  int64_t next_event() const;
  int64_t now() const { return now_; }
  const DramSpec& spec() const { return spec_; }
  const DramStats& stats() const { return stats_; }
  const std::vector<DramCommand>& commands() const { return log_; }

 private:
  struct Bank {
    int64_t open_row = -1;
    int64_t act = kNever, pre = kNever, rd = kNever, wr = kNever;
    int64_t ref_until = kNever;  // refreshing until (exclusive)
  };
  struct Queued {
    DramRequest r;
    DramAddress a;
    int bank;
  };
  static constexpr int64_t kNever = -(int64_t(1) << 40);
  int group_of(int bank) const { return bank / spec_.org.banks_per_group; }  // flat (sid, group)
  int sid_of(int bank) const { return bank / (spec_.org.banks_per_group * spec_.org.bank_groups); }
  // Earliest cycle each command may issue under the rules (bank state aside).
  int64_t earliest_act(int bank) const;
  int64_t earliest_pre(int bank) const;
  int64_t earliest_cas(int bank, bool write) const;
  // The part of earliest_cas set by the other column commands (tCCD, tWTR, tRTW): one value per
  // bank group and command kind.
  int64_t cas_bus_floor(int group, bool write) const;
  int64_t earliest_ref(int bank) const;  // bank < 0: all banks
  void issue(DramCmd c, int bank, uint64_t row);
  // One cycle at now_: refresh, one column and one row command.
  void step(std::vector<DramCompletion>& done);
  // One step of run_until: to the next event, or one cycle and past the quiet ones after it.
  void advance(int64_t until, std::vector<DramCompletion>& done);
  // wanted_[b]: a queued request hits bank b's open row (it is not to be closed).
  void mark_wanted_rows();
  bool refresh_blocks(int bank) const;    // a due refresh covers this bank: no new ACT
  // After a step() that issued nothing: the first cycle at which one may issue a command, the
  // state unchanged (the earliest time of every command some queued request or refresh needs).
  int64_t quiet_until() const;

  DramSpec spec_;
  bool keep_log_;
  int64_t now_ = 0;
  std::vector<Bank> banks_;
  std::vector<char> wanted_;
  std::vector<int64_t> group_act_, group_rd_, group_wr_;  // last ACT/RD/WR per bank group
  // cas_bus_floor per (group, kind), and the cycle it was computed at (valid while now_ is that
  // cycle and no column command has issued since: issue() invalidates it).
  mutable std::vector<int64_t> cas_floor_, cas_floor_at_;
  // Per ACT scope (DramSpec::act_scope_of): the last four ACTs, oldest first, and the last ACT.
  std::vector<std::array<int64_t, 4>> act_window_;
  std::vector<int64_t> last_act_;
  int64_t last_rd_ = kNever;
  std::deque<Queued> queue_;
  // Refresh: the next due cycle, and (per-bank) the bank it is for.
  int64_t ref_due_;
  int ref_bank_ = 0;
  bool ref_pending_ = false;
  uint64_t issued_ = 0;  // commands issued so far
  DramStats stats_;
  std::vector<DramCommand> log_;
};

}  // namespace ahbm::hbm
