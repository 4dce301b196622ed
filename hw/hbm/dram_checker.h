#pragma once
// An independent check of a pseudo-channel's command log against the JEDEC-style rules of
// DramTiming (the way DRAMSys' and Ramulator's checkers replay a trace): bank states (ACT only to
// a closed bank, RD/WR only to the open row, PRE only to an open bank, REF only with the banks
// it covers closed), every spacing rule (tRCD, tRP, tRAS, tRC, tCCD_L/S/R, tRRD_L/S, tFAW,
// tRTP, tWR, tRTW, tWTR_L/S, tRFC), one row and one column command per cycle, and no two data
// bursts on the bus at once.
#include <cstdint>
#include <string>
#include <vector>

#include "hw/hbm/dram_controller.h"
#include "hw/hbm/dram_spec.h"

namespace ahbm::hbm {

struct DramCheckResult {
  uint64_t violations = 0;
  std::vector<std::string> first;  // the first few, described
  bool ok() const { return violations == 0; }
};

DramCheckResult check_dram_commands(const DramSpec& spec, const std::vector<DramCommand>& log);

}  // namespace ahbm::hbm
