// One command run with its errors mapped to exit codes: shared by the CLI (main.cpp) and the
// Python module (tools/python), so both report a failure with the same code and message.
#include <iostream>
#include <new>
#include <string>

#include "hw/common/base/error.h"
#include "runtime/io/output_dir.h"
#include "runtime/io/version.h"
#include "tools/cli/commands.h"

namespace ahbm::cli {

int run_command(int argc, char** argv, const CommandContext& ctx, std::ostream& err) {
  const std::string cmd = argc > 0 ? argv[0] : "";
  if (cmd == "--version" || cmd == "-V") {  // here, not in main(): the Python module's cli() runs it too
    if (argc > 1) {
      err << "ahbm-sim " << cmd << ": error: takes no arguments (got \"" << argv[1] << "\")\n";
      return 2;
    }
    // The same two strings summary.json records under "simulator".
    std::cout << "ahbm-sim " << simulator_version() << " (commit " << simulator_commit() << ")\n";
    try {
      check_stdout();
    } catch (const OutputError& e) {
      err << "ahbm-sim: error: " << e.what() << "\n";
      return 1;
    }
    return 0;
  }
  for (const auto& c : commands()) {
    if (c.name != cmd) continue;
    try {
      const int code = c.run(argc, argv, ctx);
      check_stdout();  // what a command printed must have arrived (a full disk, /dev/full)
      return code;
    } catch (const Interrupted&) {
      throw;
    } catch (const OutputError& e) {
      err << "ahbm-sim " << cmd << ": error: " << e.what() << "\n";
      return 1;
    } catch (const SimStall& e) {
      err << "ahbm-sim " << cmd << ": " << e.what() << "\n";
      return 4;
    } catch (const NumericFault& e) {
      err << "ahbm-sim " << cmd << ": " << e.what() << "\n";
      return 3;
    } catch (const InputError& e) {
      err << "ahbm-sim " << cmd << ": error: " << e.what() << "\n";
      return 2;
    } catch (const UsageError& e) {
      err << "ahbm-sim " << cmd << ": error: " << e.what() << "\n(see 'ahbm-sim " << cmd << " --help')\n";
      return 2;
    } catch (const std::bad_alloc&) {
      // The preflight's estimate (runtime/run/preflight.h) was passed, yet memory ran out.
      err << "ahbm-sim " << cmd << ": error: out of memory (an allocation failed; check ulimit -v/-d and "
             "free memory)\n";
      return 1;
    } catch (const std::exception& e) {
      err << "ahbm-sim " << cmd << ": internal error: " << e.what() << "\n";
      return 1;
    }
  }
  err << "ahbm-sim: unknown command \"" << cmd << "\"\n";
  return 2;
}

}  // namespace ahbm::cli
