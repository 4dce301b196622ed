#include "runtime/validate/attacc.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "hw/common/base/error.h"
#include "hw/common/base/json_reader.h"
#include "hw/hbm/channel_array.h"
#include "runtime/validate/csv_table.h"

namespace ahbm::validate {

namespace {

const std::vector<std::string> kPimTypes = {"BG", "BANK", "BUFFER"};

// The artifact's ramulator.out names the bank level by its enum, `PIMType.BA` (src/type.py);
// its trace generator and this project's preset files call it "bank".
std::string level_of(const std::string& pim_type) { return pim_type == "BA" ? "BANK" : pim_type; }

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

std::string attacc_preset_file(const std::string& pim_type, bool power_constraint) {
  std::string level = pim_type;
  std::transform(level.begin(), level.end(), level.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return "attacc-" + level + (power_constraint ? "" : "-npc") + ".json";
}

AttaccPreset read_attacc_preset(const std::string& path) {
  const Json file = load_json_file(path);
  JsonReader root(file, path);
  AttaccPreset p;
  p.file = path;
  JsonReader a = root.object("attacc");
  p.pim_type = a.string("pim_type", kPimTypes);
  p.power_constraint = a.boolean("power_constraint", true);
  p.channels = int(a.integer("channels", 16, 1, 1024));
  p.token_split = int(a.integer("token_split", 16, 1, 4096));
  p.dim_split = int(a.integer("dim_split", 1, 1, 64));
  a.finish();
  p.dram = hbm::read_dram_spec(root.object("dram"), hbm::hbm3_6400());
  root.finish();
  return p;
}

AttaccTiming simulate_attacc(const AttaccPreset& p, const AttaccPoint& pt) {
  const int64_t burst = p.dram.org.burst_bytes;
  // One unit's share of a pair, per phase (Q·Kᵀ over K, then P·V over V): its tokens, each token's
  // slice of head_dim in whole 32 B column accesses (one MAC command each, as the artifact's
  // trace generators count them: ceil(L / token units) x ceil(dhead / (dim units x MACs per access))).
  const int64_t phase = ceil_div(pt.L, p.token_split) * ceil_div(pt.dhead * pt.dbyte, burst * p.dim_split);
  AttaccTiming t;
  t.unit_bursts_per_round = uint64_t(2 * phase);
  t.rounds = ceil_div(pt.nhead, p.channels);
  t.rounds_simulated = std::min<int64_t>(t.rounds, std::max<int64_t>(1, int64_t(kMaxSimulatedBursts / t.unit_bursts_per_round)));
  // K and V lie in two regions of the unit, as the artifact's trace generators place them
  // (gen_trace_attacc_{bg,bank,buffer}.py: val_addr = key_addr + v_offset, v_offset = 2^23): a
  // round's K shard starts a row of its own in the K region and its V shard one in the V region,
  // so every round opens at least one row for each even when both would fit one row together.
  // Rounds follow one another in each region (wrapping around it: the row pattern, hence the
  // timing, is the same).
  hbm::ChannelArray unit(p.dram, 1);
  const uint64_t region = unit.bytes() / 2, page = uint64_t(p.dram.org.page_bytes);
  const uint64_t phase_bytes = uint64_t(phase) * uint64_t(burst);
  const uint64_t stride = (phase_bytes + page - 1) / page * page;
  int64_t end = 0;
  // Arrival 0: the unit is never idle between rounds; a round starts when the previous one's MACs
  // have issued (the artifact pipelines the next head's scores under a head's softmax).
  for (int64_t r = 0; r < t.rounds_simulated; ++r) {
    const uint64_t at = (uint64_t(r) * stride) % (region / stride * stride);
    unit.transfer(0, at, phase_bytes, false);                   // Q·Kᵀ over the K shard
    end = unit.transfer(0, region + at, phase_bytes, false);    // P·V over the V shard
  }
  t.cycles = t.rounds_simulated == t.rounds ? end : int64_t(std::llround(double(end) * double(t.rounds) / double(t.rounds_simulated)));
  t.ns = double(t.cycles) * p.dram.t.tck_ns;
  return t;
}

AttaccReport validate_attacc_csv(const std::string& points_path, const std::string& preset_dir) {
  const CsvTable table = read_csv_table(points_path);
  table.require({"L", "nhead", "dhead", "dbyte", "pim_type", "power_constraint"});
  const bool has_cycle = table.has("cycle");

  struct Row {
    std::vector<std::string> cells;
    AttaccPoint pt;
    double cycle = 0;
  };
  std::vector<Row> rows;
  for (const CsvTable::Row& in : table.rows) {
    Row row;
    row.cells = in.cells;
    const std::string where = table.where(in);
    row.pt.L = table.integer(in, "L", 1, 65536);
    row.pt.nhead = table.integer(in, "nhead", 1, 4096);
    row.pt.dhead = table.integer(in, "dhead", 64, 256);
    row.pt.dbyte = table.integer(in, "dbyte", 1, 2);
    row.pt.pim_type = level_of(table.cell(in, "pim_type"));
    if (std::find(kPimTypes.begin(), kPimTypes.end(), row.pt.pim_type) == kPimTypes.end())
      throw InputError(where + ": column pim_type = \"" + table.cell(in, "pim_type") +
                       "\" (allowed: BG, BA or BANK, BUFFER)");
    const std::string& pc = table.cell(in, "power_constraint");
    if (pc == "True" || pc == "true" || pc == "1") row.pt.power_constraint = true;
    else if (pc == "False" || pc == "false" || pc == "0") row.pt.power_constraint = false;
    else throw InputError(where + ": column power_constraint = \"" + pc + "\" (allowed: True, False)");
    if (has_cycle) row.cycle = table.positive(in, "cycle");
    rows.push_back(std::move(row));
  }

  // Every preset a row needs is read (and checked) before anything is simulated.
  std::map<std::string, AttaccPreset> presets;
  for (const Row& r : rows) {
    const std::string f = attacc_preset_file(r.pt.pim_type, r.pt.power_constraint);
    if (!presets.count(f)) presets.emplace(f, read_attacc_preset(preset_dir + "/" + f));
  }

  AttaccReport rep;
  std::ostringstream out;
  for (size_t i = 0; i < table.header.size(); ++i) out << (i ? "," : "") << table.header[i];
  out << ",ahbm_ns" << (has_cycle ? ",ref_ns,err" : "") << "\n";
  double sum = 0, worst = 0;
  for (const Row& r : rows) {
    const AttaccPreset& p = presets.at(attacc_preset_file(r.pt.pim_type, r.pt.power_constraint));
    const AttaccTiming t = simulate_attacc(p, r.pt);
    for (size_t i = 0; i < r.cells.size(); ++i) out << (i ? "," : "") << r.cells[i];
    char buf[96];
    std::snprintf(buf, sizeof buf, ",%.1f", t.ns);
    out << buf;
    if (has_cycle) {
      // The reference's cycles are tCK of its HBM3_5.2Gbps preset: 1 / 1.3 GHz.
      const double ref_ns = r.cycle * hbm::hbm3_5200().t.tck_ns, err = (t.ns - ref_ns) / ref_ns;
      std::snprintf(buf, sizeof buf, ",%.1f,%.5f", ref_ns, err);
      out << buf;
      sum += std::fabs(err);
      worst = std::max(worst, std::fabs(err));
    }
    out << "\n";
  }
  rep.csv = out.str();
  rep.rows = rows.size();
  if (has_cycle) {
    rep.mean_abs_err = sum / double(rows.size());
    rep.max_abs_err = worst;
  }
  return rep;
}

}  // namespace ahbm::validate
