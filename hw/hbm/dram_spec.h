#pragma once
// What a bank-level HBM pseudo-channel model needs to know (docs/hbm.md): the organisation, the
// JEDEC-style timing parameters in clock cycles (tCK), the address mapping as a bit layout, the
// page and refresh policies and the controller's queue. hbm3_6400() is the HBM3 6.4 Gb/s preset;
// docs/hbm.md gives every number's public source.
#include <cstdint>
#include <string>
#include <vector>

#include "hw/common/base/json_reader.h"

namespace ahbm::hbm {

// Timing parameters, in tCK (tck_ns each). Names follow JESD238 (HBM3).
struct DramTiming {
  double tck_ns = 0.625;  // clock period; data moves at 4 bits per pin per tCK (6.4 Gb/s at 1.6 GHz)
  int burst = 2;          // tCK a burst (BL8 on a 32-bit pseudo-channel = 32 B) occupies the data bus
  int rcd_rd = 24;        // ACT -> RD, same bank
  int rcd_wr = 24;        // ACT -> WR, same bank
  int rp = 24;            // PRE -> ACT/REF, same bank
  int ras = 56;           // ACT -> PRE, same bank
  int rc = 80;            // ACT -> ACT, same bank
  int ccd_l = 4;          // RD->RD / WR->WR, same bank group
  int ccd_s = 2;          // RD->RD / WR->WR, other bank group, same stack ID
  int ccd_r = 3;          // RD->RD / WR->WR, other stack ID
  int rrd_l = 5;          // ACT -> ACT, other bank, same bank group
  int rrd_s = 4;          // ACT -> ACT, other bank group
  int faw = 24;           // window holding at most 4 ACTs
  int rtp = 4;            // RD -> PRE, same bank
  int wr = 13;            // write recovery: end of write data -> PRE, same bank
  int rtw = 24;           // RD -> WR, any bank: RL + burst + 2 - WL (read data out, bus turnaround)
  int wtr_l = 7;          // end of write data -> RD, same bank group
  int wtr_s = 5;          // end of write data -> RD, other bank group
  int rl = 24;            // RD -> first data
  int wl = 4;             // WR -> first data
  int refi = 6240;        // average refresh interval (all-bank; per-bank: refi / banks per bank)
  int rfc_ab = 560;       // all-bank refresh -> any ACT
  int rfc_pb = 256;       // per-bank refresh -> ACT of that bank
};

struct DramOrg {
  int stack_ids = 2;        // SIDs (ranks) sharing the pseudo-channel's buses
  int bank_groups = 4;      // per stack ID
  int banks_per_group = 4;
  uint64_t rows = 16384;    // per bank
  int page_bytes = 1024;    // row (page) size
  int burst_bytes = 32;     // bytes one RD/WR moves
  constexpr int banks() const { return stack_ids * bank_groups * banks_per_group; }
  constexpr int columns() const { return page_bytes / burst_bytes; }  // bursts per row
  constexpr uint64_t bytes() const { return uint64_t(banks()) * rows * uint64_t(page_bytes); }
};

// Where each address field sits, from the least significant bit: a layout such as
// "byte:5 column:5 bankgroup:2 bank:2 sid:1 row:14" (widths in bits; they must add up to the
// pseudo-channel's address bits and match the organisation). Presets: mapping_preset().
struct AddressMapping {
  enum class Field { byte, column, bankgroup, bank, sid, row };
  struct Slice {
    Field field;
    int bits;
  };
  std::vector<Slice> layout;
  std::string name;
};

struct DramAddress {
  int sid = 0, bankgroup = 0, bank = 0;  // bank: within its group
  uint64_t row = 0;
  int column = 0;
};

enum class PagePolicy { open, closed };
enum class RefreshPolicy { all_bank, per_bank, off };

// Peak data rate of one pseudo-channel, GB/s: burst_bytes every `burst` tCK.
constexpr double peak_gbps(const DramOrg& o, const DramTiming& t) { return o.burst_bytes / (t.burst * t.tck_ns); }

struct DramSpec {
  DramOrg org;
  DramTiming t;
  AddressMapping mapping;
  PagePolicy page = PagePolicy::open;
  RefreshPolicy refresh = RefreshPolicy::all_bank;
  int queue_depth = 32;  // requests the controller holds (FR-FCFS picks among them)
  // Scope of tRRD_S and tFAW: the whole pseudo-channel (false; JESD238 counts array-access timings
  // per pseudo-channel) or each stack ID on its own (true; AttAcc's Ramulator2 HBM3-PIM model
  // applies them at its "rank" = SID level). JSON "act_scope": "pseudo_channel" | "sid".
  bool act_limits_per_sid = false;
  int act_scope_of(int sid) const { return act_limits_per_sid ? sid : 0; }
  int act_scopes() const { return act_limits_per_sid ? org.stack_ids : 1; }

  double peak_gbps() const { return hbm::peak_gbps(org, t); }
  // Flat bank index of an address (sid, group, bank).
  int bank_index(const DramAddress& a) const {
    return (a.sid * org.bank_groups + a.bankgroup) * org.banks_per_group + a.bank;
  }
  DramAddress decode(uint64_t addr) const;
  // Throws InputError naming the field when the spec is inconsistent (`where`: for messages).
  void validate(const std::string& where) const;
};

// The HBM3 6.4 Gb/s pseudo-channel (JESD238 speed bin; docs/hbm.md): 25.6 GB/s peak.
DramSpec hbm3_6400();
// AttAcc's Ramulator2 HBM3-PIM timing preset "HBM3_5.2Gbps" (organisation HBM3_8Gb_2R, the same as
// hbm3_6400's): tCK 1/1.3 GHz, 20.8 GB/s per pseudo-channel; every value's source in docs/hbm.md.
DramSpec hbm3_5200();
// One GDDR6-AiM channel as CENT's DRAM simulator (arkhadem/aim_simulator) describes it: presets
// GDDR6_AiM_org and GDDR6_AiM_timing, tCK 0.5 ns, 2 KiB rows; its AiM-only timings are in
// hw/hbm/aim_channel.h. Every value's source in docs/validation.md.
DramSpec gddr6_aim();
// A timing preset by name: "HBM3_6400" | "HBM3_5.2Gbps" | "GDDR6_AiM" (dram_preset_names()). Throws InputError
// naming the allowed presets for another name.
DramSpec dram_preset(const std::string& name);
const std::vector<std::string>& dram_preset_names();
// "bg_interleaved" (consecutive bursts rotate over bank groups), "row_interleaved" (consecutive
// bursts fill a row of one bank, then the next bank group), "bank_above_row" (a bank's rows are
// consecutive in the address space). Throws InputError for another name.
AddressMapping mapping_preset(const std::string& name, const DramOrg& org);
const std::vector<std::string>& mapping_preset_names();
// Parses "field:bits field:bits ..." (LSB first).
AddressMapping parse_mapping(const std::string& layout);
std::string mapping_string(const AddressMapping& m);

// Reads a "dram" object over `base`: "preset" (dram_preset_names(); replaces `base` first), any of org.{stack_ids, bank_groups, banks_per_group, rows,
// page_bytes, burst_bytes}, timing.{tck_ns, burst, rcd_rd, ...} (DramTiming's names, tCK),
// mapping (a preset name or a "field:bits ..." layout), page ("open" | "closed"), refresh
// ("all" | "per-bank" | "off"), queue_depth. Validated; errors name the field.
DramSpec read_dram_spec(JsonReader r, DramSpec base);

const char* refresh_name(RefreshPolicy r);
bool parse_refresh(const std::string& name, RefreshPolicy* out);

}  // namespace ahbm::hbm
