#include "hw/bench/mem_trace.h"

#include <cctype>
#include <fstream>
#include <sstream>

#include "hw/common/base/error.h"
#include "hw/common/base/input_file.h"

namespace ahbm::hbm {

namespace {

constexpr uint64_t kMaxRequestBytes = 1 << 20;  // one request: at most 1 MiB

// `s` as an unsigned integer in `base` (16: an optional 0x prefix), all of it; false otherwise.
bool unsigned_of(std::string s, int base, uint64_t& v) {
  if (base == 16 && s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.erase(0, 2);
  if (s.empty() || s.size() > (base == 16 ? 16u : 19u)) return false;
  for (char c : s)
    if (!(base == 16 ? std::isxdigit(static_cast<unsigned char>(c)) : std::isdigit(static_cast<unsigned char>(c))))
      return false;
  v = std::stoull(s, nullptr, base);
  return true;
}

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> w;
  for (std::string t; in >> t;) w.push_back(t);
  return w;
}

}  // namespace

std::vector<MemTraceRequest> parse_mem_trace(std::istream& in, const std::string& path, const std::string& format,
                                             uint64_t capacity, uint64_t burst_bytes) {
  if (format != "dramsys" && format != "ramulator")
    throw InputError("--trace-format " + format + ": allowed dramsys, ramulator");
  std::vector<MemTraceRequest> out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    while (!line.empty() && (line.back() == '\r' || std::isspace(static_cast<unsigned char>(line.back()))))
      line.pop_back();
    const std::vector<std::string> w = words(line);
    if (w.empty() || w[0][0] == '#') continue;
    const auto bad = [&](const std::string& why) {
      throw InputError(path + ": line " + std::to_string(n) + ": \"" + printable(line) + "\": " + why);
    };
    const auto address = [&](const std::string& t, int base) {
      uint64_t a = 0;
      if (!unsigned_of(t, base, a))
        bad("address \"" + printable(t) + "\" is not a " + (base == 16 ? "hexadecimal" : "decimal") + " number");
      if (a >= capacity)
        bad("address " + t + " is beyond the pseudo-channels' " + std::to_string(capacity) + " bytes (allowed: [0, " +
            std::to_string(capacity - 1) + "])");
      return a;
    };
    MemTraceRequest r;
    r.line = n;
    r.bytes = burst_bytes;
    if (format == "dramsys") {
      const size_t colon = line.find(':');
      if (colon == std::string::npos) bad("expected \"<cycle>: [(<length>)] read|write <hex address> [<hex data>]\"");
      uint64_t cycle = 0;
      const std::vector<std::string> c = words(line.substr(0, colon));
      if (c.size() != 1 || !unsigned_of(c[0], 10, cycle) || cycle > (uint64_t(1) << 50))
        bad("the cycle before ':' must be an integer in [0, 2^50]");
      r.cycle = int64_t(cycle);
      if (!out.empty() && out.back().cycle > r.cycle)
        bad("cycle " + std::to_string(cycle) + " is earlier than the line before's " + std::to_string(out.back().cycle) +
            " (an STL trace is in time order)");
      std::vector<std::string> t = words(line.substr(colon + 1));
      size_t i = 0;
      if (i < t.size() && t[i].front() == '(') {
        uint64_t len = 0;
        if (t[i].size() < 3 || t[i].back() != ')' || !unsigned_of(t[i].substr(1, t[i].size() - 2), 10, len) || len == 0 ||
            len > kMaxRequestBytes)
          bad("length \"" + printable(t[i]) + "\" must be (N) with N in [1, " + std::to_string(kMaxRequestBytes) + "]");
        r.bytes = len;
        ++i;
      }
      if (i >= t.size() || (t[i] != "read" && t[i] != "write")) bad("expected read or write after the cycle");
      r.write = t[i] == "write";
      if (i + 1 >= t.size()) bad("no address");
      if (t.size() > i + 3) bad("unexpected text after the data field");
      r.addr = address(t[i + 1], 16);
    } else if (w.size() == 2 && (w[1] == "R" || w[1] == "W")) {
      r.write = w[1] == "W";
      r.addr = address(w[0], 16);
    } else if (w.size() == 2 || w.size() == 3) {
      uint64_t bubbles = 0;
      if (!unsigned_of(w[0], 10, bubbles))
        bad("expected \"<hex address> R|W\" or \"<bubbles> <read address> [<writeback address>]\"");
      r.addr = address(w[1], 10);
      if (w.size() == 3) {
        out.push_back(r);
        r.write = true;
        r.addr = address(w[2], 10);
      }
    } else {
      bad("expected \"<hex address> R|W\" or \"<bubbles> <read address> [<writeback address>]\"");
    }
    if (r.addr + r.bytes > capacity)
      bad("the request's bytes [" + std::to_string(r.addr) + ", " + std::to_string(r.addr + r.bytes) +
          ") run past the pseudo-channels' " + std::to_string(capacity) + " bytes");
    out.push_back(r);
  }
  if (out.empty()) throw InputError(path + ": no requests (every line empty or a comment)");
  return out;
}

std::vector<MemTraceRequest> read_mem_trace(const std::string& path, const std::string& format, uint64_t capacity,
                                            uint64_t burst_bytes) {
  check_input_file(path, "a memory trace");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the memory trace");
  return parse_mem_trace(in, path, format, capacity, burst_bytes);
}

const char* drampower_name(DramCmd c) {
  switch (c) {
    case DramCmd::act: return "ACT";
    case DramCmd::pre: return "PRE";
    case DramCmd::rd: return "RD";
    case DramCmd::wr: return "WR";
    case DramCmd::ref_ab: return "REF";
    case DramCmd::ref_pb: return "REFB";
  }
  return "NOP";
}

void write_drampower_commands(std::ostream& os, const std::vector<DramCommand>& cmds) {
  for (const DramCommand& c : cmds)
    os << c.cycle << ',' << drampower_name(c.cmd) << ',' << (c.cmd == DramCmd::ref_ab ? 0 : c.bank) << '\n';
}

}  // namespace ahbm::hbm
