#include "hw/hbm/dram_spec.h"

#include <sstream>

#include "hw/common/base/error.h"
#include "hw/common/config/hw_config.h"

namespace ahbm::hbm {

namespace {

using Field = AddressMapping::Field;

const char* field_name(Field f) {
  switch (f) {
    case Field::byte: return "byte";
    case Field::column: return "column";
    case Field::bankgroup: return "bankgroup";
    case Field::bank: return "bank";
    case Field::sid: return "sid";
    case Field::row: return "row";
  }
  return "?";
}

int log2_exact(uint64_t v) {
  int b = 0;
  while ((uint64_t(1) << b) < v) ++b;
  return (uint64_t(1) << b) == v ? b : -1;
}

}  // namespace

// hw_config.h sizes a banked PE slice in these (its capacity check lives below hw/hbm).
static_assert(DramOrg{}.bytes() == kHbm3PseudoChannelBytes, "kHbm3PseudoChannelBytes is the HBM3 preset's pseudo-channel");
// The cost model times a banked slice at pseudo_channels of these (resource_times.h hbm_closed_form).
static_assert(peak_gbps(DramOrg{}, DramTiming{}) == kHbm3PseudoChannelGbps, "kHbm3PseudoChannelGbps is the HBM3 preset's peak");

DramSpec hbm3_6400() {
  DramSpec s;
  s.mapping = mapping_preset("bg_interleaved", s.org);
  return s;
}

DramSpec hbm3_5200() {
  DramSpec s;
  // The artifact's preset row, in its tCK (HBM3-PIM.cpp, timing_presets["HBM3_5.2Gbps"]).
  DramTiming& t = s.t;
  t.tck_ns = 1.0 / 1.3;  // rate 5200 MT/s, QDR: CK = 1.3 GHz (the reference's cycle x 0.76923 ns)
  t.burst = 2;           // nBL
  t.rcd_rd = t.rcd_wr = t.rp = 19;  // nRCDRD, nRCDWR, nRP
  t.rl = 19;                        // nCL
  t.ras = 45;                       // nRAS
  // nRC is 63, one below nRAS + nRP: the artifact's same-bank ACT -> PRE -> ACT takes 64 anyway,
  // and this model keeps tRC >= tRAS + tRP.
  t.rc = t.ras + t.rp;
  t.ccd_s = 2;  // nCCDS
  t.ccd_l = 4;  // nCCDL
  t.ccd_r = 2;  // the artifact has no rank-switch gap beyond the data bus (nBL)
  t.rrd_s = 2;  // nRRDS
  t.rrd_l = 4;  // nRRDL
  t.faw = 39;   // nFAW
  t.rtp = 8;    // nRTPL (RD -> PRE of the same bank)
  t.wr = 21;    // nWR
  t.wl = 6;     // nCWL
  t.wtr_s = 8;  // nWTRS
  t.wtr_l = 11; // nWTRL
  t.rtw = t.rl + t.burst + 2 - t.wl;  // the artifact's RD -> WR rule: nCL + nBL + 2 - nCWL
  t.refi = 5070;  // nREFI
  t.rfc_ab = 456;  // tRFC table, 8 Gb die: 350 ns / 0.769 ns, rounded up
  t.rfc_pb = 260;  // nRFCSB
  s.mapping = mapping_preset("bg_interleaved", s.org);
  return s;
}

DramSpec gddr6_aim() {
  DramSpec s;
  // One GDDR6-AiM channel (aim_simulator GDDR6.cpp, org_presets["GDDR6_AiM_org"]): 4 bank groups x
  // 4 banks, 16K rows of 1K columns x 16 DQ = 2 KiB, 32 B per burst (x16, BL16).
  s.org.stack_ids = 1;
  s.org.bank_groups = 4;
  s.org.banks_per_group = 4;
  s.org.rows = 16384;
  s.org.page_bytes = 2048;
  s.org.burst_bytes = 32;
  // timing_presets["GDDR6_AiM_timing"], in its tCK. tCK: the preset's tCK_ps = 500, the 2 GHz
  // (FREQ) CENT converts the simulator's cycles with (cent_power_calculator.py).
  DramTiming& t = s.t;
  t.tck_ns = 0.5;
  t.burst = 2;     // nBL
  t.rl = 50;       // nCL
  t.rcd_rd = 36;   // nRCDRD
  t.rcd_wr = 28;   // nRCDWR
  t.rp = 32;       // nRP
  t.ras = 54;      // nRAS
  t.rc = 89;       // nRC
  t.wr = 33;       // nWR
  t.rtp = 12;      // nRTP
  t.wl = 6;        // nCWL
  t.ccd_s = 2;     // nCCDS
  t.ccd_l = 2;     // nCCDL
  t.ccd_r = 2;     // one rank: no rank switch
  t.rrd_s = 11;    // nRRDS
  t.rrd_l = 11;    // nRRDL
  t.wtr_s = 9;     // nWTRS
  t.wtr_l = 11;    // nWTRL
  t.faw = 42;      // nFAW (the artifact does not apply it)
  t.rtw = t.rl + t.burst + 3 - t.wl + 1;  // the artifact's RD -> WR rule: nCL + nBL + 3 - nCWL + nWPRE
  t.refi = 3333;   // nREFI
  t.rfc_ab = 210;  // nRFC
  t.rfc_pb = 105;  // nRFCpb
  s.mapping = mapping_preset("row_interleaved", s.org);
  return s;
}

const std::vector<std::string>& dram_preset_names() {
  static const std::vector<std::string> names = {"HBM3_6400", "HBM3_5.2Gbps", "GDDR6_AiM"};
  return names;
}

DramSpec dram_preset(const std::string& name) {
  if (name == "HBM3_6400") return hbm3_6400();
  if (name == "HBM3_5.2Gbps") return hbm3_5200();
  if (name == "GDDR6_AiM") return gddr6_aim();
  std::string all;
  for (const std::string& n : dram_preset_names()) all += (all.empty() ? "" : ", ") + n;
  throw InputError("dram preset \"" + name + "\": not a preset (allowed: " + all + ")");
}

const std::vector<std::string>& mapping_preset_names() {
  static const std::vector<std::string> names = {"bg_interleaved", "row_interleaved", "bank_above_row"};
  return names;
}

AddressMapping mapping_preset(const std::string& name, const DramOrg& org) {
  const int byte = log2_exact(uint64_t(org.burst_bytes)), col = log2_exact(uint64_t(org.columns())),
            bg = log2_exact(uint64_t(org.bank_groups)), bank = log2_exact(uint64_t(org.banks_per_group)),
            sid = log2_exact(uint64_t(org.stack_ids)), row = log2_exact(org.rows);
  AddressMapping m;
  m.name = name;
  if (name == "bg_interleaved")
    m.layout = {{Field::byte, byte}, {Field::bankgroup, bg}, {Field::column, col}, {Field::bank, bank}, {Field::sid, sid}, {Field::row, row}};
  else if (name == "row_interleaved")
    m.layout = {{Field::byte, byte}, {Field::column, col}, {Field::bankgroup, bg}, {Field::bank, bank}, {Field::sid, sid}, {Field::row, row}};
  else if (name == "bank_above_row")
    m.layout = {{Field::byte, byte}, {Field::column, col}, {Field::row, row}, {Field::bankgroup, bg}, {Field::bank, bank}, {Field::sid, sid}};
  else {
    std::string all;
    for (const std::string& n : mapping_preset_names()) all += (all.empty() ? "" : ", ") + n;
    throw InputError("mapping \"" + name + "\": not a preset (allowed: " + all + ")");
  }
  return m;
}

AddressMapping parse_mapping(const std::string& layout) {
  AddressMapping m;
  m.name = layout;
  std::stringstream in(layout);
  std::string item;
  while (in >> item) {
    const size_t colon = item.find(':');
    const std::string f = item.substr(0, colon);
    int bits = -1;
    try {
      bits = colon == std::string::npos ? -1 : std::stoi(item.substr(colon + 1));
    } catch (const std::exception&) {
    }
    Field field;
    if (f == "byte") field = Field::byte;
    else if (f == "column") field = Field::column;
    else if (f == "bankgroup") field = Field::bankgroup;
    else if (f == "bank") field = Field::bank;
    else if (f == "sid") field = Field::sid;
    else if (f == "row") field = Field::row;
    else throw InputError("mapping \"" + layout + "\": unknown field \"" + f + "\" (allowed: byte, column, bankgroup, bank, sid, row)");
    if (bits < 0 || bits > 40) throw InputError("mapping \"" + layout + "\": \"" + item + "\" needs field:bits with bits in [0, 40]");
    m.layout.push_back({field, bits});
  }
  return m;
}

std::string mapping_string(const AddressMapping& m) {
  std::string s;
  for (const auto& x : m.layout) s += (s.empty() ? "" : " ") + std::string(field_name(x.field)) + ":" + std::to_string(x.bits);
  return s;
}

DramAddress DramSpec::decode(uint64_t addr) const {
  DramAddress a;
  for (const auto& x : mapping.layout) {
    const uint64_t v = addr & ((uint64_t(1) << x.bits) - 1);
    addr >>= x.bits;
    switch (x.field) {
      case Field::byte: break;
      case Field::column: a.column = int(v); break;
      case Field::bankgroup: a.bankgroup = int(v); break;
      case Field::bank: a.bank = int(v); break;
      case Field::sid: a.sid = int(v); break;
      case Field::row: a.row = v; break;
    }
  }
  return a;
}

void DramSpec::validate(const std::string& where) const {
  auto need = [&](bool ok, const std::string& field, const std::string& value, const std::string& allowed) {
    if (!ok) throw InputError(where + ": " + field + " = " + value + " (allowed: " + allowed + ")");
  };
  need(log2_exact(uint64_t(org.stack_ids)) >= 0, "stack_ids", std::to_string(org.stack_ids), "a power of two >= 1");
  need(log2_exact(uint64_t(org.bank_groups)) >= 0, "bank_groups", std::to_string(org.bank_groups), "a power of two >= 1");
  need(log2_exact(uint64_t(org.banks_per_group)) >= 0, "banks_per_group", std::to_string(org.banks_per_group), "a power of two >= 1");
  need(log2_exact(org.rows) >= 0, "rows", std::to_string(org.rows), "a power of two >= 1");
  need(org.burst_bytes > 0 && log2_exact(uint64_t(org.burst_bytes)) >= 0, "burst_bytes", std::to_string(org.burst_bytes), "a power of two");
  need(org.page_bytes >= org.burst_bytes && log2_exact(uint64_t(org.page_bytes)) >= 0, "page_bytes",
       std::to_string(org.page_bytes), "a power of two >= burst_bytes");
  need(t.tck_ns > 0, "tck_ns", std::to_string(t.tck_ns), "> 0");
  const std::pair<const char*, int> cycles[] = {
      {"burst", t.burst}, {"rcd_rd", t.rcd_rd}, {"rcd_wr", t.rcd_wr}, {"rp", t.rp},     {"ras", t.ras},
      {"rc", t.rc},       {"ccd_l", t.ccd_l},   {"ccd_s", t.ccd_s},   {"ccd_r", t.ccd_r}, {"rrd_l", t.rrd_l},
      {"rrd_s", t.rrd_s}, {"faw", t.faw},       {"rtp", t.rtp},       {"wr", t.wr},       {"rtw", t.rtw},
      {"wtr_l", t.wtr_l}, {"wtr_s", t.wtr_s},   {"rl", t.rl},         {"wl", t.wl},       {"refi", t.refi},
      {"rfc_ab", t.rfc_ab}, {"rfc_pb", t.rfc_pb}};
  for (const auto& [name, v] : cycles) need(v >= 1 && v <= 1000000, name, std::to_string(v), "[1, 1000000] tCK");
  need(t.ccd_s >= t.burst, "ccd_s", std::to_string(t.ccd_s), ">= burst (the data bus carries one burst at a time)");
  need(t.ccd_l >= t.ccd_s && t.ccd_r >= t.ccd_s, "ccd_l/ccd_r", std::to_string(t.ccd_l) + "/" + std::to_string(t.ccd_r), ">= ccd_s");
  need(t.rrd_l >= t.rrd_s, "rrd_l", std::to_string(t.rrd_l), ">= rrd_s");
  need(t.rc >= t.ras + t.rp, "rc", std::to_string(t.rc), ">= ras + rp");
  need(queue_depth >= 1 && queue_depth <= 4096, "queue_depth", std::to_string(queue_depth), "[1, 4096]");
  if (refresh != RefreshPolicy::off)
    need(t.refi > (refresh == RefreshPolicy::all_bank ? t.rfc_ab : t.rfc_pb), "refi", std::to_string(t.refi), "> tRFC");
  // The mapping: every field once, widths that match the organisation.
  const std::pair<Field, int> widths[] = {{Field::byte, log2_exact(uint64_t(org.burst_bytes))},
                                          {Field::column, log2_exact(uint64_t(org.columns()))},
                                          {Field::bankgroup, log2_exact(uint64_t(org.bank_groups))},
                                          {Field::bank, log2_exact(uint64_t(org.banks_per_group))},
                                          {Field::sid, log2_exact(uint64_t(org.stack_ids))},
                                          {Field::row, log2_exact(org.rows)}};
  for (const auto& [f, bits] : widths) {
    int seen = 0, got = -1;
    for (const auto& x : mapping.layout)
      if (x.field == f) ++seen, got = x.bits;
    need(seen == 1 && got == bits, std::string("mapping ") + field_name(f), seen ? std::to_string(got) + " bits" : "missing",
         "exactly once, " + std::to_string(bits) + " bits for this organisation");
  }
}

DramSpec read_dram_spec(JsonReader r, DramSpec s) {
  if (r.has("preset")) s = dram_preset(r.string("preset", dram_preset_names()));
  if (r.has_object("org")) {
    JsonReader o = r.object("org");
    s.org.stack_ids = int(o.integer("stack_ids", s.org.stack_ids, 1, 16));
    s.org.bank_groups = int(o.integer("bank_groups", s.org.bank_groups, 1, 64));
    s.org.banks_per_group = int(o.integer("banks_per_group", s.org.banks_per_group, 1, 64));
    s.org.rows = uint64_t(o.integer("rows", int64_t(s.org.rows), 1, int64_t(1) << 24));
    s.org.page_bytes = int(o.integer("page_bytes", s.org.page_bytes, 1, 1 << 16));
    s.org.burst_bytes = int(o.integer("burst_bytes", s.org.burst_bytes, 1, 1 << 10));
    o.finish();
  }
  if (r.has_object("timing")) {
    JsonReader t = r.object("timing");
    s.t.tck_ns = t.number("tck_ns", s.t.tck_ns, 1e-3, 100.0);
    const std::pair<const char*, int*> cycles[] = {
        {"burst", &s.t.burst}, {"rcd_rd", &s.t.rcd_rd}, {"rcd_wr", &s.t.rcd_wr}, {"rp", &s.t.rp},
        {"ras", &s.t.ras},     {"rc", &s.t.rc},         {"ccd_l", &s.t.ccd_l},   {"ccd_s", &s.t.ccd_s},
        {"ccd_r", &s.t.ccd_r}, {"rrd_l", &s.t.rrd_l},   {"rrd_s", &s.t.rrd_s},   {"faw", &s.t.faw},
        {"rtp", &s.t.rtp},     {"wr", &s.t.wr},         {"rtw", &s.t.rtw},       {"wtr_l", &s.t.wtr_l},
        {"wtr_s", &s.t.wtr_s}, {"rl", &s.t.rl},         {"wl", &s.t.wl},         {"refi", &s.t.refi},
        {"rfc_ab", &s.t.rfc_ab}, {"rfc_pb", &s.t.rfc_pb}};
    for (const auto& [name, v] : cycles) *v = int(t.integer(name, *v, 1, 1000000));
    t.finish();
  }
  const std::string mapping = r.string("mapping", s.mapping.name);
  s.mapping = mapping.find(':') == std::string::npos ? mapping_preset(mapping, s.org) : parse_mapping(mapping);
  s.page = r.string("page", s.page == PagePolicy::open ? "open" : "closed", {"open", "closed"}) == "open"
               ? PagePolicy::open
               : PagePolicy::closed;
  parse_refresh(r.string("refresh", refresh_name(s.refresh), {"all", "per-bank", "off"}), &s.refresh);
  s.queue_depth = int(r.integer("queue_depth", s.queue_depth, 1, 4096));
  s.act_limits_per_sid =
      r.string("act_scope", s.act_limits_per_sid ? "sid" : "pseudo_channel", {"pseudo_channel", "sid"}) == "sid";
  r.finish();
  s.validate(r.file() + (r.path().empty() ? "" : " " + r.path()));
  return s;
}

const char* refresh_name(RefreshPolicy r) {
  switch (r) {
    case RefreshPolicy::all_bank: return "all";
    case RefreshPolicy::per_bank: return "per-bank";
    case RefreshPolicy::off: return "off";
  }
  return "?";
}

bool parse_refresh(const std::string& name, RefreshPolicy* out) {
  for (RefreshPolicy r : {RefreshPolicy::all_bank, RefreshPolicy::per_bank, RefreshPolicy::off})
    if (name == refresh_name(r)) {
      *out = r;
      return true;
    }
  return false;
}

}  // namespace ahbm::hbm
