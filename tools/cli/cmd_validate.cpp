// `ahbm-sim validate attacc POINTS.csv --out RESULT.csv` and `validate cent ROWS.csv --out RESULT.csv`:
// the bank-level DRAM models against AttAcc's published attention timings and CENT's published
// transformer-block latencies (runtime/validate/attacc.h, cent.h; docs/validation.md).
#include <cstdio>
#include <iostream>

#include "hw/common/base/error.h"
#include "runtime/io/output_dir.h"
#include "runtime/validate/attacc.h"
#include "runtime/validate/cent.h"
#include "tools/cli/commands.h"

namespace po = boost::program_options;

namespace ahbm::cli {

namespace {

int validate_cent(const std::string& rows, const std::string& presets, OutputTarget& target) {
  const validate::CentReport rep = validate::validate_cent_csv(rows, presets);
  target.write([&](std::ostream& os) { os << rep.csv; });
  char line[200];
  if (rep.mean_abs_err >= 0)
    std::snprintf(line, sizeof line, "validate cent: %zu rows, block mean |err| %.2f%%, max |err| %.2f%%", rep.rows,
                  100 * rep.mean_abs_err, 100 * rep.max_abs_err);
  else
    std::snprintf(line, sizeof line, "validate cent: %zu rows (no TransformerBlock latency column: no error)", rep.rows);
  std::cout << line << "\n";
  const char* parts[3] = {"PIM", "CXL", "accelerator"};
  for (int i = 0; i < 3; ++i)
    if (rep.part_mean[i] >= 0) {
      std::snprintf(line, sizeof line, "  %s: mean |err| %.2f%%, max |err| %.2f%%", parts[i], 100 * rep.part_mean[i],
                    100 * rep.part_max[i]);
      std::cout << line << "\n";
    }
  check_stdout();
  target.commit();
  return 0;
}

}  // namespace

int cmd_validate(int argc, char** argv) {
  po::options_description desc(
      "usage: ahbm-sim validate attacc POINTS.csv --out RESULT.csv [--presets DIR]\n"
      "       ahbm-sim validate cent ROWS.csv --out RESULT.csv [--presets DIR]\n\n"
      "attacc: runs every row of POINTS.csv (columns L, nhead, dhead, dbyte, pim_type = BG | BANK | BUFFER,\n"
      "power_constraint = True | False; any others are carried through) on the matching AttAcc preset\n"
      "(DIR/attacc-<level>[-npc].json) and writes the input columns plus ahbm_ns (the decode step's\n"
      "attention on one HBM3 stack), and, with a `cycle` column, ref_ns (cycle x 0.76923 ns) and err\n"
      "((ahbm_ns - ref_ns) / ref_ns). Prints mean and max |err|.\n\n"
      "cent: runs every row of ROWS.csv (the columns of CENT's simulation_results.csv: Model, Device number,\n"
      "Pipeline parallelism, Tensor parallelism = 1, Channels per device, Channels per block, Sequence length;\n"
      "others carried through) on DIR/cent-device.json and writes the input columns plus ahbm_pim_ms,\n"
      "ahbm_cxl_ms, ahbm_acc_ms and ahbm_block_ms (one transformer block, their sum), and with the reference's\n"
      "PIM / CXL / Acc / TransformerBlock latency columns err_pim, err_cxl, err_acc, err. Prints mean and max\n"
      "|err| of the block and each part. Rows with Tensor parallelism > 1 are refused. docs/validation.md.\n\noptions");
  std::vector<std::string> args;
  std::string out, presets = validate::default_preset_dir();
  desc.add_options()
      ("help,h", "show this help")
      ("out", po::value<std::string>(&out), "RESULT.csv (required)")
      ("presets", po::value<std::string>(&presets)->default_value(presets), "directory of the attacc-*.json and cent-device.json presets")
      ("args", po::value<std::vector<std::string>>(&args), "REFERENCE POINTS.csv");
  if (!parse_command_line(argc, argv, desc, "args", 2)) return 0;  // --help
  if (args.size() != 2) throw UsageError("needs a reference and a points file: validate attacc|cent POINTS.csv --out RESULT.csv");
  if (args[0] != "attacc" && args[0] != "cent") throw InputError("reference \"" + args[0] + "\": not known (allowed: attacc, cent)");
  if (out.empty()) throw UsageError("--out RESULT.csv is required");
  OutputTarget target(out, OutputKind::file);  // every --out problem fails here, before simulating
  if (args[0] == "cent") return validate_cent(args[1], presets, target);
  const validate::AttaccReport rep = validate::validate_attacc_csv(args[1], presets);
  target.write([&](std::ostream& os) { os << rep.csv; });
  char line[160];
  if (rep.mean_abs_err >= 0)
    std::snprintf(line, sizeof line, "validate attacc: %zu points, mean |err| %.2f%%, max |err| %.2f%%", rep.rows,
                  100 * rep.mean_abs_err, 100 * rep.max_abs_err);
  else
    std::snprintf(line, sizeof line, "validate attacc: %zu points (no cycle column: no error)", rep.rows);
  std::cout << line << "\n";
  check_stdout();
  target.commit();
  return 0;
}

}  // namespace ahbm::cli
