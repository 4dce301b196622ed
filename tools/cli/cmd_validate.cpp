// `ahbm-sim validate attacc POINTS.csv --out RESULT.csv` and `validate cent ROWS.csv --out RESULT.csv`:
// the bank-level DRAM models against AttAcc's published attention timings and CENT's published
// transformer-block latencies (runtime/validate/attacc.h, cent.h; docs/validation.md).
#include <cstdio>
#include <functional>
#include <iostream>
#include <string>

#include "hw/common/base/error.h"
#include "runtime/io/output_dir.h"
#include "runtime/validate/attacc.h"
#include "runtime/validate/cent.h"
#include "tools/cli/commands.h"

namespace po = boost::program_options;

namespace ahbm::cli {

namespace {

// "mean |err| x%, max |err| y%": the figure every validation prints, for the whole and its parts.
std::string err_text(double mean, double max) {
  char text[96];
  std::snprintf(text, sizeof text, "mean |err| %.2f%%, max |err| %.2f%%", 100 * mean, 100 * max);
  return text;
}

// Writes RESULT.csv, prints the summary lines (`print`), and commits the file once stdout is
// known to be written.
int finish(OutputTarget& target, const std::string& csv, const std::function<void()>& print) {
  target.write([&](std::ostream& os) { os << csv; });
  print();
  check_stdout();
  target.commit();
  return 0;
}

int validate_cent(const std::string& rows, const std::string& presets, OutputTarget& target) {
  const validate::CentReport rep = validate::validate_cent_csv(rows, presets);
  return finish(target, rep.csv, [&rep] {
    std::cout << "validate cent: " << rep.rows << " rows"
              << (rep.mean_abs_err >= 0 ? ", block " + err_text(rep.mean_abs_err, rep.max_abs_err)
                                        : std::string(" (no TransformerBlock latency column: no error)"))
              << "\n";
    const char* parts[3] = {"PIM", "CXL", "accelerator"};
    for (int i = 0; i < 3; ++i)
      if (rep.part_mean[i] >= 0) std::cout << "  " << parts[i] << ": " << err_text(rep.part_mean[i], rep.part_max[i]) << "\n";
  });
}

int validate_attacc(const std::string& points, const std::string& presets, OutputTarget& target) {
  const validate::AttaccReport rep = validate::validate_attacc_csv(points, presets);
  return finish(target, rep.csv, [&rep] {
    std::cout << "validate attacc: " << rep.rows << " points"
              << (rep.mean_abs_err >= 0 ? ", " + err_text(rep.mean_abs_err, rep.max_abs_err)
                                        : std::string(" (no cycle column: no error)"))
              << "\n";
  });
}

}  // namespace

int cmd_validate(int argc, char** argv) {
  po::options_description desc(
      "usage: ahbm-sim validate attacc POINTS.csv --out RESULT.csv [--presets DIR]\n"
      "       ahbm-sim validate cent ROWS.csv --out RESULT.csv [--presets DIR]\n\n"
      "attacc: runs every row of POINTS.csv (columns L, nhead, dhead, dbyte, pim_type = BG | BA | BANK | BUFFER,\n"
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
  return args[0] == "cent" ? validate_cent(args[1], presets, target) : validate_attacc(args[1], presets, target);
}

}  // namespace ahbm::cli
