#pragma once
// Memory traces for `ahbm-sim hbm-bench --trace` and the DRAM command trace it writes for DRAMPower
// (docs/hbm.md, "Trace replay" and "Command trace for DRAMPower").
//   dramsys:   DRAMSys' STL trace, one request a line: "<cycle>: [(<length>)] read|write <hex address> [<hex data>]",
//              '#' starting a comment line; cycles of the trace player's clock, non-decreasing.
//   ramulator: Ramulator's memory trace, "<hex address> R|W" a line (no time: back to back); a line of
//              its CPU trace, "<bubbles> <read address> [<writeback address>]" (decimal), is a read and the
//              optional writeback's write, the bubble count ignored (there is no core model).
#include <cstdint>
#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "hw/hbm/dram_controller.h"

namespace ahbm::hbm {

struct MemTraceRequest {
  int line = 0;
  int64_t cycle = -1;  // the trace's time stamp (dramsys), -1 for none
  uint64_t addr = 0;   // first byte
  uint64_t bytes = 0;  // bytes asked for (> 0)
  bool write = false;
};

// The trace's requests in file order. `capacity`: addresses must lie below it (the bench's
// pseudo-channels); `burst_bytes`: a request's default length. Bad lines are InputErrors naming the
// file, the line number and its text.
std::vector<MemTraceRequest> parse_mem_trace(std::istream& in, const std::string& path, const std::string& format,
                                             uint64_t capacity, uint64_t burst_bytes);
std::vector<MemTraceRequest> read_mem_trace(const std::string& path, const std::string& format, uint64_t capacity,
                                            uint64_t burst_bytes);

// DRAMPower's command trace (DRAMPower 4, README "Command Traces"): "<cycle>,<command>,<bank>" a line,
// the cycle in tCK, commands of its MemCommand.h (ACT, PRE, RD, WR, REF, REFB); an all-bank REF
// names bank 0. `cmds`: one pseudo-channel's commands in issue order.
void write_drampower_commands(std::ostream& os, const std::vector<DramCommand>& cmds);
// The DRAMPower name of a command.
const char* drampower_name(DramCmd c);

}  // namespace ahbm::hbm
