#pragma once
// `ahbm-sim validate attacc`: one decode step's attention on one HBM3-PIM stack, as AttAcc's artifact
// (scale-snu/attacc_simulator) maps and times it, run on the bank-level HBM model (hw/hbm) with the
// presets of hw/configs/attacc-*.json. docs/validation.md: protocol, presets and their sources,
// results.
#include <cstdint>
#include <string>
#include <vector>

#include "hw/hbm/dram_spec.h"
#include "runtime/validate/csv_table.h"

namespace ahbm::validate {

// One AttAcc PIM level: what one PIM unit is (its DRAM, `dram`: a bank group, a bank or a
// pseudo-channel of the preset's organisation) and how a (request, head) pair's K and V are
// sharded over a channel's units: tokens over `token_split` units, head_dim over `dim_split`.
// Every unit of every channel runs the same command stream in lockstep (the artifact broadcasts
// each MAC to all of a channel's units), so one unit's time is the channel's and the stack's.
struct AttaccPreset {
  std::string pim_type;   // BG | BANK | BUFFER (a row's BA, the artifact's name, is read as BANK)
  bool power_constraint;  // MACs every nCCDSB / nCCDAB of the power-constrained preset, or of _NPC
  int channels = 16;      // channels per stack: a round runs that many (request, head) pairs
  int token_split = 16;   // units a pair's tokens are spread over
  int dim_split = 1;      // units a token's head_dim is spread over
  hbm::DramSpec dram;     // one unit's DRAM (org, timing, mapping, refresh)
  std::string file;       // where it was read from
};

// Reads hw/configs-style preset `path`: {"attacc": {...}, "dram": {...}} (read_dram_spec).
AttaccPreset read_attacc_preset(const std::string& path);
// The preset file name for a level and power setting: attacc-bg.json, attacc-bg-npc.json, ...
std::string attacc_preset_file(const std::string& pim_type, bool power_constraint);

struct AttaccPoint {
  int64_t L = 0, nhead = 0, dhead = 0, dbyte = 0;
  std::string pim_type;
  bool power_constraint = false;
};

struct AttaccTiming {
  int64_t cycles = 0;          // the step's attention, tCK of the preset
  double ns = 0;               // cycles x tCK
  int64_t rounds = 0;          // ceil(nhead / channels)
  int64_t rounds_simulated = 0;  // rounds run through the model (the rest composed, see docs)
  uint64_t unit_bursts_per_round = 0;  // 32 B column accesses (MACs) one unit makes per round
};

// Bursts of one round of one unit are capped at this many simulated in all; beyond it the step
// is composed from the simulated rounds (identical command streams, docs/validation.md).
constexpr uint64_t kMaxSimulatedBursts = uint64_t(1) << 23;

AttaccTiming simulate_attacc(const AttaccPreset& p, const AttaccPoint& pt);

// The CSV command: reads POINTS (header row; columns L, nhead, dhead, dbyte, pim_type,
// power_constraint, others carried through), checks every row (InputError naming row, column and
// value), simulates each on its preset from `preset_dir`, returns the result CSV text and fills
// mean / max |err| (over rows with a `cycle` column; -1 when there is none).
struct AttaccReport {
  std::string csv;
  double mean_abs_err = -1, max_abs_err = -1;
  size_t rows = 0;
};
AttaccReport validate_attacc_csv(const std::string& points_path, const std::string& preset_dir);

}  // namespace ahbm::validate
